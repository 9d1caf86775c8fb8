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

The codecs are plain numpy integer arithmetic, not ``ml_dtypes``' casts: importing
``ml_dtypes`` 0.7 costs about a second, more than the rest of ``import ttl`` (issue 22).
A user's ``ml_dtypes.bfloat16`` array is recognised by its dtype's name, so it is accepted
without this module importing ``ml_dtypes``.  ``tests/device/formats/test_bf16.py`` checks
every function here bit for bit against ``ml_dtypes`` (all 2**16 patterns both ways, and
float32 patterns with NaNs, infinities, denormals and ties).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "BF16_NAN",
    "bf16_bits_to_float32",
    "decode_bf16",
    "encode_bf16",
    "float32_to_bf16_bits",
    "float32_to_bf16_bits_truncate",
    "is_bfloat16_dtype",
    "round_to_bf16",
]

BF16_NAN = 0x7FC0
"""tt-metal's one bf16 NaN (quiet, positive)."""

_SIGN = np.uint32(0x8000_0000)


def is_bfloat16_dtype(dtype: np.dtype) -> bool:
    """True for ``ml_dtypes.bfloat16`` (by name and size: ``ml_dtypes`` is not imported)."""
    return dtype.name == "bfloat16" and dtype.itemsize == 2


def _nearest_even(u: np.ndarray) -> np.ndarray:
    """Upper 16 bits of float32 patterns ``u`` (uint32) after round-to-nearest-even.

    NaN lanes come out as garbage (a payload only in the low bits rounds to inf, all-ones
    wraps); callers overwrite them.  Non-NaN patterns never overflow: the largest is
    -inf, ``0xFF800000 + 0x8000``.
    """
    t = u >> 16
    t &= 1
    t += u
    t += 0x7FFF
    t >>= 16
    return t.astype(np.uint16)


def float32_to_bf16_bits(x: np.ndarray, *, truncate: bool = False) -> np.ndarray:
    """bf16 bit patterns (uint16) of ``x``: round-to-nearest-even, NaN -> 0x7FC0.

    Args:
        x: any real array; non-float32 inputs are converted to float32 first, except
            ``ml_dtypes.bfloat16`` arrays, whose bits are returned unchanged.
        truncate: keep the upper 16 bits instead of rounding (``bfloat16::truncate``).
    """
    x = np.asarray(x)
    if is_bfloat16_dtype(x.dtype):
        return x.view(np.uint16).copy()
    floats = np.ascontiguousarray(x, dtype=np.float32)
    u = floats.view(np.uint32)
    if truncate:
        return (u >> 16).astype(np.uint16)
    out = _nearest_even(u)
    nan = np.isnan(floats)
    if nan.any():
        out[nan] = BF16_NAN
    return out


def float32_to_bf16_bits_truncate(x: np.ndarray) -> np.ndarray:
    """bf16 bit patterns of ``x`` by truncation (``bfloat16::truncate``)."""
    return float32_to_bf16_bits(x, truncate=True)


def bf16_bits_to_float32(bits: np.ndarray) -> np.ndarray:
    """Exact float32 values of bf16 bit patterns (any integer array holding 16-bit values).

    Widening is ``bits << 16`` (NaN payloads kept).  The result is C-contiguous, in the
    shape of ``bits`` (a strided view is gathered by the one widening copy).
    """
    patterns = np.asarray(bits)
    if patterns.dtype != np.uint16:
        patterns = patterns.astype(np.uint16)
    wide = patterns.astype(np.uint32, order="C")
    wide <<= 16
    return wide.view(np.float32)


def round_to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 values of ``x`` rounded to bf16 and widened back (a value cast).

    Round-to-nearest-even as :func:`float32_to_bf16_bits`, but a NaN keeps its sign and
    becomes the quiet NaN ``sign | 0x7FC0``, as ``ml_dtypes``' cast (Eigen's
    ``float_to_bfloat16_rtne``) does: this is the value an elementwise ``typecast`` gives.
    ``x`` is converted to float32 first.
    """
    floats = np.asarray(x, dtype=np.float32, order="C")
    flat = floats.reshape(-1)  # a view; 1-D so the in-place steps stay arrays for 0-D input
    u = flat.view(np.uint32)
    wide = _nearest_even(u).astype(np.uint32)
    wide <<= 16
    nan = np.isnan(flat)
    if nan.any():
        wide[nan] = (u[nan] & _SIGN) | np.uint32(BF16_NAN << 16)
    return wide.view(np.float32).reshape(floats.shape)


def encode_bf16(values: np.ndarray, *, truncate: bool = False) -> np.ndarray:
    """``(..., n)`` values -> ``(..., 2n)`` little-endian bf16 bytes."""
    bits = float32_to_bf16_bits(values, truncate=truncate).astype("<u2", copy=False)
    return bits.view(np.uint8)


def decode_bf16(data: np.ndarray) -> np.ndarray:
    """``(..., 2n)`` little-endian bf16 bytes -> ``(..., n)`` float32."""
    data = np.ascontiguousarray(data, dtype=np.uint8)
    return bf16_bits_to_float32(data.view("<u2"))
