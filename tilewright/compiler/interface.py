"""Operation interface rules (reference A.2), checked once at decoration.

Parameters are the TT-NN tensors of each call: no defaults, no ``*args`` /
``**kwargs``, no keyword-only parameters; the body must not ``return`` (except the
legacy ``return ttl.Program(...)(...)``, reference A.12).  Nested
functions decorated ``compute`` / ``datamovement`` (matched by the decorator's
spelling) make the operation a multi-kernel one; each such kernel function takes
no arguments.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from tilewright.compiler.source import FunctionSource, call_name, decorator_name
from tilewright.errors import InterfaceError, KernelError

__all__ = ["Interface", "check_interface", "KERNEL_DECORATORS", "kernel_functions"]

KERNEL_DECORATORS = {"compute": "compute", "datamovement": "data_movement"}


@dataclass(frozen=True, slots=True)
class Interface:
    params: tuple[str, ...]
    annotations: dict[str, ast.expr | None]  # parameter -> its annotation
    kernel_defs: tuple[ast.FunctionDef, ...]

    @property
    def multi_kernel(self) -> bool:
        return bool(self.kernel_defs)


def _body_nodes(tree: ast.FunctionDef) -> Iterator[ast.AST]:
    """Every node of the operation body, not descending into nested functions or classes."""
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    stack: list[ast.AST] = [n for n in tree.body if not isinstance(n, scopes)]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, scopes))


def _legacy_program_return(node: ast.Return) -> bool:
    """``return ttl.Program(c, dm0, dm1)(a, b, out)`` (before spec 0.2; reference A.12)."""
    value = node.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Call):
        value = value.func
    return isinstance(value, ast.Call) and call_name(value.func)[1] == "Program"


def kernel_functions(tree: ast.FunctionDef) -> list[ast.FunctionDef]:
    """Nested function definitions decorated compute / datamovement (by spelling)."""
    out: list[ast.FunctionDef] = []
    for node in ast.walk(tree):
        if node is tree or not isinstance(node, ast.FunctionDef):
            continue
        if any(decorator_name(d) in KERNEL_DECORATORS for d in node.decorator_list):
            out.append(node)
    return out


def _own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's own body (not of functions nested in it)."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _check_plain_kernels(src: FunctionSource, tree: ast.FunctionDef) -> None:
    """A kernel function that is ``async`` or a generator would only create an object
    when called: its body would never run (the decorators check it again at run time)."""
    for node in ast.walk(tree):
        if node is tree or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if not any(decorator_name(d) in KERNEL_DECORATORS for d in node.decorator_list):
            continue
        kind = None
        if isinstance(node, ast.AsyncFunctionDef):
            kind = "an async function"
        elif any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(node)):
            kind = "a generator function"
        if kind is not None:
            raise src.error_at(
                node,
                f"kernel function '{node.name}' is {kind}: calling it only creates an object, "
                "so its body would never run",
                cls=KernelError,
                rule="kernel-function",
                hint="write kernels as plain functions (no yield, no async def)",
            )


def check_interface(src: FunctionSource, op_name: str) -> Interface:
    """Validate the operation's signature and body shape; return its interface."""
    tree = src.tree
    args = tree.args
    if args.vararg is not None:
        raise src.error_at(
            args.vararg,
            f"operation '{op_name}' takes *{args.vararg.arg}: operation parameters are the TT-NN "
            "tensors of each call; *args is not allowed",
            cls=InterfaceError,
        )
    if args.kwarg is not None:
        raise src.error_at(
            args.kwarg,
            f"operation '{op_name}' takes **{args.kwarg.arg}: **kwargs is not allowed; "
            "configuration is captured at compile time",
            cls=InterfaceError,
        )
    if args.kwonlyargs:
        raise src.error_at(
            args.kwonlyargs[0],
            f"operation parameter '{args.kwonlyargs[0].arg}' is keyword-only; operation parameters "
            "are positional TT-NN tensors",
            cls=InterfaceError,
        )
    positional = [*args.posonlyargs, *args.args]
    if args.defaults:
        first = positional[len(positional) - len(args.defaults)]
        raise src.error_at(
            first,
            f"operation parameter '{first.arg}' has a default value; operation parameters are the "
            "TT-NN tensors passed at each call (no defaults)",
            cls=InterfaceError,
        )
    for node in _body_nodes(tree):
        if isinstance(node, ast.Return) and not _legacy_program_return(node):
            raise src.error_at(
                node,
                f"operation '{op_name}' returns: an operation body must not return; write results "
                "into an output tensor argument",
                cls=InterfaceError,
            )
    _check_plain_kernels(src, tree)
    kernels = kernel_functions(tree)
    for k in kernels:
        a = k.args
        if a.args or a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg:
            raise src.error_at(
                k, f"kernel function '{k.name}' must take no arguments", cls=InterfaceError
            )
    annotations = {a.arg: a.annotation for a in positional}
    return Interface(tuple(a.arg for a in positional), annotations, tuple(kernels))
