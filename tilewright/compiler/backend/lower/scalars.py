"""Scalar code of kernels: Python arithmetic on ints, floats and bools as IR expressions.

Python semantics are kept: ints are ``i64`` with floor ``//`` and ``%``, ``/`` gives
a float, ``and`` / ``or`` on bools, comparisons give bools.  Integer ``+``, ``-``, ``*``
and negation are the table's *checked* operators (``add_checked`` ...): a result beyond
int64 is an error at the line on every engine (``OverflowError`` when it is folded here,
which the lowering reports as not compilable), never a wrap-around a bounds check would
then accept.  Constant operands fold
at compile time through the IR interpreter's evaluator (:func:`tilewright.kir.interp_scalar.fold`:
the one scalar table, so a folded value is what the kernel computes -- ``i64`` wraps,
``(1 << 62) * 4`` is 0 on every engine), and
:func:`linear` views an integer expression as ``sum(coeff * var) + const`` so that
``(r0 + 2) - r0`` is known to be 2 (slice extents, reference D.5).
"""

from __future__ import annotations

from tilewright.errors import KernelError
from tilewright.kir.interp_scalar import fold
from tilewright.kir.ir import (
    Arg,
    BinOp,
    Cast,
    Const,
    Expr,
    Intrinsic,
    Ty,
    UnOp,
    Var,
)
from tilewright.kir.scalar import OPERATORS, division_by_zero

__all__ = [
    "binary",
    "unary",
    "compare",
    "to_type",
    "linear",
    "is_const",
    "const_value",
    "fold",
    "int_const",
]

_CMP = {"eq", "ne", "lt", "le", "gt", "ge"}
_BITS = {"shl", "shr", "bitand", "bitor", "bitxor"}
_CHECKED = {"add": "add_checked", "sub": "sub_checked", "mul": "mul_checked", "neg": "neg_checked"}
_I64 = (-(1 << 63), (1 << 63) - 1)


def int_const(v: int) -> Const:
    """A Python int as an ``i64`` constant; ``OverflowError`` when it does not fit."""
    if not _I64[0] <= v <= _I64[1]:
        raise OverflowError(
            f"the integer {v} does not fit in int64, the integer type of compiled kernels"
        )
    return Const(v, Ty.I64)


def _fold(e: Expr) -> Const:
    """:func:`fold`, with a checked operator's overflow as ``OverflowError``."""
    try:
        return fold(e)
    except KernelError as exc:
        if exc.rule != "kir-integer-overflow":
            raise
        raise OverflowError(exc.message) from None


def expr_ty(e: Expr) -> Ty:
    return e.ty


def is_const(e: Expr) -> bool:
    return isinstance(e, Const)


def const_value(e: Expr) -> int | float | bool:
    assert isinstance(e, Const)
    return e.value


def to_type(e: Expr, ty: Ty) -> Expr:
    """``e`` as ``ty`` (folded for constants, a cast otherwise)."""
    if e.ty is ty:
        return e
    if isinstance(e, Const):
        return fold(Cast(e, ty))
    return Cast(e, ty)


def _arith_type(a: Ty, b: Ty, op: str) -> Ty:
    if op == "truediv" or a.is_float or b.is_float:
        return Ty.F64
    return Ty.I64


def binary(op: str, a: Expr, b: Expr) -> Expr:
    """``a <op> b`` with Python's typing (bool and u32 operands act as ints; the bit
    operators take ints only: a TypeError for floats, as Python raises)."""
    if op in _CMP:
        return compare(op, a, b)
    ty = _arith_type(a.ty, b.ty, op)
    if op in _BITS and ty.is_float:
        raise TypeError(op)
    a, b = to_type(a, ty), to_type(b, ty)
    if ty is Ty.I64:
        op = _CHECKED.get(op, op)
    if op == "truediv":  # Python raises for a zero divisor; C++ would give inf
        op = "truediv_checked"
    if isinstance(a, Const) and isinstance(b, Const):
        if op in ("floordiv", "mod", "truediv_checked") and b.value == 0:
            what = {"floordiv": "floor division", "mod": "modulo"}.get(op, "division")
            raise ZeroDivisionError(division_by_zero(what).message)
        if op in ("shl", "shr") and b.value < 0:
            raise ValueError("negative shift count")
        return _fold(BinOp(op, a, b, ty))
    base = op.removesuffix("_checked")
    if base in ("add", "sub") and isinstance(b, Const) and b.value == 0:
        return a
    if base == "add" and isinstance(a, Const) and a.value == 0:
        return b
    if base == "mul" and isinstance(b, Const) and b.value == 1:
        return a
    if base == "mul" and isinstance(a, Const) and a.value == 1:
        return b
    return BinOp(op, a, b, ty)


