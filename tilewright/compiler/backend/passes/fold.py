"""Constant folding: an operator, cast or negation of constants becomes its value.

The value is the IR interpreter's (``kir.interp_scalar``: the C++ semantics of the
emitted code -- integer wrap-around, ``float`` rounding, ``static_cast`` conversions),
computed by :func:`fold_expr` through one call of its evaluator, so a folded kernel means
what the unfolded one means.  The lowering folds with the same function as it builds
expressions (``lower/scalars.py``, the tile-index arithmetic of ``passes/dst.py``): a
Python int of kernel code is an ``int64_t``, so it folds with the operands in their IR
types (``as_ir_types``), where the pass folds each node exactly as the emitted C++
computes it.  An expression the evaluator rejects (integer division by zero, which traps,
``floordiv`` of floats, which has no C++ form) stays as it is.
"""

from __future__ import annotations

from typing import Any

from tilewright.compiler.backend.passes.walk import map_op_exprs, on_bodies, rewrite_ops
from tilewright.errors import TilewrightError
from tilewright.kir.interp_scalar import compile_expr, convert
from tilewright.kir.ir import BinOp, Cast, Const, Kernel, Op, UnOp

__all__ = ["fold_expr", "fold"]


def _evaluate(e: BinOp | UnOp | Cast) -> Const | None:
    """The value of a constant expression (None if the evaluator cannot compute it)."""
    try:
        fn, ctype = compile_expr(e)  # the interpreter's evaluator: the one call site
        value = fn(None)  # constants read nothing of the environment
    except TilewrightError:
        return None
    return Const(convert(value, e.ty.value), e.ty)


def _typed(e: Const) -> Cast:
    """A constant operand in its IR type (an ``int64_t`` literal for an ``i64`` one)."""
    return Cast(e, e.ty)


def fold_expr(e: Any, *, as_ir_types: bool = False) -> Any:
    """``e`` with its top node folded if every operand is a constant (one level: callers
    that build bottom-up fold as they go; :func:`fold` folds whole trees)."""
    if isinstance(e, BinOp) and isinstance(e.a, Const) and isinstance(e.b, Const):
        target = BinOp(e.op, _typed(e.a), _typed(e.b), e.ty) if as_ir_types else e
        return _evaluate(target) or e
    if isinstance(e, (UnOp, Cast)) and isinstance(e.a, Const):
        if isinstance(e, UnOp) and as_ir_types:
            return _evaluate(UnOp(e.op, _typed(e.a), e.ty)) or e
        return _evaluate(e) or e
    return e


def _fold_op(op: Op) -> tuple[Op, ...]:
    # map_op_exprs applies fold_expr bottom-up: a whole constant tree folds in one walk
    return (map_op_exprs(op, fold_expr),)


def fold(kernel: Kernel) -> Kernel:
    """Every constant subexpression of every op folded (the kernel and its functions)."""
    return on_bodies(kernel, lambda ops: rewrite_ops(ops, _fold_op))
