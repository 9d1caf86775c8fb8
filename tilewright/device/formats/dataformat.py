"""Data-format identities: the device ``DataFormat`` enum, ttnn's ``DataType``, and their facts.

This module owns *what* each format is -- its device value, element size, whether it is
block-float (and with how many mantissa bits and which kind of shared exponent), which
numpy dtype decodes it -- as tables.  How bytes are produced lives in the codec modules
(``bf16``, ``plain``, ``blockfloat``) and ``codec`` dispatches through the tables here.

Sources (reference/tt-metal.md §2.1):

* device values: ``tt_metal/api/tt-metalium/tt_backend_api_types.hpp`` (``tt::DataFormat``);
* ttnn values: ``ttnn/api/.../tensor/types.hpp`` (``DataType``), stable across versions;
* element sizes: ``tt_metal/impl/data_format/tile.cpp`` (``Tile::get_tile_size``).

"_b" block-float formats share an 8-bit (bfloat-style, bias 127) exponent per 16-element
block; the non-"_b" ones share a 5-bit "A" exponent (fp16-style, bias 15; ``is_exp_a``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from tilewright.errors import FormatError

__all__ = [
    "BLOCK_FLOAT",
    "DATA_TYPE_NAMES",
    "DataTypeNames",
    "data_type_name",
    "data_type_named",
    "ELEMENT_SIZE",
    "FLOAT_FORMATS",
    "INTEGER_DTYPE",
    "RULE_RANGE",
    "RULE_SHAPE",
    "RULE_TILE",
    "RULE_UNSUPPORTED",
    "TTNN_TO_DATA_FORMAT",
    "BlockFloatSpec",
    "DataFormat",
    "ExponentKind",
    "TtnnDataType",
    "as_data_format",
    "decoded_dtype",
    "element_size",
    "format_name",
    "is_block_float",
    "is_integer",
    "unsupported",
]

# Rule ids carried by every FormatError this package raises (tests refer to them).
RULE_UNSUPPORTED = "format-unsupported"
RULE_SHAPE = "format-shape"
RULE_RANGE = "format-range"
RULE_TILE = "format-tile"


class DataFormat(enum.IntEnum):
    """``tt::DataFormat`` with the device's numeric values (tt_backend_api_types.hpp)."""

    Float32 = 0
    Float16 = 1
    Bfp8 = 2
    Bfp4 = 3
    Tf32 = 4
    Float16_b = 5  # bfloat16
    Bfp8_b = 6
    Bfp4_b = 7
    Int32 = 8
    UInt16 = 9
    Lf8 = 10
    Bfp2 = 11
    Int8 = 14
    Bfp2_b = 15
    UInt32 = 24
    Fp8_e4m3 = 0x1A
    UInt8 = 30
    RawUInt8 = 0xF0
    RawUInt16 = 0xF1
    RawUInt32 = 0xF2
    Invalid = 0xFF


class TtnnDataType(enum.IntEnum):
    """ttnn ``DataType`` values (types.hpp); the ttnn layer wraps this enum."""

    BFLOAT16 = 0
    FLOAT32 = 1
    UINT32 = 2
    BFLOAT8_B = 3
    BFLOAT4_B = 4
    UINT8 = 5
    UINT16 = 6
    INT32 = 7
    INVALID = 8


TTNN_TO_DATA_FORMAT: dict[TtnnDataType, DataFormat] = {
    TtnnDataType.BFLOAT16: DataFormat.Float16_b,
    TtnnDataType.FLOAT32: DataFormat.Float32,
    TtnnDataType.UINT32: DataFormat.UInt32,
    TtnnDataType.BFLOAT8_B: DataFormat.Bfp8_b,
    TtnnDataType.BFLOAT4_B: DataFormat.Bfp4_b,
    TtnnDataType.UINT8: DataFormat.UInt8,
    TtnnDataType.UINT16: DataFormat.UInt16,
    TtnnDataType.INT32: DataFormat.Int32,
    TtnnDataType.INVALID: DataFormat.Invalid,
}
"""ttnn ``DataType`` -> device ``DataFormat`` (reference §2.1)."""


