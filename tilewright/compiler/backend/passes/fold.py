"""Constant folding: an operator, cast or negation of constants becomes its value.

The value is the IR interpreter's (:func:`tilewright.kir.interp_scalar.fold`: the one
scalar table, with the C++ semantics of the emitted code -- integer wrap-around,
``float`` rounding, ``static_cast`` conversions), so a folded kernel means what the
unfolded one means.  The lowering folds with the same evaluator as it builds expressions
(``lower/scalars.py``, ``lower/analysis.py``, the tile-index arithmetic of
``passes/tiles.py``): a Python int of kernel code is an ``i64`` constant, an
``int64_t``, so past 64 bits it wraps as the kernel would.  An expression the evaluator
rejects (an integer division by zero, which traps at run time with its own message)
stays as it is.
"""

from __future__ import annotations

from typing import Any

from tilewright.compiler.backend.passes.walk import map_op_exprs, on_bodies, rewrite_ops
from tilewright.errors import TilewrightError
from tilewright.kir import interp_scalar
from tilewright.kir.ir import BinOp, Cast, Const, Kernel, Op, UnOp

__all__ = ["fold_expr", "fold"]


def fold_expr(e: Any) -> Any:
    """``e`` with its top node folded if every operand is a constant (one level: callers
    that build bottom-up fold as they go; :func:`fold` folds whole trees)."""
    if isinstance(e, BinOp):
        constant = isinstance(e.a, Const) and isinstance(e.b, Const)
    else:
        constant = isinstance(e, (UnOp, Cast)) and isinstance(e.a, Const)
    if not constant:
        return e
    try:
        return interp_scalar.fold(e)
    except TilewrightError:  # no value at compile time: the kernel reports it when run
        return e


def _fold_op(op: Op) -> tuple[Op, ...]:
    # map_op_exprs applies fold_expr bottom-up: a whole constant tree folds in one walk
    return (map_op_exprs(op, fold_expr),)


def fold(kernel: Kernel) -> Kernel:
    """Every constant subexpression of every op folded (the kernel and its functions)."""
    return on_bodies(kernel, lambda ops: rewrite_ops(ops, _fold_op))
