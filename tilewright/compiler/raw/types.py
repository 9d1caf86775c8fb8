"""The typed markers of raw functions' parameters and results (``ttl.raw.i32`` ... ``ttl.raw.DFB``).

A marker names a C++ type and the kind of value a call passes for it: an integer or
float scalar, a DFB handle (its physical index), a tensor (an accessor) or a raw
address.  Shared by the IR flavour (``@ttl.raw.ir``) and the C++ flavour
(``ttl.raw.cpp``).
"""

from __future__ import annotations

from dataclasses import dataclass

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
