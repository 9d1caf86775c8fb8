"""The scalar operators of the kernel IR: one table, read by every pass.

An IR scalar expression means what its emitted C++ means, and that meaning is written
here once:

* :data:`TYPES` -- each IR type's C++ name and the conversion to it (``static_cast`` as
  x86-64 performs it: integers wrap modulo 2^n, floats truncate toward zero, NaN and
  out-of-range floats give ``INT64_MIN``, integers convert to ``float`` rounded once);
* :data:`OPERATORS` -- each binary and unary operator: its text (the printer), its C++
  form (the emitter), its evaluator at the C++ type it computes in (the interpreter, and
  constant folding, which calls the interpreter's evaluator: :func:`.interp_scalar.fold`)
  and the verifier's type rule;
* :data:`INTRINSICS` -- each kernel-API query: argument and result types, C++ form, the
  kernel kinds that may call it and the Python kernel-API call it is on the Python engine.

Integer semantics are two's complement everywhere: ``i64``, ``u32`` and ``u64``
arithmetic wraps (the emitter writes signed arithmetic through ``ttlang::add<T>`` ...,
which compute in the unsigned type, because plain signed overflow is undefined in C++);
``floordiv`` / ``mod`` floor as Python's ``//`` / ``%`` do (docs/compiler.md), on integers
and floats, with ``INT64_MIN // -1`` wrapping to ``INT64_MIN`` and a zero divisor a
:class:`~tilewright.errors.KernelError` at the op's line on both engines; shifts take
counts from 0 up (a count of the width or more shifts every bit out: 0, or -1 for a
negative ``shr``; a negative count is the same error on both engines).  ``float`` (f32)
arithmetic rounds to float32 after each operation; ``truediv`` is double division with
IEEE infinities and NaN.
"""

from __future__ import annotations

import math
import operator
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tilewright.device import kernel_api as ka
from tilewright.errors import KernelError
from tilewright.kir.ir import KIND_COMPUTE, KIND_DM, Ty

__all__ = [
    "CType",
    "Value",
    "CONVERT",
    "CPP_TYPE",
    "CPP_CTYPE",
    "convert",
    "common",
    "promote",
    "Operator",
    "OPERATORS",
    "IntrinsicInfo",
    "INTRINSICS",
    "float_literal",
    "division_by_zero",
    "integer_overflow",
    "overflow_text",
]

Value = int | float | bool
CType = str
"""A C++ scalar type: ``bool``, ``i32`` (``int``: ``bool`` promotes to it), ``i64``, ``u32``,
``u64``, ``f32`` (``float``), ``f64`` (``double``); an IR type's C++ type is its name."""

CPP_TYPE: dict[Ty, str] = {
    Ty.I64: "int64_t",
    Ty.U32: "uint32_t",
    Ty.U64: "uint64_t",
    Ty.F64: "double",
    Ty.F32: "float",
    Ty.BOOL: "bool",
}
"""Each IR type as C++ (declarations, casts, template arguments)."""
CPP_CTYPE: dict[CType, str] = {**{t.value: c for t, c in CPP_TYPE.items()}, "i32": "int"}

_M32 = (1 << 32) - 1
_M64 = (1 << 64) - 1
_F32 = struct.Struct("<f")


# -- conversions: static_cast as x86-64 performs it ----------------------------------------------


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


WRAP: dict[CType, Callable[[int], int]] = {
    "i32": _wrap_signed(32),
    "i64": _wrap_signed(64),
    "u32": lambda v: v & _M32,
    "u64": lambda v: v & _M64,
}
"""Two's-complement wrap-around of an exact integer result to each integer type."""
WIDTH = {"i32": 32, "i64": 64, "u32": 32, "u64": 64}


def _to_int(ct: CType) -> Callable[[Value], int]:
    wrap = WRAP[ct]

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


_RANK = {"i32": 1, "u32": 1, "i64": 2, "u64": 2}