class ExponentKind(enum.Enum):
    """Which shared exponent a block-float format stores."""

    B = "8-bit, bias 127"  # the "_b" formats
    A = "5-bit, bias 15"  # is_exp_a


@dataclass(frozen=True, slots=True)
class BlockFloatSpec:
    """Shape of one block-float format: ``mantissa_bits`` magnitude bits plus a sign bit."""

    mantissa_bits: int  # W in reference §2.4: 7 (bfp8), 3 (bfp4), 1 (bfp2)
    exponent: ExponentKind

    @property
    def code_bits(self) -> int:
        """Bits per element in the mantissa section: sign + magnitude."""
        return self.mantissa_bits + 1

    @property
    def codes_per_byte(self) -> int:
        return 8 // self.code_bits


BLOCK_FLOAT: dict[DataFormat, BlockFloatSpec] = {
    DataFormat.Bfp8_b: BlockFloatSpec(7, ExponentKind.B),
    DataFormat.Bfp4_b: BlockFloatSpec(3, ExponentKind.B),
    DataFormat.Bfp2_b: BlockFloatSpec(1, ExponentKind.B),
    DataFormat.Bfp8: BlockFloatSpec(7, ExponentKind.A),
    DataFormat.Bfp4: BlockFloatSpec(3, ExponentKind.A),
    DataFormat.Bfp2: BlockFloatSpec(1, ExponentKind.A),
}
"""Every block-float format (``blockfloat_common.cpp``: MANTISSA_BFP_WIDTH, is_exp_a)."""

ELEMENT_SIZE: dict[DataFormat, int] = {
    DataFormat.Float32: 4,
    DataFormat.Float16: 2,
    DataFormat.Float16_b: 2,
    DataFormat.Int32: 4,
    DataFormat.UInt32: 4,
    DataFormat.UInt16: 2,
    DataFormat.UInt8: 1,
    DataFormat.Int8: 1,
    DataFormat.Lf8: 1,
    DataFormat.Fp8_e4m3: 1,
    DataFormat.RawUInt8: 1,
    DataFormat.RawUInt16: 2,
    DataFormat.RawUInt32: 4,
}
"""Bytes per element of every fixed-size format (``Tile::get_tile_size`` / tile_hw)."""

INTEGER_DTYPE: dict[DataFormat, np.dtype] = {
    DataFormat.Int32: np.dtype(np.int32),
    DataFormat.UInt32: np.dtype(np.uint32),
    DataFormat.UInt16: np.dtype(np.uint16),
    DataFormat.UInt8: np.dtype(np.uint8),
    DataFormat.Int8: np.dtype(np.int8),
    DataFormat.RawUInt8: np.dtype(np.uint8),
    DataFormat.RawUInt16: np.dtype(np.uint16),
    DataFormat.RawUInt32: np.dtype(np.uint32),
}
"""Integer formats and the numpy dtype their elements decode to (two's complement, LE)."""

FLOAT_FORMATS: frozenset[DataFormat] = frozenset(
    {DataFormat.Float32, DataFormat.Float16, DataFormat.Float16_b, *BLOCK_FLOAT}
)
"""Float formats this package encodes; they decode to float32."""


@dataclass(frozen=True, slots=True)
class DataTypeNames:
    """How one ttnn data type is spelled across the stack.

    ``name`` is ttnn's spelling (``DataType.BFLOAT8_B`` -> ``bfloat8_b``), the canonical
    one every message and the op registry use; ``aliases`` are the other spellings the
    languages accept (TT-Lang's ``make_dfb`` strings, tt-mlir keywords); the lower-cased
    ``tt::DataFormat`` name (``float16_b``, ``bfp8_b``) is accepted too.  ``torch`` is the
    torch dtype that holds every value exactly (``ttnn.to_torch``).
    """

    name: str
    aliases: tuple[str, ...]
    torch: str