def compare(op: str, a: Expr, b: Expr) -> Expr:
    ty = _arith_type(a.ty, b.ty, "add")
    a, b = to_type(a, ty), to_type(b, ty)
    if isinstance(a, Const) and isinstance(b, Const):
        return fold(BinOp(op, a, b, Ty.BOOL))
    if ty is Ty.I64:
        diff = static_difference(a, b)  # (r0) < (r0 + 2) is always true
        if diff is not None:
            return Const(bool(OPERATORS[op].evaluate(diff, 0)), Ty.BOOL)
        # an unsigned value widened to i64 is never negative: 0 <= u is always true
        if isinstance(a, Const) and a.value <= 0 and _nonneg(b) and op in ("le", "lt"):
            if op == "le" or a.value < 0:
                return Const(True, Ty.BOOL)
        if isinstance(b, Const) and b.value <= 0 and _nonneg(a) and op in ("ge", "gt"):
            if op == "ge" or b.value < 0:
                return Const(True, Ty.BOOL)
    return BinOp(op, a, b, Ty.BOOL)


def _nonneg(e: Expr) -> bool:
    return isinstance(e, Cast) and e.a.ty in (Ty.U32, Ty.U64)


def logical(op: str, a: Expr, b: Expr) -> Expr:
    """``a and b`` / ``a or b`` on truth values."""
    a, b = truth(a), truth(b)
    if isinstance(a, Const):
        if op == "and":
            return b if a.value else a
        return a if a.value else b
    if isinstance(b, Const):
        if op == "and":
            return a if b.value else b
        return b if b.value else a
    return BinOp(op, a, b, Ty.BOOL)


def truth(e: Expr) -> Expr:
    """``bool(e)``."""
    if e.ty is Ty.BOOL:
        return e
    return compare("ne", e, Const(0, e.ty))


def unary(op: str, a: Expr) -> Expr:
    """``-a`` (``neg``), ``+a`` (``pos``) or ``not a``."""
    if op == "not":
        a = truth(a)
        if isinstance(a, Const):
            return fold(UnOp("not", a, Ty.BOOL))
        return UnOp("not", a, Ty.BOOL)
    if op == "pos":
        return to_type(a, Ty.I64) if a.ty in (Ty.BOOL, Ty.U32) else a
    ty = Ty.F64 if a.ty.is_float else Ty.I64
    a = to_type(a, ty)
    name = "neg_checked" if ty is Ty.I64 else "neg"
    if isinstance(a, Const):
        return _fold(UnOp(name, a, ty))
    return UnOp(name, a, ty)


def linear(e: Expr) -> tuple[dict[object, int], int] | None:
    """``e`` as ``({term: coeff}, const)`` if it is a linear integer expression, else None.

    Terms are variables, arguments, intrinsics and casts of them (compared by value).
    Only the checked operators are seen through: their results are exact (or the kernel
    stops), so ``(r0 + 2) - r0`` is 2; a wrapping ``add`` is a term of its own, because at
    the ends of int64 it is not."""
    if isinstance(e, Const):
        if e.ty.is_int or e.ty is Ty.BOOL:
            return {}, int(e.value)
        return None
    if isinstance(e, (Var, Arg, Intrinsic)):
        return {e: 1}, 0
    if isinstance(e, Cast):
        return {e: 1}, 0
    if isinstance(e, BinOp) and e.op in ("add_checked", "sub_checked"):
        a, b = linear(e.a), linear(e.b)
        if a is None or b is None:
            return None
        sign = 1 if e.op == "add_checked" else -1
        terms = dict(a[0])
        for k, v in b[0].items():
            terms[k] = terms.get(k, 0) + sign * v
        return {k: v for k, v in terms.items() if v}, a[1] + sign * b[1]
    if isinstance(e, BinOp) and e.op == "mul_checked":
        a, b = linear(e.a), linear(e.b)
        if a is None or b is None:
            return None
        if not a[0]:
            a, b = b, a
        if b[0]:
            return {e: 1}, 0
        k = b[1]
        return {t: c * k for t, c in a[0].items() if c * k}, a[1] * k
    if isinstance(e, UnOp) and e.op == "neg_checked":
        a = linear(e.a)
        if a is None:
            return None
        return {t: -c for t, c in a[0].items()}, -a[1]
    if isinstance(e, BinOp):
        return {e: 1}, 0
    return None


def static_difference(a: Expr, b: Expr) -> int | None:
    """``a - b`` when it is a constant (``(r0 + 2) - r0`` is 2), else None."""
    la, lb = linear(a), linear(b)
    if la is None or lb is None:
        return None
    terms = dict(la[0])
    for k, v in lb[0].items():
        terms[k] = terms.get(k, 0) - v
    if any(terms.values()):
        return None
    return la[1] - lb[1]
