"""Scalar expressions of the kernel IR evaluated as the emitted C++ computes them.

Every operator, type and intrinsic comes from the one table (:mod:`.scalar`).  An
expression compiles once into a closure ``fn(env) -> value`` that keeps each value
normalised to its C++ type (Python ``int`` in range, ``float`` rounded to float32 for
``float``, ``bool``), and records the C++ type, so the op that consumes the value can
apply C++'s implicit conversion to its parameter type (:func:`coerce`).  Each node's C++
type is its IR type (the emitter writes literals and operators so that it is: an ``i64``
constant is an ``int64_t`` wherever that matters, signed arithmetic goes through
``ttlang::add<T>`` ...); operands meet through the usual arithmetic conversions
(``int64_t`` against ``uint32_t`` is signed, ``uint64_t`` wins over ``int64_t``).

:func:`fold` is constant folding: the lowering calls it for an operator or cast of
constants, so a folded value is exactly what either engine would compute at run time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilewright.errors import KernelError
from tilewright.kir.ir import Arg, BinOp, Cast, Const, Expr, Intrinsic, Op, Ty, UnOp, Var
from tilewright.kir.scalar import (
    CONVERT,
    INTRINSICS,
    OPERATORS,
    WRAP,
    CType,
    Value,
    _f32,
    common,
    promote,
)

__all__ = [
    "CType",
    "ExprFn",
    "compile_expr",
    "coerce",
    "convert",
    "operand",
    "unsupported",
    "ctype_of_ty",
    "fold",
    "CONVERT",
]

ExprFn = Callable[[Any], Any]


def unsupported(what: str, rule: str, op: Op | None) -> KernelError:
    """The error for IR the interpreter cannot run as the C++ would (named op, rule, line)."""
    code = f"'{op.code}' " if op is not None else ""
    return KernelError(
        f"the IR interpreter cannot run {code}{what}",
        loc=op.loc if op is not None else None,
        rule=rule,
        hint="run this kernel with the native engine (--engine native), or write the raw "
        "function without this construct",
    )


def convert(value: Value, ct: CType) -> Value:
    return CONVERT[ct](value)


def ctype_of_ty(ty: Ty) -> CType:
    return ty.value


def coerce(fn: ExprFn, have: CType, want: CType) -> ExprFn:
    """``fn``'s value implicitly converted from ``have`` to ``want`` (identity if equal)."""
    if have == want:
        return fn
    conv = CONVERT[want]
    return lambda env: conv(fn(env))


def _normaliser(ct: CType) -> Callable[[Any], Any] | None:
    """The rounding of an exact result to ``ct``: wrap for integers, float32 for ``float``."""
    return WRAP.get(ct) or (_f32 if ct == "f32" else None)


# -- nodes --------------------------------------------------------------------------------------


def _const(e: Const, op: Op | None) -> tuple[ExprFn, CType]:
    ct = e.ty.value
    value = CONVERT[ct](e.value)
    return (lambda env: value), ct


def _var(e: Var, op: Op | None) -> tuple[ExprFn, CType]:
    """A local: the emitted C++ declares every local ``T x = {}``, so one never set is 0."""
    name, zero = e.name, CONVERT[e.ty.value](0)
    return (lambda env: env.values.get(name, zero)), e.ty.value


def _arg(e: Arg, op: Op | None) -> tuple[ExprFn, CType]:
    index = e.index
    if e.ty is Ty.I64:  # static_cast<int64_t>(static_cast<int32_t>(get_arg_val<uint32_t>(i)))
        wrap = WRAP["i32"]
        return (lambda env: wrap(int(env.args[index]) & 0xFFFFFFFF)), "i64"
    conv = CONVERT[e.ty.value]
    return (lambda env: conv(int(env.args[index]) & 0xFFFFFFFF)), e.ty.value