DATA_TYPE_NAMES: dict[TtnnDataType, DataTypeNames] = {
    TtnnDataType.BFLOAT16: DataTypeNames("bfloat16", ("bf16",), "bfloat16"),
    TtnnDataType.FLOAT32: DataTypeNames("float32", ("f32", "fp32"), "float32"),
    TtnnDataType.BFLOAT8_B: DataTypeNames("bfloat8_b", ("bfp_bf8",), "float32"),
    TtnnDataType.BFLOAT4_B: DataTypeNames("bfloat4_b", ("bfp_bf4",), "float32"),
    TtnnDataType.INT32: DataTypeNames("int32", ("si32", "i32"), "int32"),
    TtnnDataType.UINT32: DataTypeNames("uint32", ("u32",), "int64"),
    TtnnDataType.UINT16: DataTypeNames("uint16", ("u16",), "int32"),
    TtnnDataType.UINT8: DataTypeNames("uint8", ("u8",), "uint8"),
}
"""Every ttnn data type's spellings: the one table of data-type names."""

_BY_NAME: dict[str, TtnnDataType] = {
    spelling: dtype
    for dtype, names in DATA_TYPE_NAMES.items()
    for spelling in (names.name, *names.aliases, TTNN_TO_DATA_FORMAT[dtype].name.lower())
}

_TTNN_NAMES: dict[DataFormat, str] = {
    TTNN_TO_DATA_FORMAT[dtype]: names.name for dtype, names in DATA_TYPE_NAMES.items()
}


def data_type_named(text: str) -> TtnnDataType | None:
    """The ttnn data type ``text`` spells (any case; canonical name or alias), else None."""
    return _BY_NAME.get(text.lower())


def data_type_name(dtype: TtnnDataType | int) -> str:
    """ttnn's spelling of a data type: ``bfloat16``, ``bfloat8_b``, ``uint32``."""
    return DATA_TYPE_NAMES[TtnnDataType(int(dtype))].name


def format_name(fmt: DataFormat) -> str:
    """``Bfp8_b (bfloat8_b)``: the device name plus the ttnn name where one exists."""
    ttnn = _TTNN_NAMES.get(fmt)
    return f"{fmt.name} ({ttnn})" if ttnn else fmt.name


def unsupported(fmt: DataFormat, what: str, hint: str | None = None) -> FormatError:
    """The one error for "this format cannot do that", naming the format."""
    return FormatError(
        f"data format {format_name(fmt)} is not supported for {what}",
        rule=RULE_UNSUPPORTED,
        hint=hint,
    )


def as_data_format(fmt: DataFormat | int) -> DataFormat:
    """Normalise an int / enum to ``DataFormat``; an unknown value is a ``FormatError``."""
    if isinstance(fmt, DataFormat):
        return fmt
    if isinstance(fmt, TtnnDataType):
        return TTNN_TO_DATA_FORMAT[fmt]
    try:
        return DataFormat(int(fmt))
    except (ValueError, TypeError):
        raise FormatError(f"{fmt!r} is not a tt::DataFormat value", rule=RULE_UNSUPPORTED) from None


def is_block_float(fmt: DataFormat | int) -> bool:
    """True for Bfp8/4/2 and their "_b" variants."""
    return as_data_format(fmt) in BLOCK_FLOAT


def is_integer(fmt: DataFormat | int) -> bool:
    """True for the integer formats (int32, uint32, uint16, uint8, int8, raw)."""
    return as_data_format(fmt) in INTEGER_DTYPE


def element_size(fmt: DataFormat | int) -> int:
    """Bytes per element (``datum_size``); block-float formats have none (FormatError)."""
    fmt = as_data_format(fmt)
    size = ELEMENT_SIZE.get(fmt)
    if size is None:
        hint = "use tile_size_bytes(fmt, tile)" if fmt in BLOCK_FLOAT else None
        raise unsupported(fmt, "a per-element size", hint)
    return size


def decoded_dtype(fmt: DataFormat | int) -> np.dtype:
    """The numpy dtype ``decode_tiles``/``decode_elements`` return for ``fmt``."""
    fmt = as_data_format(fmt)
    if fmt in FLOAT_FORMATS:
        return np.dtype(np.float32)
    dtype = INTEGER_DTYPE.get(fmt)
    if dtype is None:
        raise unsupported(fmt, "decoding")
    return dtype
