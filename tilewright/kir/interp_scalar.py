"""Scalar expressions of the kernel IR with the semantics of the C++ the emitter writes.

:mod:`.emit` renders an expression as plain C++ (``(a + b)``, ``ttlang::floordiv<T>(a, b)``,
``static_cast<T>(a)``, integer literals as ``int`` when they fit), so its meaning is C++'s:
each node has a C++ type, operands meet through the usual arithmetic conversions
(``bool`` promotes to ``int``; ``int`` against ``uint32_t`` is unsigned; ``int64_t``
against ``uint32_t`` is signed), unsigned arithmetic wraps, ``float`` arithmetic rounds
to float32 after every operation, ``/`` of :class:`~.ir.BinOp` ``truediv`` is double.
This module compiles an expression once into a closure ``fn(env) -> value`` that keeps
each value normalised to its C++ type (Python ``int`` in range, ``float`` rounded to
float32 for ``float``, ``bool``), and records the C++ type so the op that consumes the
value can apply C++'s implicit conversion to its parameter type (:func:`coerce`).

Intrinsics (kernel-API queries) are a table from name to the Python kernel-API call.
"""

from __future__ import annotations

import math
import operator
import struct
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from tilewright.device import kernel_api as ka
from tilewright.errors import KernelError
from tilewright.kir.ir import Arg, BinOp, Cast, Const, Intrinsic, Op, Ty, UnOp, Var
from tilewright.kir.optable import INTRINSICS

__all__ = ["CType", "ExprFn", "compile_expr", "coerce", "convert", "unsupported", "ctype_of_ty"]

Value = int | float | bool
CType = str
"""A C++ scalar type: ``bool``, ``i32`` (``int``), ``i64``, ``u32``, ``u64``, ``f32``, ``f64``."""


class _Env(Protocol):
    values: dict[str, Value]
    args: Any


ExprFn = Callable[[Any], Any]

_M32 = (1 << 32) - 1
_M64 = (1 << 64) - 1
_F32 = struct.Struct("<f")


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


# -- C++ conversions ---------------------------------------------------------------------------


