"""bfloat16 codec (tilewright.device.formats.bf16), reference §2.2.

The slow reference rounds on the real line with exact fractions -- an independent
formulation of tt-metal's fp32_to_bf16_bits_round_to_nearest_even.  The codec is numpy
integer arithmetic (``ml_dtypes`` is a test dependency only, issue 22); the tests at the
end check it bit for bit against ``ml_dtypes``' casts.
"""

import math
import struct
from fractions import Fraction

import ml_dtypes
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tilewright.device.formats import (
    DataFormat,
    TILE_32x32,
    bf16_bits_to_float32,
    decode_block,
    decode_tiles,
    encode_block,
    encode_tiles,
    float32_to_bf16_bits,
    float32_to_bf16_bits_truncate,
)
from tilewright.device.formats.bf16 import is_bfloat16_dtype, round_to_bf16


def f32_bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


def bits_f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def bf16_magnitude(pattern: int) -> Fraction:
    """Exact value of a non-negative bf16 pattern; 0x7F80 counts as 2**128 (IEEE's virtual next)."""
    exponent, mantissa = pattern >> 7, pattern & 0x7F
    if exponent == 0:
        return Fraction(mantissa, 2**133)
    return Fraction(128 + mantissa, 128) * Fraction(2) ** (exponent - 127)


def ref_bf16(value: float) -> int:
    if math.isnan(value):
        return 0x7FC0
    bits = f32_bits(value)
    sign, magnitude = bits >> 31, bits & 0x7FFFFFFF
    if magnitude >= 0x7F800000:  # infinity
        return (sign << 15) | 0x7F80
    exact = Fraction(bits_f32(magnitude))
    low = magnitude >> 16
    high = low + 1
    below, above = exact - bf16_magnitude(low), bf16_magnitude(high) - exact
    pick = low if below < above else high if above < below else (low if low % 2 == 0 else high)
    return (sign << 15) | pick


def ref_encode(values: np.ndarray) -> np.ndarray:
    return np.array([ref_bf16(float(v)) for v in values.ravel()], dtype=np.uint16)


def test_known_values():
    cases = [  # a list: 0.0 and -0.0 are equal dict keys
        (1.0, 0x3F80),
        (-2.0, 0xC000),
        (0.0, 0x0000),
        (-0.0, 0x8000),
        (math.inf, 0x7F80),
        (-math.inf, 0xFF80),
        (bits_f32(0x3F808000), 0x3F80),  # tie, kept LSB even -> down
        (bits_f32(0x3F818000), 0x3F82),  # tie, kept LSB odd -> up
        (bits_f32(0x3F808001), 0x3F81),  # just above the tie -> up
        (bits_f32(0x3F807FFF), 0x3F80),  # just below the tie -> down
        (bits_f32(0x7F7FFFFF), 0x7F80),  # float32 max rounds to inf
        (bits_f32(0x7F7F7FFF), 0x7F7F),  # stays at bf16 max
        (bits_f32(0x00000001), 0x0000),  # smallest denormal rounds to 0
        (bits_f32(0x00018000), 0x0002),  # denormal tie with odd LSB -> up (no flush)
    ]
    values = np.array([value for value, _ in cases], dtype=np.float32)
    got = float32_to_bf16_bits(values)
    assert [hex(v) for v in got] == [hex(bits) for _, bits in cases]


def test_every_nan_becomes_7fc0():
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x7FBFFFFF], dtype=np.uint32)
    assert (float32_to_bf16_bits(nans.view(np.float32)) == 0x7FC0).all()


def test_truncate():
    values = np.array([0x3F81FFFF, 0xBF80FFFF, 0x7F800001], dtype=np.uint32).view(np.float32)
    assert list(float32_to_bf16_bits_truncate(values)) == [0x3F81, 0xBF80, 0x7F80]
    assert list(float32_to_bf16_bits(values, truncate=True)) == [0x3F81, 0xBF80, 0x7F80]


def test_bfloat16_input_is_copied_raw():
    raw = np.array([0x7FC1, 0x3F80, 0x8001], dtype=np.uint16)
    assert (float32_to_bf16_bits(raw.view(ml_dtypes.bfloat16)) == raw).all()


def test_decode_exact_and_round_trip_of_every_pattern():
    patterns = np.arange(1 << 16, dtype=np.uint16)
    values = bf16_bits_to_float32(patterns)
    assert (values.view(np.uint32) == patterns.astype(np.uint32) << 16).all()
    not_nan = ~np.isnan(values)
    assert (float32_to_bf16_bits(values[not_nan]) == patterns[not_nan]).all()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=64))
def test_property_against_reference_raw_bits(bit_list):
    values = np.array(bit_list, dtype=np.uint32).view(np.float32)
    assert (float32_to_bf16_bits(values) == ref_encode(values)).all()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=True), min_size=1, max_size=64))
def test_property_against_reference_floats(float_list):
    values = np.array(float_list, dtype=np.float32)
    assert (float32_to_bf16_bits(values) == ref_encode(values)).all()


