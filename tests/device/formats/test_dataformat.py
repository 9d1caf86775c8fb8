"""Format enums and tables (tilewright.device.formats.dataformat), reference §2.1."""

import numpy as np
import pytest

from tilewright.device.formats import (
    BLOCK_FLOAT,
    TTNN_TO_DATA_FORMAT,
    DataFormat,
    ExponentKind,
    TtnnDataType,
    decoded_dtype,
    element_size,
    is_block_float,
    is_integer,
)
from tilewright.device.formats.dataformat import as_data_format
from tilewright.errors import FormatError

DEVICE_VALUES = {
    "Float32": 0, "Float16": 1, "Bfp8": 2, "Bfp4": 3, "Tf32": 4, "Float16_b": 5,
    "Bfp8_b": 6, "Bfp4_b": 7, "Int32": 8, "UInt16": 9, "Lf8": 10, "Bfp2": 11, "Int8": 14,
    "Bfp2_b": 15, "UInt32": 24, "Fp8_e4m3": 0x1A, "UInt8": 30, "RawUInt8": 0xF0,
    "RawUInt16": 0xF1, "RawUInt32": 0xF2, "Invalid": 0xFF,
}  # fmt: skip


def test_device_values():
    assert {f.name: int(f) for f in DataFormat} == DEVICE_VALUES


def test_ttnn_values():
    expected = {
        "BFLOAT16": 0, "FLOAT32": 1, "UINT32": 2, "BFLOAT8_B": 3, "BFLOAT4_B": 4, "UINT8": 5,
        "UINT16": 6, "INT32": 7, "INVALID": 8,
    }  # fmt: skip
    assert {d.name: int(d) for d in TtnnDataType} == expected


def test_ttnn_to_device_mapping():
    assert TTNN_TO_DATA_FORMAT[TtnnDataType.BFLOAT16] is DataFormat.Float16_b
    assert TTNN_TO_DATA_FORMAT[TtnnDataType.FLOAT32] is DataFormat.Float32
    assert TTNN_TO_DATA_FORMAT[TtnnDataType.BFLOAT8_B] is DataFormat.Bfp8_b
    assert TTNN_TO_DATA_FORMAT[TtnnDataType.BFLOAT4_B] is DataFormat.Bfp4_b
    assert TTNN_TO_DATA_FORMAT[TtnnDataType.UINT8] is DataFormat.UInt8
    assert TTNN_TO_DATA_FORMAT[TtnnDataType.UINT16] is DataFormat.UInt16
    assert TTNN_TO_DATA_FORMAT[TtnnDataType.UINT32] is DataFormat.UInt32
    assert TTNN_TO_DATA_FORMAT[TtnnDataType.INT32] is DataFormat.Int32
    assert set(TTNN_TO_DATA_FORMAT) == set(TtnnDataType)


def test_block_float_table():
    assert {f: (s.mantissa_bits, s.exponent) for f, s in BLOCK_FLOAT.items()} == {
        DataFormat.Bfp8_b: (7, ExponentKind.B),
        DataFormat.Bfp4_b: (3, ExponentKind.B),
        DataFormat.Bfp2_b: (1, ExponentKind.B),
        DataFormat.Bfp8: (7, ExponentKind.A),
        DataFormat.Bfp4: (3, ExponentKind.A),
        DataFormat.Bfp2: (1, ExponentKind.A),
    }
    assert all(is_block_float(f) for f in BLOCK_FLOAT)
    assert not is_block_float(DataFormat.Float16_b)
    assert is_block_float(6)


@pytest.mark.parametrize(
    ("fmt", "size"),
    [
        (DataFormat.Float32, 4), (DataFormat.Float16_b, 2), (DataFormat.Float16, 2),
        (DataFormat.Int32, 4), (DataFormat.UInt32, 4), (DataFormat.UInt16, 2),
        (DataFormat.UInt8, 1), (DataFormat.Int8, 1), (DataFormat.RawUInt32, 4),
    ],
)  # fmt: skip
def test_element_size(fmt, size):
    assert element_size(fmt) == size


def test_element_size_of_block_float_is_an_error():
    with pytest.raises(FormatError, match=r"Bfp8_b \(bfloat8_b\)") as info:
        element_size(DataFormat.Bfp8_b)
    assert info.value.rule == "format-unsupported"
    assert "tile_size_bytes" in info.value.hint


def test_decoded_dtypes():
    assert decoded_dtype(DataFormat.Bfp4_b) == np.float32
    assert decoded_dtype(DataFormat.Float16_b) == np.float32
    assert decoded_dtype(DataFormat.Int32) == np.int32
    assert decoded_dtype(DataFormat.UInt16) == np.uint16
    assert is_integer(DataFormat.UInt8) and not is_integer(DataFormat.Float32)
    with pytest.raises(FormatError, match="Tf32"):
        decoded_dtype(DataFormat.Tf32)


def test_as_data_format():
    assert as_data_format(6) is DataFormat.Bfp8_b
    assert as_data_format(TtnnDataType.BFLOAT16) is DataFormat.Float16_b
    with pytest.raises(FormatError, match="123 is not a tt::DataFormat"):
        as_data_format(123)


def test_data_type_names_are_one_table():
    """Every ttnn data type has one canonical name; no spelling names two types."""
    from tilewright.device.formats import DATA_TYPE_NAMES, data_type_name, data_type_named
    from tilewright.device.formats.dataformat import _BY_NAME

    assert set(DATA_TYPE_NAMES) == {t for t in TtnnDataType if t.name != "INVALID"}
    for dtype, names in DATA_TYPE_NAMES.items():
        assert names.name == dtype.name.lower() == data_type_name(dtype)
        for spelling in (names.name, *names.aliases):
            assert data_type_named(spelling.upper()) is dtype
    spellings = [s for n in DATA_TYPE_NAMES.values() for s in (n.name, *n.aliases)]
    assert len(spellings) == len(set(spellings))
    assert data_type_named("float16_b") is TtnnDataType.BFLOAT16  # the tt::DataFormat name
    assert data_type_named("float16") is None  # the device's Float16 has no ttnn type
    assert len(_BY_NAME) >= len(spellings)


def test_every_spelling_reaches_the_languages():
    """make_dfb strings, op-registry formats and ttnn names come from the same table."""
    from tilewright.device.ops.params import format_name_of
    from tilewright.lang.declare import parse_dtype
    from tilewright.ttnn.types import DataType

    assert parse_dtype("bfp_bf8") is DataType.BFLOAT8_B
    assert parse_dtype("si32") is DataType.INT32
    assert format_name_of("bfp8_b") == "bfloat8_b"
    assert format_name_of(DataType.UINT16) == "uint16"
    assert format_name_of("nope") is None
