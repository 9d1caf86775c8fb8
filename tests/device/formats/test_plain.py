"""Plain formats: float32, float16 and integers (tilewright.device.formats.plain), §2.5."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilewright.device.formats import DataFormat, decode_tiles, encode_tiles, tile_size_bytes
from tilewright.errors import FormatError

F = DataFormat
INTEGERS = {
    F.Int32: np.int32, F.UInt32: np.uint32, F.UInt16: np.uint16, F.UInt8: np.uint8,
    F.Int8: np.int8, F.RawUInt8: np.uint8, F.RawUInt16: np.uint16, F.RawUInt32: np.uint32,
}  # fmt: skip


def test_float32_is_bit_for_bit_little_endian():
    values = np.zeros(1024, dtype=np.float32)
    values[:2] = [1.0, -2.5]
    values.view(np.uint32)[2] = 0x7FC00123  # NaN payload kept
    data = encode_tiles(values, F.Float32)
    assert data.shape == (4096,)
    assert list(data[:8]) == [0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x20, 0xC0]
    decoded = decode_tiles(data, F.Float32)
    assert (decoded.view(np.uint32) == values.view(np.uint32)).all()
    assert not np.shares_memory(decoded, data)


def test_float16_rounds_to_nearest_even():
    values = np.zeros(1024, dtype=np.float32)
    values[:4] = [1.0, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 70000.0]
    decoded = decode_tiles(encode_tiles(values, F.Float16), F.Float16)
    assert list(decoded[:4]) == [1.0, 1.0, 1.0 + 2 * 2.0**-10, np.inf]


@pytest.mark.parametrize("fmt", list(INTEGERS))
def test_integer_round_trip_full_range(fmt):
    dtype = INTEGERS[fmt]
    info = np.iinfo(dtype)
    values = np.linspace(info.min, info.max, 1024, dtype=np.float64).astype(dtype)
    values[:2] = [info.min, info.max]
    data = encode_tiles(values, fmt)
    assert data.shape == (tile_size_bytes(fmt),)
    decoded = decode_tiles(data, fmt)
    assert decoded.dtype == dtype and (decoded == values).all()


def test_int32_bytes_are_twos_complement_little_endian():
    values = np.zeros(1024, dtype=np.int64)
    values[:2] = [-2, 0x01020304]
    data = encode_tiles(values, F.Int32)
    assert list(data[:8]) == [0xFE, 0xFF, 0xFF, 0xFF, 0x04, 0x03, 0x02, 0x01]


@pytest.mark.parametrize(
    ("fmt", "bad", "match"),
    [
        (F.UInt32, -1, r"value -1 at flat index 5 is outside 0\.\.4294967295 of UInt32 \(uint32\)"),
        (F.UInt16, 65536, r"value 65536 .* UInt16 \(uint16\)"),
        (F.UInt8, 256, r"value 256 .* UInt8 \(uint8\)"),
        (F.Int8, -129, r"value -129 .* Int8"),
        (F.Int32, 2**31, r"value 2147483648 .* Int32 \(int32\)"),
    ],
)
def test_out_of_range_integers_are_errors(fmt, bad, match):
    values = np.zeros(1024, dtype=np.int64)
    values[5] = bad
    with pytest.raises(FormatError, match=match) as info:
        encode_tiles(values, fmt)
    assert info.value.rule == "format-range"
    assert "wrap=True" in info.value.hint


def test_wrap_is_a_c_cast():
    values = np.zeros(1024, dtype=np.int64)
    values[:3] = [-1, 2**32 + 5, 7]
    decoded = decode_tiles(encode_tiles(values, F.UInt32, wrap=True), F.UInt32)
    assert list(decoded[:3]) == [2**32 - 1, 5, 7]
    floats = np.zeros(1024, dtype=np.float32)
    floats[:3] = [-1.5, 300.7, 2.0**33]
    decoded = decode_tiles(encode_tiles(floats, F.UInt8, wrap=True), F.UInt8)
    assert list(decoded[:3]) == [255, 44, 0]


def test_floats_into_integers():
    values = np.zeros(1024, dtype=np.float32)
    values[:2] = [3.0, -7.0]
    assert list(decode_tiles(encode_tiles(values, F.Int32), F.Int32)[:2]) == [3, -7]
    values[9] = 2.5
    with pytest.raises(FormatError, match=r"value 2\.5 at flat index 9 is not an integer"):
        encode_tiles(values, F.Int32)
    values[9] = np.nan
    with pytest.raises(FormatError, match=r"value nan at flat index 9 is not finite"):
        encode_tiles(values, F.Int32, wrap=True)


def test_booleans_and_bad_dtypes():
    flags = np.zeros(1024, dtype=bool)
    flags[0] = True
    assert decode_tiles(encode_tiles(flags, F.UInt8), F.UInt8)[0] == 1
    with pytest.raises(FormatError, match="dtype complex128"):
        encode_tiles(np.zeros(1024, dtype=complex), F.Int32)
    with pytest.raises(FormatError, match=r"dtype <U1 in Float32"):
        encode_tiles(np.array(["a"] * 1024), F.Float32)


@settings(max_examples=100, deadline=None)
@given(
    fmt=st.sampled_from(list(INTEGERS)),
    values=st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=32),
)
def test_wrap_matches_modular_arithmetic(fmt, values):
    dtype = INTEGERS[fmt]
    bits = np.iinfo(dtype).bits
    tile = np.zeros(1024, dtype=np.int64)
    tile[: len(values)] = values
    decoded = decode_tiles(encode_tiles(tile, fmt, wrap=True), fmt)
    for value, got in zip(values, decoded, strict=False):
        wrapped = value % 2**bits
        if np.iinfo(dtype).min < 0 and wrapped >= 2 ** (bits - 1):
            wrapped -= 2**bits
        assert int(got) == wrapped