def test_tile_bytes_are_little_endian_patterns():
    values = np.zeros(1024, dtype=np.float32)
    values[:3] = [1.0, -2.0, 0.5]
    data = encode_tiles(values, DataFormat.Float16_b)
    assert data.shape == (2048,) and data.dtype == np.uint8
    assert list(data[:6]) == [0x80, 0x3F, 0x00, 0xC0, 0x00, 0x3F]
    assert (decode_tiles(data, DataFormat.Float16_b) == values).all()


# --- bit-identity with ml_dtypes (the codec replaced its casts) --------------------------------


def float32_patterns() -> np.ndarray:
    """float32 bit patterns that exercise every rounding path: random ones, every bf16 value
    with each interesting low half (0, the tie, either side of it, all ones), denormals, the
    ends of the range, infinities and NaNs of both signs with payloads high and low."""
    rng = np.random.default_rng(22)
    random = rng.integers(0, 2**32, size=1_000_000, dtype=np.uint64).astype(np.uint32)
    high = np.arange(1 << 16, dtype=np.uint32) << 16
    lows = np.array([0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF], dtype=np.uint32)
    grid = (high[:, None] | lows[None, :]).ravel()
    special = np.array(
        [
            0x00000001, 0x00007FFF, 0x00008000, 0x00018000, 0x007FFFFF, 0x00800000,
            0x7F7F7FFF, 0x7F7F8000, 0x7F7FFFFF, 0x7F800000, 0x7F800001, 0x7F808000,
            0x7FBFFFFF, 0x7FC00000, 0x7FC00001, 0x7FFFFFFF,
        ],
        dtype=np.uint32,
    )  # fmt: skip
    special = np.concatenate([special, special | 0x80000000])
    return np.concatenate([random, grid, special])


def test_patterns_cover_the_edge_cases():
    values = float32_patterns().view(np.float32)
    assert np.isnan(values).sum() > 1000 and np.isinf(values).sum() >= 4
    assert (np.abs(values[np.isfinite(values)]) < np.finfo(np.float32).tiny).sum() > 1000
    ties = (float32_patterns() & 0xFFFF) == 0x8000
    assert ties.sum() >= 1 << 16


def test_round_to_bf16_is_ml_dtypes_cast_on_every_pattern():
    values = float32_patterns().view(np.float32)
    with np.errstate(invalid="ignore"):
        expected = values.astype(ml_dtypes.bfloat16).astype(np.float32)
    assert (round_to_bf16(values).view(np.uint32) == expected.view(np.uint32)).all()


def test_encode_is_ml_dtypes_cast_except_nan():
    values = float32_patterns().view(np.float32)
    with np.errstate(invalid="ignore"):
        expected = values.astype(ml_dtypes.bfloat16).view(np.uint16)
    nan = np.isnan(values)
    got = float32_to_bf16_bits(values)
    assert (got[~nan] == expected[~nan]).all()
    assert (got[nan] == 0x7FC0).all()  # tt-metal's one NaN; ml_dtypes keeps the sign
    assert (expected[nan] & 0x7FFF == 0x7FC0).all()


def test_widening_is_ml_dtypes_cast_on_all_2_16_patterns():
    patterns = np.arange(1 << 16, dtype=np.uint16)
    expected = patterns.view(ml_dtypes.bfloat16).astype(np.float32)
    assert (bf16_bits_to_float32(patterns).view(np.uint32) == expected.view(np.uint32)).all()
    # and the round trip through ml_dtypes' narrowing is the identity on non-NaN patterns
    values = bf16_bits_to_float32(patterns)
    keep = ~np.isnan(values)
    assert (values[keep].astype(ml_dtypes.bfloat16).view(np.uint16) == patterns[keep]).all()


def test_round_to_bf16_keeps_shape_and_sign_of_nan():
    x = np.array(-np.nan, dtype=np.float32)
    out = round_to_bf16(x)
    assert out.shape == () and out.dtype == np.float32
    assert out.view(np.uint32) == 0xFFC00000
    grid = round_to_bf16(np.full((3, 4), 1 + 2**-8 + 2**-10, dtype=np.float32))
    assert grid.shape == (3, 4) and (grid == np.float32(1 + 2**-7)).all()


def test_ml_dtypes_array_is_recognised_without_importing_it():
    assert is_bfloat16_dtype(np.dtype(ml_dtypes.bfloat16))
    assert not is_bfloat16_dtype(np.dtype(np.float16))
    assert not is_bfloat16_dtype(np.dtype(np.uint16))
    raw = np.arange(1 << 16, dtype=np.uint16)
    assert (float32_to_bf16_bits(raw.view(ml_dtypes.bfloat16)) == raw).all()


def test_block_codec_round_trip_matches_ml_dtypes():
    rng = np.random.default_rng(5)
    matrix = (rng.standard_normal((64, 96)) * 100).astype(np.float32)
    data = encode_block(matrix, DataFormat.Float16_b)
    expected = matrix.astype(ml_dtypes.bfloat16).astype(np.float32)
    assert (decode_block(data, DataFormat.Float16_b, TILE_32x32, 2, 3) == expected).all()
