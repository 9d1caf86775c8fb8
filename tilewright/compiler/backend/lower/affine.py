"""Affine index analysis: which kernel locals stay symbolic expressions (issue 21).

TT-Lang programs compute slice bounds in locals: ``start = (node_row * per_node + i) * T``
and ``end = (row + 1) * T``.  Stored into C++ locals, ``end - start`` is the difference
of two unrelated variables and the slice's extent is unknown; kept as the expressions
they are -- a constant plus a sum of coefficient times symbol, the symbols being loop
variables, node coordinates, per-node runtime args (grid size, captured ints) --
the extent folds to the constant ``T`` (``scalars.linear`` / ``static_difference``) and
the copy compiles, with the interpreter's bounds checks emitted where they cannot be
decided at compile time (``dataflow.tensor_slice``, the rule in ``lang/rules/copy.py``).

A local assigned once in its scope is kept symbolic when its expression is affine in
*stable* symbols only: loop variables of enclosing ``for`` loops that the body never
reassigns, node coordinates and runtime args, combined by the checked ``+``, ``-``,
``*`` and negation (which cannot fail short of int64 overflow).  Anything else (a
mutated local, a division, a semaphore read) is stored in a C++ local as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tilewright.compiler.backend.lower import scalars as S
from tilewright.compiler.backend.lower.values import Scalar
from tilewright.kir.ir import Arg, BinOp, Cast, Const, Expr, Intrinsic, UnOp, Var

__all__ = ["is_affine", "stable_loop", "forget"]

# Intrinsics whose value is fixed for the whole kernel run.
_FIXED_INTRINSICS = frozenset({"logical_x", "logical_y"})
_PURE_OPS = frozenset({"add_checked", "sub_checked", "mul_checked", "neg_checked"})


def _stable(lw) -> set[str]:
    return lw.extra.setdefault("stable_vars", set())


@contextmanager
def stable_loop(lw, var: Var, reassigned: bool) -> Iterator[None]:
    """Context for lowering a ``for`` body: its variable is a stable symbol unless the
    body assigns it."""
    names = _stable(lw)
    added = not reassigned and var.name not in names
    if added:
        names.add(var.name)
    try:
        yield
    finally:
        if added:
            names.discard(var.name)


def _pure(lw, e: Expr) -> bool:
    if isinstance(e, (Const, Arg)):
        return True
    if isinstance(e, Var):
        return e.name in _stable(lw)
    if isinstance(e, Intrinsic):
        return e.name in _FIXED_INTRINSICS and not e.args
    if isinstance(e, Cast):
        return e.a.ty.is_int and e.ty.is_int and _pure(lw, e.a)
    if isinstance(e, BinOp):
        return e.op in _PURE_OPS and _pure(lw, e.a) and _pure(lw, e.b)
    if isinstance(e, UnOp):
        return e.op in _PURE_OPS and _pure(lw, e.a)
    return False


def is_affine(lw, e: Expr) -> bool:
    """``e`` is an integer expression affine in stable symbols: it may stand for a local."""
    return e.ty.is_int and not isinstance(e, Const) and S.linear(e) is not None and _pure(lw, e)


def _mentions(e: Expr, var: Var) -> bool:
    if isinstance(e, Var):
        return e.name == var.name
    if isinstance(e, (BinOp,)):
        return _mentions(e.a, var) or _mentions(e.b, var)
    if isinstance(e, (UnOp, Cast)):
        return _mentions(e.a, var)
    if isinstance(e, Intrinsic):
        return any(_mentions(a, var) for a in e.args)
    return False


def forget(env: dict, var: Var) -> None:
    """After the loop of ``var``, drop the symbolic locals that name it: Python keeps the
    last iteration's value there (or none), so reading one is not compilable rather than
    wrong."""
    for name, value in list(env.items()):
        if isinstance(value, Scalar) and not isinstance(value.expr, Var):
            if _mentions(value.expr, var):
                del env[name]