def promote(ct: CType) -> CType:
    """Integral promotion: ``bool`` operands compute as ``int``."""
    return "i32" if ct == "bool" else ct


def common(a: CType, b: CType) -> CType:
    """C++'s usual arithmetic conversions (after promoting bool to int)."""
    a, b = promote(a), promote(b)
    for f in ("f64", "f32"):
        if f in (a, b):
            return f
    if a == b:
        return a
    if (a[0] == "i") == (b[0] == "i"):
        return a if _RANK[a] >= _RANK[b] else b
    u, s = (a, b) if a[0] == "u" else (b, a)
    return u if _RANK[u] >= _RANK[s] else s


def float_literal(v: float) -> str:
    """A double as a C++ literal (``1.0``, ``__builtin_inf()`` ...)."""
    if math.isnan(v):
        return '__builtin_nan("")'
    if math.isinf(v):
        return "__builtin_inf()" if v > 0 else "(-__builtin_inf())"
    text = repr(float(v))
    return text if any(c in text for c in ".e") else text + ".0"


# -- operators -----------------------------------------------------------------------------------


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


def division_by_zero(what: str) -> KernelError:
    """``floordiv`` / ``mod`` by zero: ``ttlang::floordiv`` / ``mod`` raise the same text at the
    op's line (integer division would trap; Python raises for floats too)."""
    return KernelError(f"{what} by zero in kernel code", rule="kir-division-by-zero")


_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


def overflow_text(symbol: str) -> str:
    """The one text of a checked operator's overflow (``ttlang::checked`` gets it from the
    emitted call, so both engines say the same)."""
    return (
        f"integer overflow in kernel code: the result of '{symbol}' does not fit in int64 "
        "(compiled kernel integers are 64-bit)"
    )


def integer_overflow(symbol: str) -> KernelError:
    return KernelError(overflow_text(symbol), rule="kir-integer-overflow")


def _checked(fn: Callable[..., int], symbol: str) -> Callable[..., int]:
    """``fn`` on i64 values, exact; a result beyond int64 is :func:`integer_overflow`."""

    def evaluate(*operands: int) -> int:
        r = fn(*operands)
        if not _I64_MIN <= r <= _I64_MAX:
            raise integer_overflow(symbol)
        return r

    return evaluate


def _checked_cpp(name: str, symbol: str, unary: bool = False) -> str:
    text = overflow_text(symbol)  # no quote or backslash to escape
    operands = "{a}" if unary else "{a}, {b}"
    return f'ttlang::{name}<{{T}}>({operands}, "{text}")'


def _floordiv(a: Any, b: Any) -> Any:
    if b == 0:
        raise division_by_zero("floor division")
    return a // b  # Python's floor, for integers and floats alike


def _checked_truediv(a: float, b: float) -> float:
    """Python's ``/`` in compiled TT-Lang kernels: a zero divisor is an error, not inf."""
    if b == 0:
        raise division_by_zero("division")
    return a / b


def _mod(a: Any, b: Any) -> Any:
    if b == 0:
        raise division_by_zero("modulo")
    return a % b


def _shift_count(n: int) -> int:
    if n < 0:
        raise KernelError("shift by a negative count in kernel code", rule="kir-shift")
    return n


def _shl(a: int, n: int) -> int:  # wrapped to the type afterwards: a count >= width gives 0
    return a << min(_shift_count(n), 64)


def _shr(a: int, n: int) -> int:  # arithmetic for signed types, logical for unsigned values
    return a >> min(_shift_count(n), 64)


