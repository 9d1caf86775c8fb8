"""``ttl.raw``: the raw escape hatch (TLE-Raw for TT-Lang; docs/raw.md).

(Helper 13a owns this module and writes the IR flavour above; the block below is the
C++ flavour's, kept separate for the merge.)
"""

from __future__ import annotations

# -- C++ flavour (issue 13c): ttl.raw.cpp and the type markers it uses -------------------------
from tilewright.compiler.raw.cpp import CppFunction, RawCppError, cpp
from tilewright.compiler.raw.types import (
    DFB,
    RawAddr,
    RawType,
    TensorAccessor,
    f32,
    i32,
    i64,
    index,
    u32,
)

__all__ = [
    "cpp",
    "CppFunction",
    "RawCppError",
    "RawType",
    "i32",
    "i64",
    "u32",
    "f32",
    "index",
    "DFB",
    "TensorAccessor",
    "RawAddr",
]
