"""bfloat16 codec (tilewright.device.formats.bf16), reference §2.2.

The slow reference rounds on the real line with exact fractions -- an independent
formulation of tt-metal's fp32_to_bf16_bits_round_to_nearest_even.
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
    bf16_bits_to_float32,
    decode_tiles,
    encode_tiles,
    float32_to_bf16_bits,
    float32_to_bf16_bits_truncate,
)


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


def test_matches_ml_dtypes_on_non_nan_values():
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 2**32, size=100_000, dtype=np.uint32)
    values = bits.view(np.float32)
    values = values[~np.isnan(values)]
    expected = values.astype(ml_dtypes.bfloat16).view(np.uint16)
    assert (float32_to_bf16_bits(values) == expected).all()


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
