"""bfloat16 (``DataFormat.Float16_b``): float32 <-> bf16 bit patterns, vectorised.

Host rounding is tt-metal's ``fp32_to_bf16_bits_round_to_nearest_even``
(``tt_metal/impl/data_format/bfloat16.cpp``, reference §2.2)::

    if isnan(x): return 0x7FC0                    # every NaN, either sign, any payload
    u = bits(x); return (u + 0x7FFF + ((u >> 16) & 1)) >> 16

so ties go to even, values past the largest bf16 round to +-inf, infinities stay
infinities, and float32 denormals round like any other value (no flush).  The truncating
variant (``bfloat16::truncate``) keeps the upper 16 bits as they are (NaN payloads that live
only in the low bits become infinities).  Decoding is exact: ``bits << 16``.

Inputs are converted to float32 first (a float64 input is therefore rounded twice, as it
would be on its way into tt-metal's float API).  An ``ml_dtypes.bfloat16`` input is taken
bit for bit, like a torch bf16 tensor (reference §2.2: "Torch bf16 input is copied raw").
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

__all__ = [
    "BF16_DTYPE",
    "BF16_NAN",
    "bf16_bits_to_float32",
    "decode_bf16",
    "encode_bf16",
    "float32_to_bf16_bits",
    "float32_to_bf16_bits_truncate",
]

BF16_NAN = 0x7FC0
BF16_DTYPE = np.dtype(ml_dtypes.bfloat16)
_BF16 = BF16_DTYPE


def float32_to_bf16_bits(x: np.ndarray, *, truncate: bool = False) -> np.ndarray:
    """bf16 bit patterns (uint16) of ``x``: round-to-nearest-even, NaN -> 0x7FC0.

    Args:
        x: any real array; non-float32 inputs are converted to float32 first, except
            ``ml_dtypes.bfloat16`` arrays, whose bits are returned unchanged.
        truncate: keep the upper 16 bits instead of rounding (``bfloat16::truncate``).
    """
    x = np.asarray(x)
    if x.dtype == _BF16:
        return x.view(np.uint16).copy()
    floats = np.ascontiguousarray(x, dtype=np.float32)
    if truncate:
        return (floats.view(np.uint32) >> 16).astype(np.uint16)
    # ml_dtypes' float32 -> bfloat16 cast is the same round-to-nearest-even bias trick in
    # C (checked equal on all 2**32 non-NaN patterns); only NaN needs tt-metal's 0x7FC0
    with np.errstate(invalid="ignore"):
        out = floats.astype(_BF16).view(np.uint16)
    nan = np.isnan(floats)
    if nan.any():
        out[nan] = BF16_NAN
    return out


def float32_to_bf16_bits_truncate(x: np.ndarray) -> np.ndarray:
    """bf16 bit patterns of ``x`` by truncation (``bfloat16::truncate``)."""
    return float32_to_bf16_bits(x, truncate=True)


def bf16_bits_to_float32(bits: np.ndarray) -> np.ndarray:
    """Exact float32 values of bf16 bit patterns (any integer array holding 16-bit values).

    Widening is ``bits << 16`` (NaN payloads kept); done by ml_dtypes' C cast.
    """
    patterns = np.ascontiguousarray(bits, dtype=np.uint16)
    return patterns.view(_BF16).astype(np.float32)


def encode_bf16(values: np.ndarray, *, truncate: bool = False) -> np.ndarray:
    """``(..., n)`` values -> ``(..., 2n)`` little-endian bf16 bytes."""
    bits = float32_to_bf16_bits(values, truncate=truncate).astype("<u2", copy=False)
    return bits.view(np.uint8)


def decode_bf16(data: np.ndarray) -> np.ndarray:
    """``(..., 2n)`` little-endian bf16 bytes -> ``(..., n)`` float32."""
    data = np.ascontiguousarray(data, dtype=np.uint8)
    return bf16_bits_to_float32(data.view("<u2"))
