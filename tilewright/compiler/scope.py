"""Static name resolution: what a name in an operation's source means, without running it.

``Scope`` answers "what does this name mean in the operation's frozen scope":
values injected by composition or lifting, the function's closure cells, its
module globals and the builtins, in that order.  Nothing is evaluated; attribute
paths go through ``inspect.getattr_static`` (:func:`static_attribute`).  It is the
one resolver of the compiler: the splitter and composition use it directly, the
external-call front end (``extern.scope.Resolver``) puts the names bound inside the
body in front of it.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import sys
from collections.abc import Container

__all__ = ["MISSING", "Scope", "is_ttl_module", "static_attribute", "ttl_module"]


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING = _Missing()


def ttl_module():
    """The language module (looked up, never imported: the compiler sits below ``ttl``)."""
    return sys.modules.get("tilewright.ttl")


def is_ttl_module(value) -> bool:
    """``tilewright.ttl`` or one of its namespaces (``ttl.math``, ``ttl.block``)."""
    name = getattr(value, "__name__", None)
    return (
        inspect.ismodule(value)
        and isinstance(name, str)
        and (name == "tilewright.ttl" or name.startswith("tilewright.ttl."))
    )


class Scope:
    """The names an operation body can see, without evaluating anything."""

    def __init__(self, fn, injected: dict[str, object] | None = None) -> None:
        self.fn = fn
        self.injected = dict(injected or {})
        self.closure: dict[str, object] = {}
        code = getattr(fn, "__code__", None)
        for name, cell in zip(
            getattr(code, "co_freevars", ()), getattr(fn, "__closure__", None) or ()
        ):
            try:
                self.closure[name] = cell.cell_contents
            except ValueError:  # an empty cell (recursive definition being bound)
                continue
        self.globals = getattr(fn, "__globals__", {}) or {}

    def lookup(self, name: str):
        """The value ``name`` resolves to, or ``MISSING``."""
        for table in (self.injected, self.closure, self.globals):
            if name in table:
                return table[name]
        return getattr(builtins, name, MISSING)

    def where(self, name: str) -> str | None:
        """ "injected" / "closure" / "global" / "builtin", or None when unresolved."""
        if name in self.injected:
            return "injected"
        if name in self.closure:
            return "closure"
        if name in self.globals:
            return "global"
        if hasattr(builtins, name):
            return "builtin"
        return None

    def resolve(self, node: ast.AST, local: Container[str] = ()) -> object:
        """Statically resolve a Name / Attribute path (``ttl.KernelKind.COMPUTE``).

        Names in ``local`` are bound inside the body (run-time values): MISSING.
        """
        if isinstance(node, ast.Name):
            if node.id in local:
                return MISSING
            value = self.lookup(node.id)
            if value is MISSING and node.id == "ttl":
                return ttl_module() or MISSING
            return value
        if isinstance(node, ast.Attribute):
            owner = self.resolve(node.value, local)
            if owner is MISSING:
                return MISSING
            return static_attribute(owner, node.attr)
        return MISSING


def static_attribute(owner: object, name: str) -> object:
    """``owner.name`` without running code (no properties, no ``__getattr__``); MISSING if absent.

    A static or class method resolves to its function, as ``owner.name`` would give it.
    """
    try:
        value = inspect.getattr_static(owner, name)
    except AttributeError:
        return MISSING
    if isinstance(value, (staticmethod, classmethod)):
        return value.__func__
    return value