@dataclass(frozen=True, slots=True)
class Operator:
    """One scalar operator.

    ``kind`` fixes its typing (verifier) and the C++ type it computes in (interpreter):
    ``arith`` -- operands and result of one type, computed in it (``add`` ...);
    ``bits`` -- the same on integers only; ``floor`` -- computed in the result type
    (``ttlang::floordiv<T>``: Python's ``//`` / ``%`` for integers and floats); ``truediv`` -- f64; ``compare`` -- operands of like
    kind (both numbers of one family) under the usual arithmetic conversions, result bool;
    ``logic`` -- bools, short-circuit; ``neg`` / ``not`` -- unary.

    ``evaluate`` computes on operands already converted to that C++ type; the exact result
    is then wrapped (integers) or rounded (float32) to it.  ``cpp`` is a format over
    ``{a}``, ``{b}`` and ``{T}`` (the C++ result type); ``cpp_signed`` replaces it for
    signed integer results (wrap-around through the unsigned type).
    """

    name: str
    kind: str
    symbol: str
    evaluate: Callable[..., Any]
    cpp: str
    cpp_signed: str | None = None
    doc: str = ""

    @property
    def arity(self) -> int:
        return 1 if self.kind in ("neg", "not") else 2


def _op(name: str, kind: str, symbol: str, evaluate, cpp: str, cpp_signed=None, doc="") -> Operator:
    return Operator(name, kind, symbol, evaluate, cpp, cpp_signed, doc)


OPERATORS: dict[str, Operator] = {
    o.name: o
    for o in (
        _op("add", "arith", "+", operator.add, "({a} + {b})", "ttlang::add<{T}>({a}, {b})"),
        _op("sub", "arith", "-", operator.sub, "({a} - {b})", "ttlang::sub<{T}>({a}, {b})"),
        _op("mul", "arith", "*", operator.mul, "({a} * {b})", "ttlang::mul<{T}>({a}, {b})"),
        _op(
            "min",
            "arith",
            "min",
            lambda a, b: a if a < b else b,
            "ttlang::min<{T}>({a}, {b})",
            doc="(a < b ? a : b): a NaN operand gives b",
        ),  # fmt: skip
        _op("max", "arith", "max", lambda a, b: a if a > b else b, "ttlang::max<{T}>({a}, {b})"),
        _op(
            "floordiv",
            "floor",
            "floordiv",
            _floordiv,
            "ttlang::floordiv<{T}>({a}, {b})",
            doc="Python's //: floors (INT64_MIN // -1 wraps)",
        ),  # fmt: skip
        _op("mod", "floor", "mod", _mod, "ttlang::mod<{T}>({a}, {b})", doc="Python's %"),
        _op(
            "truediv",
            "truediv",
            "/",
            _truediv,
            "(static_cast<double>({a}) / static_cast<double>({b}))",
        ),  # fmt: skip
        _op(
            "truediv_checked",
            "truediv",
            "/?",
            _checked_truediv,
            "ttlang::checked_truediv(static_cast<double>({a}), static_cast<double>({b}))",
            doc="Python's /: a zero divisor is a KernelError",
        ),  # fmt: skip
        _op("shl", "bits", "<<", _shl, "ttlang::shl<{T}>({a}, {b})", doc="a << b, wrapped"),
        _op("shr", "bits", ">>", _shr, "ttlang::shr<{T}>({a}, {b})", doc="arithmetic if signed"),
        _op("bitand", "bits", "&", operator.and_, "({a} & {b})"),
        _op("bitor", "bits", "|", operator.or_, "({a} | {b})"),
        _op("bitxor", "bits", "^", operator.xor, "({a} ^ {b})"),
        _op("eq", "compare", "==", operator.eq, "({a} == {b})"),
        _op("ne", "compare", "!=", operator.ne, "({a} != {b})"),
        _op("lt", "compare", "<", operator.lt, "({a} < {b})"),
        _op("le", "compare", "<=", operator.le, "({a} <= {b})"),
        _op("gt", "compare", ">", operator.gt, "({a} > {b})"),
        _op("ge", "compare", ">=", operator.ge, "({a} >= {b})"),
        _op("and", "logic", "and", lambda a, b: a and b, "({a} && {b})"),
        _op("or", "logic", "or", lambda a, b: a or b, "({a} || {b})"),
        _op("neg", "neg", "neg", operator.neg, "(-{a})", "ttlang::neg<{T}>({a})"),
        # Python's integers in compiled TT-Lang kernels: exact, or an error (never a wrap)
        *(
            _op(
                f"{name}_checked",
                "neg" if name == "neg" else "arith",
                f"{name}_checked" if name == "neg" else f"{symbol}?",  # unary ops print by name
                _checked(fn, symbol),
                _checked_cpp(f"checked_{name}", symbol, name == "neg"),
                doc=f"{symbol} of int64 values; a result beyond int64 is a KernelError",
            )
            for name, symbol, fn in (
                ("add", "+", operator.add),
                ("sub", "-", operator.sub),
                ("mul", "*", operator.mul),
                ("neg", "-", operator.neg),
            )
        ),
        _op("not", "not", "not", operator.not_, "(!{a})"),
    )
}
"""Every scalar operator of :class:`~.ir.BinOp` and :class:`~.ir.UnOp`, by name."""


