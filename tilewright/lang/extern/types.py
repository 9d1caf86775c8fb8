"""The values of external calls: result types, dispatch conditions and call operands.

``ttl.ScalarType`` and ``ttl.DispatchCondition`` (reference C.5) are declared by the
program and read by the compiler's front end; the operand markers
(``DFBDescriptorArg`` ... ``AccessItem``) are what ``ttl.dfb_descriptor``,
``ttl.DFBEffect.reserve`` and their siblings (:mod:`.surface`) return when a kernel
evaluates a call's arguments, for the run time (:mod:`.runtime`) to read.  Plain data:
this module imports nothing of the language, so the plan, the surface and the run
time can all depend on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = [
    "AccessItem",
    "DFBDescriptorArg",
    "DFBIdArg",
    "DispatchCondition",
    "EffectItem",
    "EffectRepeat",
    "RawAddr",
    "ScalarType",
    "UInt32",
]


class ScalarType(Enum):
    """Integer type of an external call's scalar result (``result_type=``)."""

    I32 = "i32"
    I64 = "i64"

    @property
    def bit_width(self) -> int:
        return 32 if self is ScalarType.I32 else 64

    @property
    def cpp_type(self) -> str:
        return "int32_t" if self is ScalarType.I32 else "int64_t"

    def __repr__(self) -> str:
        return f"ttl.ScalarType.{self.name}"


@dataclass(frozen=True, eq=False, slots=True)
class DispatchCondition:
    """A dispatch-stable condition: every evaluation on one node in one dispatch agrees (C.5).

    Create it in an enclosing factory and capture the same object in every call that
    evaluates it (``condition_result=cond``); distinct declarations are independent.
    """

    scalar_type: ScalarType

    def __post_init__(self) -> None:
        if not isinstance(self.scalar_type, ScalarType):
            raise TypeError(
                f"ttl.DispatchCondition(scalar_type) takes ttl.ScalarType.I32 or ttl.ScalarType.I64, "
                f"got {self.scalar_type!r}"
            )

    def __repr__(self) -> str:
        return f"ttl.DispatchCondition({self.scalar_type!r})"


# -- operands of a call (built when the kernel evaluates the call's arguments) ----------------


@dataclass(frozen=True, slots=True)
class DFBDescriptorArg:
    """``ttl.dfb_descriptor(dfb)``: the typed ``ttlang::DFBDescriptor<...>`` template argument."""

    dfb: object


@dataclass(frozen=True, slots=True)
class DFBIdArg:
    """``ttl.get_dfb_id(dfb)``: the DFB's physical index as a template argument."""

    dfb: object


@dataclass(frozen=True, slots=True)
class RawAddr:
    """``ttl.raw_addr(tensor)``: the tensor's buffer address as a ``uint32_t``."""

    tensor: object


@dataclass(frozen=True, slots=True)
class UInt32:
    """``ttl.uint32(value)``: an unsigned 32-bit template argument."""

    value: int


@dataclass(frozen=True, slots=True)
class EffectItem:
    kind: str
    dfb: object
    tiles: int


@dataclass(frozen=True, slots=True)
class EffectRepeat:
    count: int
    effects: tuple


@dataclass(frozen=True, slots=True)
class AccessItem:
    kind: str
    dfb: object
