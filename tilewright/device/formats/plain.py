"""Plain element formats: float32, float16 and the integers, stored little-endian.

reference §2.5: int32 / uint32 / uint16 / uint8 are stored plainly, no exponent section
(``tt_metal/impl/data_format/tile.cpp`` sizes; ``int8.cpp`` / ``uint8.cpp`` pack two's
complement bytes four to a little-endian word).  Float32 is stored bit for bit (NaN
payloads included); Float16 (IEEE half) uses numpy's round-to-nearest-even cast, overflow
to +-inf.  bfloat16 lives in ``bf16``.

Integer range policy (a decision, not tt-metal's): the host path in tt-metal typecasts
silently, which hides bugs, so a value that does not fit -- out of range, NaN / Inf, or a
float with a fractional part -- is a ``FormatError`` naming the format, the offending
value and its flat index.  ``wrap=True`` opts into C-cast behaviour instead: floats are
truncated toward zero, then every value is reduced modulo ``2**bits`` (non-finite floats
are still rejected: no cast defines them).  Booleans encode as 0 / 1.
"""

from __future__ import annotations

import numpy as np

from tilewright.errors import FormatError

from .dataformat import (
    INTEGER_DTYPE,
    RULE_RANGE,
    DataFormat,
    format_name,
    unsupported,
)

__all__ = ["PLAIN_STORAGE", "decode_plain", "encode_plain", "to_integer"]

PLAIN_STORAGE: dict[DataFormat, np.dtype] = {
    DataFormat.Float32: np.dtype("<f4"),
    DataFormat.Float16: np.dtype("<f2"),
    **{fmt: dtype.newbyteorder("<") for fmt, dtype in INTEGER_DTYPE.items()},
}
"""Little-endian storage dtype of every plain format."""


def _range_error(fmt: DataFormat, x: np.ndarray, bad: np.ndarray, why: str) -> FormatError:
    index = int(np.flatnonzero(bad)[0])
    value = x.reshape(-1)[index].item()
    return FormatError(
        f"value {value!r} at flat index {index} {why} {format_name(fmt)}",
        rule=RULE_RANGE,
        hint="pass wrap=True to wrap modulo 2**bits like a C cast",
    )


def to_integer(values: np.ndarray, fmt: DataFormat, *, wrap: bool = False) -> np.ndarray:
    """``values`` as the integer dtype of ``fmt``, checked (or wrapped) per the module policy."""
    dtype = INTEGER_DTYPE[fmt]
    x = np.asarray(values)
    kind = x.dtype.kind
    if kind == "b" or (kind in "iu" and np.can_cast(x.dtype, dtype, "safe")):
        return x.astype(dtype)
    info = np.iinfo(dtype)
    if kind in "iu":
        if not wrap:
            bad = (x < info.min) | (x > info.max)
            if bad.any():
                raise _range_error(fmt, x, bad, f"is outside {info.min}..{info.max} of")
        return x.astype(dtype)  # integer casts wrap modulo 2**bits
    if kind == "f":
        finite = np.isfinite(x)
        if not finite.all():
            raise _range_error(fmt, x, ~finite, "is not finite and cannot be stored in")
        if wrap:
            truncated = np.trunc(x.astype(np.float64))
            modulus = float(2**info.bits)
            wrapped = np.mod(truncated, modulus)  # exact for integral float64 values
            return wrapped.astype(np.uint64).astype(dtype)
        fractional = x != np.trunc(x)
        if fractional.any():
            raise _range_error(fmt, x, fractional, "is not an integer; it cannot be stored in")
        bad = (x < info.min) | (x > info.max)
        if bad.any():
            raise _range_error(fmt, x, bad, f"is outside {info.min}..{info.max} of")
        return x.astype(dtype)
    raise FormatError(
        f"cannot store an array of dtype {x.dtype} in {format_name(fmt)}",
        rule=RULE_RANGE,
    )


def _to_float(values: np.ndarray, fmt: DataFormat) -> np.ndarray:
    x = np.asarray(values)
    if x.dtype.kind not in "biuf" and x.dtype.name != "bfloat16":
        raise FormatError(
            f"cannot store an array of dtype {x.dtype} in {format_name(fmt)}",
            rule=RULE_RANGE,
        )
    return x


def encode_plain(values: np.ndarray, fmt: DataFormat, *, wrap: bool = False) -> np.ndarray:
    """``(..., n)`` values -> ``(..., n * element_size)`` little-endian bytes (uint8)."""
    storage = PLAIN_STORAGE.get(fmt)
    if storage is None:
        raise unsupported(fmt, "plain encoding")
    if fmt in INTEGER_DTYPE:
        x = to_integer(values, fmt, wrap=wrap)
    else:
        x = _to_float(values, fmt)
    with np.errstate(over="ignore"):  # float16: overflow to +-inf is the defined result
        stored = np.array(x, dtype=storage, order="C", ndmin=1)  # always a new array
    return stored.view(np.uint8)


def decode_plain(data: np.ndarray, fmt: DataFormat) -> np.ndarray:
    """``(..., n * element_size)`` little-endian bytes -> ``(..., n)`` native-endian values."""
    storage = PLAIN_STORAGE.get(fmt)
    if storage is None:
        raise unsupported(fmt, "plain decoding")
    data = np.ascontiguousarray(data, dtype=np.uint8)
    values = data.view(storage)
    native = INTEGER_DTYPE.get(fmt, np.dtype(np.float32))
    return values.astype(native)  # always a copy: never a view into device memory
