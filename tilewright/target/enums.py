"""Enumerations of the system descriptor and their spellings (reference §1.2, §6.1, §9.1).

Every enum has two numberings that do **not** agree:

* the FlatBuffer numbering (``types.fbs``), used on the wire in ``.ttsys`` files;
* the MLIR numbering (``TTCoreOpsEnums.td``), used by the compiler and by
  ``#ttcore.system_desc<...>`` keywords.

``Arch`` is the classic trap (FlatBuffer ``Wormhole_b0 = 0`` vs MLIR ``WormholeB0 = 1``) and
``DataType.BOOL`` is FlatBuffer 18 but MLIR 13.  The Python enum *values* are the FlatBuffer
numbers (the model mirrors the binary schema); every other spelling lives in one
:class:`EnumTable` per enum, so a conversion is a lookup, never an if-chain.

This module owns names and numbers only; the codecs that use them live in ``ttsys``,
``text`` and ``jsonform``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = [
    "ARCH",
    "CHIP_CAPABILITY",
    "CPU_ROLE",
    "DATA_TYPE",
    "DST_32BIT_TYPES",
    "MLIR_DATA_TYPES",
    "Arch",
    "CPURole",
    "ChipCapability",
    "DataType",
    "EnumSpelling",
    "EnumTable",
]

E = TypeVar("E", bound=enum.Enum)


class Arch(enum.IntEnum):
    """Chip architecture; the value is the FlatBuffer number (uint32 on the wire)."""

    WORMHOLE_B0 = 0
    BLACKHOLE = 1
    QUASAR = 2


class DataType(enum.IntEnum):
    """Tile data type; the value is the FlatBuffer number (uint16 on the wire).

    13..18 are the FlatBuffer's "unsupported data types": the compiler drops them on read
    (§6.1); only ``BOOL`` has an MLIR spelling (``i1``, MLIR value 13).
    """

    FLOAT32 = 0
    FLOAT16 = 1
    BFLOAT16 = 2
    BFP_FLOAT8 = 3
    BFP_BFLOAT8 = 4
    BFP_FLOAT4 = 5
    BFP_BFLOAT4 = 6
    BFP_FLOAT2 = 7
    BFP_BFLOAT2 = 8
    UINT32 = 9
    UINT16 = 10
    UINT8 = 11
    INT32 = 12
    FLOAT64 = 13
    INT64 = 14
    UINT64 = 15
    INT16 = 16
    INT8 = 17
    BOOL = 18


class CPURole(enum.IntEnum):
    """Role of a CPU in the system; FlatBuffer uint8, same numbers in MLIR."""

    HOST = 0
    DEVICE = 1


class ChipCapability(enum.IntFlag):
    """Chip capability bit flags (FlatBuffer ``bit_flags`` enum, one uint32 mask per chip).

    Only bit 0 (``HOST_MMIO``, value 1) exists since tt-mlir ``2569d1964c`` (§1.4); the
    flag keeps unknown bits (``boundary=KEEP``) so validation can report them (§11 rule 11).
    """

    NONE = 0
    HOST_MMIO = 1


@dataclass(frozen=True, slots=True)
class EnumSpelling(Generic[E]):
    """All spellings of one enum member.

    Attributes:
        member: the Python member (its value is the FlatBuffer number).
        fb_name: the FlatBuffer identifier, used as the JSON name (``ttrt query``).
        mlir_value: the MLIR ``I32EnumAttr`` value, or None when MLIR has no such case.
        keyword: the MLIR keyword printed in ``#ttcore.system_desc``, or None.
    """

    member: E
    fb_name: str
    mlir_value: int | None
    keyword: str | None


class EnumTable(Generic[E]):
    """Lookup table between an enum's members and all their spellings."""

    def __init__(self, enum_type: type[E], rows: Iterable[tuple[E, str, int | None, str | None]]):
        self.enum_type = enum_type
        self.rows: tuple[EnumSpelling[E], ...] = tuple(EnumSpelling(*row) for row in rows)
        self._by_member = {row.member: row for row in self.rows}
        self._by_fb_name = {row.fb_name: row.member for row in self.rows}
        self._by_mlir = {
            row.mlir_value: row.member for row in self.rows if row.mlir_value is not None
        }
        self._by_keyword = {row.keyword: row.member for row in self.rows if row.keyword is not None}
        # Every member must be spelled; a missing row would be a silent hole in a codec.
        missing = set(enum_type) - set(self._by_member)
        if missing:
            raise AssertionError(
                f"{enum_type.__name__} rows missing for {sorted(m.name or '' for m in missing)}"
            )

    @property
    def name(self) -> str:
        return self.enum_type.__name__

    def spelling(self, member: E) -> EnumSpelling[E]:
        return self._by_member[member]

    def from_fb(self, value: int) -> E | None:
        """The member with FlatBuffer number ``value``, or None."""
        try:
            return self.enum_type(value)
        except ValueError:
            return None

    def from_fb_name(self, name: str) -> E | None:
        return self._by_fb_name.get(name)

    def from_mlir(self, value: int) -> E | None:
        return self._by_mlir.get(value)

    def from_keyword(self, keyword: str) -> E | None:
        return self._by_keyword.get(keyword)

    def fb_name(self, member: E) -> str:
        return self._by_member[member].fb_name

    def mlir_value(self, member: E) -> int | None:
        return self._by_member[member].mlir_value

    def keyword(self, member: E) -> str | None:
        return self._by_member[member].keyword

    def keywords(self) -> tuple[str, ...]:
        return tuple(self._by_keyword)

    def fb_values(self) -> str:
        """Human-readable list of valid FlatBuffer numbers, for error messages."""
        return ", ".join(f"{row.member.value} {row.fb_name}" for row in self.rows)


