"""The typed markers of raw functions' parameters and results (``ttl.raw.i32`` ... ``ttl.raw.DFB``).

A marker names a C++ type and the kind of value a call passes for it: an integer or
float scalar, a DFB handle (its physical index), a tensor (an accessor) or a raw
address.  Shared by the IR flavour (``@ttl.raw.ir``) and the C++ flavour
(``ttl.raw.cpp``), at decoration (the compiler's ``compiler/raw``) and at kernel time
(the range check of a run-time argument, :mod:`tilewright.lang.raw`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilewright.kir.ir import Ty

__all__ = [
    "RawType",
    "i32",
    "i64",
    "u32",
    "f32",
    "index",
    "DFB",
    "TensorAccessor",
    "RawAddr",
    "SCALARS",
    "MARKERS",
]


@dataclass(frozen=True, slots=True)
class RawType:
    """A raw parameter / result type: ``name`` (as ``ttl.raw.<name>``), its C++ type, its kind."""

    name: str
    cpp: str
    kind: str  # "int" | "float" | "dfb" | "tensor" | "addr"

    def __repr__(self) -> str:
        return f"ttl.raw.{self.name}"


i32 = RawType("i32", "int32_t", "int")
i64 = RawType("i64", "int64_t", "int")
u32 = RawType("u32", "uint32_t", "int")
f32 = RawType("f32", "float", "float")
index = RawType("index", "int32_t", "int")
DFB = RawType("DFB", "uint32_t", "dfb")
TensorAccessor = RawType("TensorAccessor", "TensorAccessor", "tensor")
RawAddr = RawType("RawAddr", "uint32_t", "addr")

SCALARS = (i32, i64, u32, f32, index)
MARKERS = (*SCALARS, DFB, TensorAccessor, RawAddr)


# -- the IR flavour's view of the markers (issue 13a) -------------------------------------------

# The kernel-IR type a scalar of each marker is traced as (the IR computes in i64 / u32 /
# f32; i32 and index values are range-checked at the call instead).
_IR = {"i32": "i64", "i64": "i64", "u32": "u32", "f32": "f32", "index": "i64", "RawAddr": "u32"}
_RANGE = {
    "i32": (-(1 << 31), (1 << 31) - 1),
    "i64": (-(1 << 63), (1 << 63) - 1),
    "u32": (0, (1 << 32) - 1),
    "index": (-(1 << 31), (1 << 31) - 1),  # its C++ type is int32_t in both flavours
    "RawAddr": (0, (1 << 32) - 1),
}


def ir_type(t: RawType) -> Ty:
    """The IR type values of scalar marker ``t`` have."""
    return Ty(_IR[t.name])


def int_range(t: RawType) -> tuple[int, int] | None:
    """The valid range of an integer marker's values, None for f32."""
    return _RANGE.get(t.name) if t.kind in ("int", "addr") else None


def range_message(title: str, position: int, name: str, t: RawType, value: str) -> str:
    """The run-time range error of scalar argument ``position`` (1-based) of a raw call."""
    return f"{title}: argument {position} ('{name}') = {value} at run time is not a valid {t!r}"


def fits(t: RawType, value: object) -> bool:
    """Whether Python value ``value`` is a valid argument of scalar type ``t``."""
    if t.kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(value, bool) or not isinstance(value, int):
        return False
    lo, hi = _RANGE[t.name]
    return lo <= value <= hi