def type_error(op: Operator, a: Ty, b: Ty | None, result: Ty) -> str | None:
    """The verifier's rule for ``op`` on operand types ``a`` (, ``b``) giving ``result``:
    None if well typed, else what is wrong."""
    kind = op.kind
    if kind == "logic":
        if a is not Ty.BOOL or b is not Ty.BOOL or result is not Ty.BOOL:
            return f"'{op.name}' takes and gives bool, got {a}, {b} -> {result}"
    elif kind == "compare":
        assert b is not None
        if result is not Ty.BOOL or a.is_float != b.is_float:
            return f"comparison '{op.name}' of {a} and {b} must give bool of like types"
    elif kind == "not":
        if a is not Ty.BOOL or result is not Ty.BOOL:
            return "'not' takes and gives bool"
    elif kind == "neg":
        if a is not result:
            return "'neg' keeps its operand's type"
        if op.name.endswith("_checked") and result is not Ty.I64:
            return f"'{op.name}' takes i64, got {result}"
    else:
        if a is not result or b is not result:
            return f"'{op.name}' of {a} and {b} gives {result}: operand types must equal it"
        if kind == "bits" and not result.is_int:
            return f"'{op.name}' takes integers, got {result}"
        if kind == "arith" and op.name.endswith("_checked") and result is not Ty.I64:
            return f"'{op.name}' takes i64, got {result}"
    return None


# -- intrinsics ----------------------------------------------------------------------------------

ANY = (KIND_COMPUTE, KIND_DM)


def _l1_word(addr: int) -> int:
    return int(ka.read_l1(addr, 1, np.uint32)[0])


@dataclass(frozen=True, slots=True)
class IntrinsicInfo:
    """A kernel-API query: argument and result types, C++ format over ``{0}``, ``{1}`` ...,
    the kernel kinds that may call it, and the Python kernel-API call it is."""

    args: tuple[Ty, ...]
    ty: Ty
    cpp: str
    call: Callable[..., int]
    kinds: tuple[str, ...] = ANY


INTRINSICS: dict[str, IntrinsicInfo] = {
    "logical_x": IntrinsicInfo((), Ty.U32, "get_absolute_logical_x()", ka.get_absolute_logical_x),
    "logical_y": IntrinsicInfo((), Ty.U32, "get_absolute_logical_y()", ka.get_absolute_logical_y),
    "write_ptr": IntrinsicInfo((Ty.U32,), Ty.U32, "get_write_ptr({0})", ka.get_write_ptr),
    "read_ptr": IntrinsicInfo((Ty.U32,), Ty.U32, "get_read_ptr({0})", ka.get_read_ptr),
    "semaphore": IntrinsicInfo(
        (Ty.U32,), Ty.U32, "get_semaphore({0})", ka.get_semaphore, (KIND_DM,)
    ),
    "l1_word": IntrinsicInfo(
        (Ty.U32,),
        Ty.U32,
        "(*reinterpret_cast<volatile tt_l1_ptr uint32_t*>({0}))",
        _l1_word,
        (KIND_DM,),
    ),
}
"""Every kernel-API query of :class:`~.ir.Intrinsic`, by name."""