def _f32(x: float) -> float:
    """``static_cast<float>(double)``: round to nearest even, overflow to infinity."""
    try:
        return float(_F32.unpack(_F32.pack(x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


def _int_f32(v: int) -> float:
    """``static_cast<float>(integer)``, correctly rounded (no double rounding through f64)."""
    if -(1 << 53) <= v <= 1 << 53:
        return _f32(float(v))
    m = abs(v)
    shift = m.bit_length() - 24
    q, r = divmod(m, 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return math.copysign(float(q << shift), v)


def _f2i64(x: float) -> int:
    """x86-64 ``cvttsd2si``: truncation; NaN and out-of-range give INT64_MIN (C++: UB)."""
    if x != x or not -9.223372036854775808e18 <= x < 9.223372036854775808e18:
        return -(1 << 63)
    return int(x)


def _wrap_signed(bits: int) -> Callable[[int], int]:
    half, mask = 1 << (bits - 1), (1 << bits) - 1
    return lambda v: ((v + half) & mask) - half


_WRAP: dict[CType, Callable[[int], int]] = {
    "i32": _wrap_signed(32),
    "i64": _wrap_signed(64),
    "u32": lambda v: v & _M32,
    "u64": lambda v: v & _M64,
}


def _to_int(ct: CType) -> Callable[[Value], int]:
    wrap = _WRAP[ct]

    def conv(v: Value) -> int:
        if isinstance(v, float):
            if ct == "u64" and 9.223372036854775808e18 <= v < 1.8446744073709552e19:
                return int(v)
            return wrap(_f2i64(v))
        return wrap(int(v))

    return conv


def _to_f32(v: Value) -> float:
    return _f32(v) if isinstance(v, float) else _int_f32(int(v))


CONVERT: dict[CType, Callable[[Value], Value]] = {
    "bool": bool,  # NaN is true, as in C++
    "i32": _to_int("i32"),
    "i64": _to_int("i64"),
    "u32": _to_int("u32"),
    "u64": _to_int("u64"),
    "f32": _to_f32,
    "f64": float,
}
"""C++'s conversion of any scalar value to each type (``static_cast`` and implicit alike)."""


def convert(value: Value, ct: CType) -> Value:
    return CONVERT[ct](value)


def ctype_of_ty(ty: Ty) -> CType:
    return ty.value


_RANK = {"i32": 1, "u32": 1, "i64": 2, "u64": 2}


def _common(a: CType, b: CType) -> CType:
    """C++'s usual arithmetic conversions (after promoting bool to int)."""
    a, b = ("i32" if a == "bool" else a), ("i32" if b == "bool" else b)
    for f in ("f64", "f32"):
        if f in (a, b):
            return f
    if a == b:
        return a
    if (a[0] == "i") == (b[0] == "i"):
        return a if _RANK[a] >= _RANK[b] else b
    u, s = (a, b) if a[0] == "u" else (b, a)
    return u if _RANK[u] >= _RANK[s] else s


def coerce(fn: ExprFn, have: CType, want: CType) -> ExprFn:
    """``fn``'s value implicitly converted from ``have`` to ``want`` (identity if equal)."""
    if have == want:
        return fn
    conv = CONVERT[want]
    return lambda env: conv(fn(env))


# -- operators ----------------------------------------------------------------------------------


_DEFAULT_NAN = math.inf - math.inf
"""The NaN this machine's FPU makes for an invalid operation (x86: negative, as C++ gets it)."""


def _truediv(a: float, b: float) -> float:
    """IEEE double division (C++ gives inf / NaN where Python raises)."""
    if b == 0.0:
        if a != a:
            return a  # a NaN operand propagates
        if a == 0.0:
            return _DEFAULT_NAN
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _checked(fn: Callable[[int, int], int], what: str) -> Callable[[int, int], int]:
    def op(a: int, b: int) -> int:
        if b == 0:
            raise KernelError(
                f"integer {what} by zero in a raw IR expression (the C++ kernel traps here)",
                rule="raw-ir-division-by-zero",
            )
        return fn(a, b)

    return op


_ARITH: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "min": lambda a, b: a if a < b else b,  # (a < b ? a : b): NaN gives b
    "max": lambda a, b: a if a > b else b,
}
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}
# ttlang::floordiv<T> / ttlang::mod<T> (ttlang/support.h) floor like Python for signed T and
# are plain division for unsigned T, whose values are never negative: Python's // and %.
_FLOOR: dict[str, Callable[[int, int], int]] = {
    "floordiv": _checked(operator.floordiv, "division"),
    "mod": _checked(operator.mod, "modulo"),
}


def _const(e: Const, op: Op | None) -> tuple[ExprFn, CType]:
    v = e.value
    if e.ty is Ty.I64:  # emitted as an int literal when it fits in 32 bits
        ct: CType = "i32" if -(1 << 31) <= int(v) < 1 << 31 else "i64"
    else:
        ct = e.ty.value
    value = CONVERT[ct](v)
    return (lambda env: value), ct


def _var(e: Var, op: Op | None) -> tuple[ExprFn, CType]:
    """A local: the emitted C++ declares every local ``T x = {}``, so one never set is 0."""
    name, zero = e.name, CONVERT[e.ty.value](0)
    return (lambda env: env.values.get(name, zero)), e.ty.value


def _arg(e: Arg, op: Op | None) -> tuple[ExprFn, CType]:
    index = e.index
    if e.ty is Ty.I64:  # static_cast<int64_t>(static_cast<int32_t>(get_arg_val<uint32_t>(i)))
        wrap = _WRAP["i32"]
        return (lambda env: wrap(int(env.args[index]) & _M32)), "i64"
    conv = CONVERT[e.ty.value]
    return (lambda env: conv(int(env.args[index]) & _M32)), e.ty.value


def _binop(e: BinOp, op: Op | None) -> tuple[ExprFn, CType]:
    fa, ca = compile_expr(e.a, op)
    fb, cb = compile_expr(e.b, op)
    name = e.op
    if name in ("and", "or"):  # && and || short-circuit
        a, b = coerce(fa, ca, "bool"), coerce(fb, cb, "bool")
        if name == "and":
            return (lambda env: a(env) and b(env)), "bool"
        return (lambda env: a(env) or b(env)), "bool"
    if name == "truediv":  # static_cast<double>(a) / static_cast<double>(b)
        a, b = coerce(fa, ca, "f64"), coerce(fb, cb, "f64")
        return (lambda env: _truediv(a(env), b(env))), "f64"
    if name in _FLOOR:
        ct = e.ty.value
        if ct[0] == "f" or ct == "bool":
            raise unsupported(
                f"'{name}' of {e.ty} operands: ttlang::{name} takes integers (the C++ does "
                "not compile)",
                "raw-ir-no-cpp-form",
                op,
            )
        a, b = coerce(fa, ca, ct), coerce(fb, cb, ct)
        fn, wrap = _FLOOR[name], _WRAP[ct]
        return (lambda env: wrap(fn(a(env), b(env)))), ct
    ct = _common(ca, cb)
    a, b = coerce(fa, ca, ct), coerce(fb, cb, ct)
    if name in _COMPARE:
        cmp = _COMPARE[name]
        return (lambda env: cmp(a(env), b(env))), "bool"
    fn2 = _ARITH.get(name)
    if fn2 is None:
        raise unsupported(f"operator '{name}'", "raw-ir-unknown-operator", op)
    if name in ("min", "max"):
        return (lambda env: fn2(a(env), b(env))), ct
    norm = _WRAP.get(ct) or (_f32 if ct == "f32" else None)
    if norm is None:  # double: Python's float arithmetic is IEEE double
        return (lambda env: fn2(a(env), b(env))), ct
    return (lambda env: norm(fn2(a(env), b(env)))), ct


def _unop(e: UnOp, op: Op | None) -> tuple[ExprFn, CType]:
    fa, ca = compile_expr(e.a, op)
    if e.op == "not":
        a = coerce(fa, ca, "bool")
        return (lambda env: not a(env)), "bool"
    if e.op != "neg":
        raise unsupported(f"unary operator '{e.op}'", "raw-ir-unknown-operator", op)
    ct = "i32" if ca == "bool" else ca
    a, norm = coerce(fa, ca, ct), CONVERT[ct]
    return (lambda env: norm(-a(env))), ct


def _l1_word(addr: int) -> int:
    return int(ka.read_l1(addr, 1, np.uint32)[0])


INTRINSIC_CALLS: dict[str, Callable[..., int]] = {
    "logical_x": ka.get_absolute_logical_x,
    "logical_y": ka.get_absolute_logical_y,
    "write_ptr": ka.get_write_ptr,
    "read_ptr": ka.get_read_ptr,
    "semaphore": ka.get_semaphore,
    "l1_word": _l1_word,
}
"""Each intrinsic of ``optable.INTRINSICS`` as the Python kernel-API call it renders to."""


def _intrinsic(e: Intrinsic, op: Op | None) -> tuple[ExprFn, CType]:
    info = INTRINSICS.get(e.name)
    call = INTRINSIC_CALLS.get(e.name)
    if info is None or call is None:
        raise unsupported(f"intrinsic @{e.name}", "raw-ir-unknown-intrinsic", op)
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
