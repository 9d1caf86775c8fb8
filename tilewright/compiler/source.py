"""The user's source: parse a function once, with line numbers rebased to its file.

``FunctionSource.of(fn)`` reads the function's source text (``inspect``), dedents it,
parses it and shifts every node's line and column so that ``error_at(node, ...)``
points at the real file position.  It also maps the line of each simple
assignment to its target name, which names DFBs and other setup objects in
diagnostics ("DFB 'a_dfb'") without inspecting frames.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import textwrap
from dataclasses import dataclass, field

from tilewright.errors import InterfaceError, SourceLoc, TTLangCompileError

__all__ = ["FunctionSource", "decorator_name", "call_name", "source_of", "same_file"]


@dataclass(slots=True)
class FunctionSource:
    """A function's AST with real file positions."""

    fn: object
    file: str
    tree: ast.FunctionDef
    assignment_names: dict[int, str] = field(default_factory=dict)

    @classmethod
    def of(cls, fn) -> FunctionSource:
        try:
            lines, start = inspect.getsourcelines(fn)
            file = inspect.getsourcefile(fn) or inspect.getfile(fn)
        except (OSError, TypeError) as exc:
            raise InterfaceError(
                f"cannot read the source of {getattr(fn, '__qualname__', fn)!r}: operations must be "
                "defined in a file (the compiler reads their source)"
            ) from exc
        text = "".join(lines)
        indent = len(lines[0]) - len(lines[0].lstrip())
        module = ast.parse(textwrap.dedent(text))
        shifts = (
            ("lineno", start - 1),
            ("end_lineno", start - 1),
            ("col_offset", indent),
            ("end_col_offset", indent),
        )
        for node in ast.walk(module):  # every node kind with a position (stmt, expr, arg, ...)
            if hasattr(node, "lineno"):
                for attr, shift in shifts:
                    value = getattr(node, attr, None)
                    if value is not None:
                        setattr(node, attr, value + shift)
        func = next(
            (n for n in module.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None
        )
        if func is None:
            raise InterfaceError(f"{fn!r} is not a plain function definition")
        if isinstance(func, ast.AsyncFunctionDef):  # calling it would only make a coroutine
            raise InterfaceError(
                f"'{func.name}' is an async function; an operation is a plain function (def)",
                loc=SourceLoc(file, func.lineno, func.col_offset),
            )
        src = cls(fn, file, func)
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    src.assignment_names.setdefault(node.lineno, target.id)
        return src

    def loc(self, node: ast.AST) -> SourceLoc:
        return SourceLoc(
            self.file,
            getattr(node, "lineno", self.tree.lineno),
            getattr(node, "col_offset", None),
            getattr(node, "end_col_offset", None)
            if getattr(node, "end_lineno", None) == getattr(node, "lineno", None)
            else None,
        )

    def error_at(
        self, node: ast.AST, message: str, *, cls=TTLangCompileError, rule=None, hint=None
    ):
        """An error of type ``cls`` located at ``node`` (raise it)."""
        return cls(message, loc=self.loc(node), rule=rule, hint=hint)

    def name_at_line(self, line: int) -> str | None:
        return self.assignment_names.get(line)


def decorator_name(dec: ast.expr) -> str | None:
    """The spelled name of a decorator: ``ttl.compute()`` / ``compute`` → ``compute``."""
    if isinstance(dec, ast.Call):
        dec = dec.func
    if isinstance(dec, ast.Attribute):
        return dec.attr
    if isinstance(dec, ast.Name):
        return dec.id
    return None


def call_name(node: ast.expr) -> tuple[str | None, str | None]:
    """(receiver, name) of a call target: ``ttl.copy`` → ("ttl", "copy"), ``f`` → (None, "f")."""
    if isinstance(node, ast.Attribute):
        base = node.value
        if isinstance(base, ast.Name):
            return base.id, node.attr
        if isinstance(base, ast.Attribute):
            inner = call_name(base)
            if inner[1] is not None:
                return f"{inner[0]}.{inner[1]}" if inner[0] else inner[1], node.attr
        return None, node.attr
    if isinstance(node, ast.Name):
        return None, node.id
    return None, None


_SOURCES: dict[int, tuple[object, FunctionSource]] = {}


def source_of(fn) -> FunctionSource:
    """``fn``'s parsed source, once per code object (the helpers the lowering inlines, and
    the call signature's view of them); ``TTLangCompileError`` if unreadable."""
    code = fn.__code__
    got = _SOURCES.get(id(code))
    if got is None or got[0] is not code:
        if len(_SOURCES) > 1024:
            _SOURCES.clear()
        got = _SOURCES[id(code)] = (code, FunctionSource.of(fn))  # the code stays alive
    return got[1]


@functools.lru_cache(maxsize=256)
def same_file(a: str, b: str) -> bool:
    """Two code file names are one file (a helper of the operation's file)."""
    return a == b or os.path.realpath(a) == os.path.realpath(b)