def _binop(e: BinOp, op: Op | None) -> tuple[ExprFn, CType]:
    row = OPERATORS.get(e.op)
    if row is None or row.arity != 2:
        raise unsupported(f"operator '{e.op}'", "raw-ir-unknown-operator", op)
    fa, ca = compile_expr(e.a, op)
    fb, cb = compile_expr(e.b, op)
    kind, fn = row.kind, row.evaluate
    if kind == "logic":  # && and || short-circuit
        a, b = coerce(fa, ca, "bool"), coerce(fb, cb, "bool")
        if e.op == "and":
            return (lambda env: a(env) and b(env)), "bool"
        return (lambda env: a(env) or b(env)), "bool"
    if kind == "truediv":  # static_cast<double>(a) / static_cast<double>(b)
        a, b = coerce(fa, ca, "f64"), coerce(fb, cb, "f64")
        return (lambda env: fn(a(env), b(env))), "f64"
    if kind in ("floor", "bits"):  # ttlang::floordiv<T>, ttlang::shl<T>, a & b of T
        ct = e.ty.value
        if ct == "bool" or (kind == "bits" and ct[0] == "f"):
            raise unsupported(
                f"'{e.op}' of {e.ty} operands: it takes integers (the C++ does not compile)",
                "raw-ir-no-cpp-form",
                op,
            )
    else:
        ct = common(ca, cb)
    a, b = coerce(fa, ca, ct), coerce(fb, cb, ct)
    if kind == "compare":
        return (lambda env: fn(a(env), b(env))), "bool"
    norm = _normaliser(ct)
    if norm is None or e.op in ("min", "max"):  # double; or a selection (no new value)
        return (lambda env: fn(a(env), b(env))), ct
    return (lambda env: norm(fn(a(env), b(env)))), ct


def _unop(e: UnOp, op: Op | None) -> tuple[ExprFn, CType]:
    row = OPERATORS.get(e.op)
    if row is None or row.arity != 1:
        raise unsupported(f"unary operator '{e.op}'", "raw-ir-unknown-operator", op)
    fa, ca = compile_expr(e.a, op)
    fn = row.evaluate
    if row.kind == "not":
        a = coerce(fa, ca, "bool")
        return (lambda env: fn(a(env))), "bool"
    ct = promote(ca)
    a, norm = coerce(fa, ca, ct), CONVERT[ct]
    return (lambda env: norm(fn(a(env)))), ct


def _intrinsic(e: Intrinsic, op: Op | None) -> tuple[ExprFn, CType]:
    info = INTRINSICS.get(e.name)
    if info is None:
        raise unsupported(f"intrinsic @{e.name}", "raw-ir-unknown-intrinsic", op)
    call = info.call
    args = tuple(coerce(*compile_expr(a, op), want.value) for a, want in zip(e.args, info.args))
    ct = info.ty.value
    norm = CONVERT[ct]
    if not args:
        return (lambda env: norm(call())), ct
    if len(args) == 1:
        (a0,) = args
        return (lambda env: norm(call(a0(env)))), ct
    return (lambda env: norm(call(*(a(env) for a in args)))), ct


def _cast(e: Cast, op: Op | None) -> tuple[ExprFn, CType]:
    fa, ca = compile_expr(e.a, op)
    return coerce(fa, ca, e.ty.value), e.ty.value


_COMPILERS: dict[type, Callable[[Any, Op | None], tuple[ExprFn, CType]]] = {
    Const: _const,
    Var: _var,
    Arg: _arg,
    BinOp: _binop,
    UnOp: _unop,
    Intrinsic: _intrinsic,
    Cast: _cast,
}


def compile_expr(e: object, op: Op | None = None) -> tuple[ExprFn, CType]:
    """``e`` as a closure ``fn(env)`` and its C++ type (``op`` locates errors)."""
    compiler = _COMPILERS.get(type(e))
    if compiler is None:
        raise unsupported(f"operand {e!r}: not an expression", "raw-ir-operand", op)
    return compiler(e, op)


def operand(op: Op, index: int, want: CType) -> ExprFn:
    """Operand ``index`` of ``op`` converted to the C++ parameter type ``want``."""
    fn, have = compile_expr(op.args[index], op)
    return coerce(fn, have, want)


def fold(e: Expr) -> Const:
    """The constant ``e`` (an operator or cast of constants) is: the interpreter's value of
    it at its type, so folding computes what the kernel would (wrap-around, float32
    rounding, C++ conversions).  Integer division by zero raises KernelError."""
    fn, ct = compile_expr(e)
    value = fn(None)
    if ct != e.ty.value:  # a comparison of i32-promoted bools ...: the node's own type
        value = CONVERT[e.ty.value](value)
    return Const(value, e.ty)