# member, FlatBuffer name, MLIR value, MLIR keyword  (§1.2 and §6.1)
ARCH: EnumTable[Arch] = EnumTable(
    Arch,
    [
        (Arch.WORMHOLE_B0, "Wormhole_b0", 1, "wormhole_b0"),
        (Arch.BLACKHOLE, "Blackhole", 2, "blackhole"),
        (Arch.QUASAR, "Quasar", 3, "quasar"),
    ],
)

DATA_TYPE: EnumTable[DataType] = EnumTable(
    DataType,
    [
        (DataType.FLOAT32, "Float32", 0, "f32"),
        (DataType.FLOAT16, "Float16", 1, "f16"),
        (DataType.BFLOAT16, "BFloat16", 2, "bf16"),
        (DataType.BFP_FLOAT8, "BFP_Float8", 3, "bfp_f8"),
        (DataType.BFP_BFLOAT8, "BFP_BFloat8", 4, "bfp_bf8"),
        (DataType.BFP_FLOAT4, "BFP_Float4", 5, "bfp_f4"),
        (DataType.BFP_BFLOAT4, "BFP_BFloat4", 6, "bfp_bf4"),
        (DataType.BFP_FLOAT2, "BFP_Float2", 7, "bfp_f2"),
        (DataType.BFP_BFLOAT2, "BFP_BFloat2", 8, "bfp_bf2"),
        (DataType.UINT32, "UInt32", 9, "u32"),
        (DataType.UINT16, "UInt16", 10, "u16"),
        (DataType.UINT8, "UInt8", 11, "u8"),
        (DataType.INT32, "Int32", 12, "si32"),
        # FlatBuffer-only: the compiler's reader drops 13..18, and MLIR has no case for 13..17.
        (DataType.FLOAT64, "Float64", None, None),
        (DataType.INT64, "Int64", None, None),
        (DataType.UINT64, "UInt64", None, None),
        (DataType.INT16, "Int16", None, None),
        (DataType.INT8, "Int8", None, None),
        # The trap: MLIR Bool is 13, FlatBuffer Bool is 18.
        (DataType.BOOL, "Bool", 13, "i1"),
    ],
)

CPU_ROLE: EnumTable[CPURole] = EnumTable(
    CPURole,
    [
        (CPURole.HOST, "Host", 0, "host"),
        (CPURole.DEVICE, "Device", 1, "device"),
    ],
)

# Bit flags: the MLIR form is the integer mask (`1 : i32`, §6.3), so the keyword column
# is the MLIR bit-enum keyword, used only in messages and docs.
CHIP_CAPABILITY: EnumTable[ChipCapability] = EnumTable(
    ChipCapability,
    [
        (ChipCapability.NONE, "NONE", 0, None),
        (ChipCapability.HOST_MMIO, "HostMMIO", 1, "host_mmio"),
    ],
)

#: Data types whose element is 32 bits wide: they halve the DST register capacity once more
#: (``getDstLogicalSizeTiles``, §8.5: Float32, UInt32, Int32).
DST_32BIT_TYPES: frozenset[DataType] = frozenset(
    {DataType.FLOAT32, DataType.UINT32, DataType.INT32}
)

#: Data types that have an MLIR spelling (everything but FlatBuffer 13..17).
MLIR_DATA_TYPES: frozenset[DataType] = frozenset(
    row.member for row in DATA_TYPE.rows if row.keyword is not None
)
