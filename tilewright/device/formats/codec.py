"""The format-generic entry points: tiles, row-major pages and compute blocks <-> bytes.

Dispatch is a table keyed by ``DataFormat`` (``_ELEMENT_CODECS``, plus the block-float
codec for every format in ``dataformat.BLOCK_FLOAT``); a format without an entry -- Tf32,
Lf8, Fp8_e4m3, Invalid -- is a ``FormatError`` naming it.

* ``encode_tiles`` / ``decode_tiles``: tiles in device element order ``(..., th*tw)``
  <-> uint8 ``(..., tile_size_bytes)`` (reference §1.1, §2.3, §2.4).
* ``encode_elements`` / ``decode_elements``: row-major pages (ROW_MAJOR layout).  Block
  floats have no row-major form: ttnn stores ROW_MAJOR bfloat8_b / bfloat4_b tensors as
  float32 (reference §1.2), which is the ttnn layer's job.
* ``encode_block`` / ``decode_block``: the compute engine's hot path, a contiguous run of
  ``rows * cols`` tiles (row-major tile order) <-> a row-major matrix
  ``(rows*th, cols*tw)``.  bf16 and fp32 go through one strided copy; block floats are
  one table gather in row-major order.

Decoding returns float32 for float formats and the format's integer dtype for integer
formats, always as a new array (never a view into the caller's bytes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np

from tilewright.errors import FormatError

from .bf16 import bf16_bits_to_float32, decode_bf16, encode_bf16, float32_to_bf16_bits
from .blockfloat import decode_bfp_block, decode_bfp_tiles, encode_bfp_tiles
from .dataformat import (
    BLOCK_FLOAT,
    RULE_SHAPE,
    DataFormat,
    as_data_format,
    element_size,
    format_name,
    unsupported,
)
from .plain import PLAIN_STORAGE, decode_plain, encode_plain
from .tile import TILE_32x32, TileShape, tile_size_bytes
from .tilize import row_major_view, tilize

__all__ = [
    "ELEMENT_CODEC_FORMATS",
    "decode_block",
    "decode_elements",
    "decode_tiles",
    "encode_block",
    "encode_elements",
    "encode_tiles",
]

ByteSource: TypeAlias = np.ndarray | bytes | bytearray | memoryview


@dataclass(frozen=True, slots=True)
class _ElementCodec:
    """Element-wise codec: ``(..., n)`` values <-> ``(..., n * size)`` bytes."""

    encode: Callable[[np.ndarray, bool, bool], np.ndarray]  # (values, wrap, truncate)
    decode: Callable[[np.ndarray], np.ndarray]


def _plain_codec(fmt: DataFormat) -> _ElementCodec:
    return _ElementCodec(
        encode=lambda values, wrap, truncate: encode_plain(values, fmt, wrap=wrap),
        decode=lambda data: decode_plain(data, fmt),
    )


_ELEMENT_CODECS: dict[DataFormat, _ElementCodec] = {
    DataFormat.Float16_b: _ElementCodec(
        encode=lambda values, wrap, truncate: encode_bf16(values, truncate=truncate),
        decode=decode_bf16,
    ),
    **{fmt: _plain_codec(fmt) for fmt in PLAIN_STORAGE},
}
"""Every format with a per-element byte form."""

ELEMENT_CODEC_FORMATS: frozenset[DataFormat] = frozenset(_ELEMENT_CODECS)
"""Formats with a per-element codec (row-major pages); with ``BLOCK_FLOAT``, every format
that has a tile codec (the native runtime's format table is generated from both)."""

_ROW_MAJOR_BFP_HINT = (
    "block-float formats exist only as tiles; ttnn stores ROW_MAJOR bfloat8_b/bfloat4_b "
    "tensors as float32"
)


def _element_codec(fmt: DataFormat, what: str) -> _ElementCodec:
    codec = _ELEMENT_CODECS.get(fmt)
    if codec is None:
        hint = _ROW_MAJOR_BFP_HINT if fmt in BLOCK_FLOAT and what.startswith("row") else None
        raise unsupported(fmt, what, hint)
    return codec


def _as_bytes(data: ByteSource) -> np.ndarray:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return np.frombuffer(data, dtype=np.uint8)
    data = np.asarray(data)
    if data.dtype != np.uint8:
        raise FormatError(
            f"encoded data must be a uint8 array or a bytes-like object, got dtype {data.dtype}",
            rule=RULE_SHAPE,
        )
    return data


def _shape_error(message: str) -> FormatError:
    return FormatError(message, rule=RULE_SHAPE)


# --- tiles ----------------------------------------------------------------------------


def encode_tiles(
    values: np.ndarray,
    fmt: DataFormat | int,
    tile: TileShape = TILE_32x32,
    *,
    l1_alignment: int = 16,
    dram_alignment: int = 32,
    wrap: bool = False,
    truncate: bool = False,
) -> np.ndarray:
    """Encode tiles in device element order into their on-device bytes.

    Args:
        values: ``(..., th*tw)`` per tile, in device (TILED_NFACES) element order.
        fmt: the device data format.
        tile: the tile shape.
        l1_alignment: block-float exponent-section alignment (16 on WH and BH).
        dram_alignment: block-float whole-tile alignment (32 WH, 64 BH).
        wrap: integer formats wrap out-of-range values instead of raising.
        truncate: bf16 and block floats truncate instead of rounding to nearest even.

    Returns:
        uint8 ``(..., tile_size_bytes(fmt, tile))``.

    Raises:
        FormatError: unsupported format, wrong shape, or an integer value that does not fit.
    """
    fmt = as_data_format(fmt)
    values = np.asarray(values)
    if values.ndim == 0 or values.shape[-1] != tile.num_elements:
        raise _shape_error(
            f"encode_tiles({format_name(fmt)}) needs values of shape (..., "
            f"{tile.num_elements}) for {tile} tiles, got shape {values.shape}"
        )
    size = tile_size_bytes(fmt, tile, l1_alignment=l1_alignment, dram_alignment=dram_alignment)
    if fmt in BLOCK_FLOAT:
        return encode_bfp_tiles(
            values, fmt, tile, size, l1_alignment=l1_alignment, truncate=truncate
        )
    return _element_codec(fmt, "tiles").encode(values, wrap, truncate)


def _tile_bytes(data: ByteSource, fmt: DataFormat, size: int, what: str) -> np.ndarray:
    data = _as_bytes(data)
    if data.ndim == 1 and data.size != size:
        if data.size == 0 or data.size % size:
            raise _shape_error(
                f"{what}({format_name(fmt)}): {data.size} bytes is not a whole number of "
                f"{size}-byte tiles"
            )
        return data.reshape(-1, size)
    if data.ndim == 0 or data.shape[-1] != size:
        raise _shape_error(
            f"{what}({format_name(fmt)}) needs data of shape (..., {size}), got {data.shape}"
        )
    return data


def decode_tiles(
    data: ByteSource,
    fmt: DataFormat | int,
    tile: TileShape = TILE_32x32,
    *,
    l1_alignment: int = 16,
    dram_alignment: int = 32,
) -> np.ndarray:
    """Decode on-device tile bytes into values in device element order.

    Args:
        data: uint8 ``(..., tile_bytes)``; a flat buffer of ``k`` whole tiles is read as
            ``(k, tile_bytes)``.
        fmt, tile, l1_alignment, dram_alignment: as for ``encode_tiles``.

    Returns:
        ``(..., th*tw)``: float32 for float formats, the integer dtype for integer formats.
    """
    fmt = as_data_format(fmt)
    size = tile_size_bytes(fmt, tile, l1_alignment=l1_alignment, dram_alignment=dram_alignment)
    data = _tile_bytes(data, fmt, size, "decode_tiles")
    if fmt in BLOCK_FLOAT:
        return decode_bfp_tiles(data, fmt, tile, l1_alignment=l1_alignment)
    return _element_codec(fmt, "tiles").decode(data)


# --- row-major pages ------------------------------------------------------------------


def encode_elements(
    values: np.ndarray, fmt: DataFormat | int, *, wrap: bool = False, truncate: bool = False
) -> np.ndarray:
    """Row-major elements (flattened in C order) -> uint8 bytes ``(n * element_size,)``.

    Raises:
        FormatError: for block-float and other formats without a row-major form.
    """
    fmt = as_data_format(fmt)
    codec = _element_codec(fmt, "row-major elements")
    return codec.encode(np.ravel(values), wrap, truncate)


def decode_elements(data: ByteSource, fmt: DataFormat | int, count: int) -> np.ndarray:
    """The first ``count`` row-major elements stored in ``data`` (1-D, decoded dtype).

    ``data`` may be longer (an aligned page); shorter is a ``FormatError``.
    """
    fmt = as_data_format(fmt)
    codec = _element_codec(fmt, "row-major elements")
    needed = count * element_size(fmt)
    data = _as_bytes(data).reshape(-1)
    if count < 0 or data.size < needed:
        raise _shape_error(
            f"decode_elements({format_name(fmt)}): {count} elements need {needed} bytes, "
            f"got {data.size}"
        )
    return codec.decode(data[:needed])


# --- compute blocks -------------------------------------------------------------------


def _encode_block_bf16(
    matrix: np.ndarray, tile: TileShape, wrap: bool, truncate: bool
) -> np.ndarray:
    # round row-major (contiguous, fast), then move 2-byte patterns instead of 4-byte floats
    bits = float32_to_bf16_bits(matrix, truncate=truncate).astype("<u2", copy=False)
    return tilize(bits, tile).reshape(-1).view(np.uint8)


def _encode_block_fp32(
    matrix: np.ndarray, tile: TileShape, wrap: bool, truncate: bool
) -> np.ndarray:
    tiles = tilize(np.asarray(matrix, dtype="<f4"), tile)
    if np.may_share_memory(tiles, matrix):  # tilize needed no reordering: still copy
        tiles = tiles.copy()
    return tiles.reshape(-1).view(np.uint8)


_BLOCK_ENCODERS: dict[DataFormat, Callable[[np.ndarray, TileShape, bool, bool], np.ndarray]] = {
    DataFormat.Float16_b: _encode_block_bf16,
    DataFormat.Float32: _encode_block_fp32,
}
"""Formats with a specialised block encoder; the rest tilize then ``encode_tiles``."""


def encode_block(
    matrix: np.ndarray,
    fmt: DataFormat | int,
    tile: TileShape = TILE_32x32,
    *,
    l1_alignment: int = 16,
    dram_alignment: int = 32,
    wrap: bool = False,
    truncate: bool = False,
) -> np.ndarray:
    """A row-major ``(rows*th, cols*tw)`` matrix -> ``rows*cols`` tiles of bytes, row-major.

    Returns uint8 ``(rows * cols * tile_size_bytes,)``; options as for ``encode_tiles``.
    """
    fmt = as_data_format(fmt)
    matrix = np.asarray(matrix)
    if matrix.ndim != 2:
        raise _shape_error(
            f"encode_block({format_name(fmt)}) needs a 2-D matrix, got shape {matrix.shape}"
        )
    special = _BLOCK_ENCODERS.get(fmt)
    if special is not None:
        return special(matrix, tile, wrap, truncate)
    tiles = encode_tiles(
        tilize(matrix, tile),
        fmt,
        tile,
        l1_alignment=l1_alignment,
        dram_alignment=dram_alignment,
        wrap=wrap,
        truncate=truncate,
    )
    return tiles.reshape(-1)


def _decode_block_bf16(data: np.ndarray, fmt: DataFormat, tile: TileShape, l1: int) -> np.ndarray:
    # one strided widening copy (bits << 16) straight into row-major order
    patterns = row_major_view(data.view("<u2").reshape(*data.shape[:2], -1), tile)
    return bf16_bits_to_float32(patterns)


def _decode_block_fp32(data: np.ndarray, fmt: DataFormat, tile: TileShape, l1: int) -> np.ndarray:
    values = row_major_view(data.view("<f4").reshape(*data.shape[:2], -1), tile)
    return values.astype(np.float32, order="C")  # one strided copy into row-major order


def _decode_block_bfp(data: np.ndarray, fmt: DataFormat, tile: TileShape, l1: int) -> np.ndarray:
    return decode_bfp_block(data, fmt, tile, l1_alignment=l1)


def _decode_block_generic(
    data: np.ndarray, fmt: DataFormat, tile: TileShape, l1: int
) -> np.ndarray:
    tiles = _element_codec(fmt, "tiles").decode(data)
    return row_major_view(tiles, tile).copy(order="C")


_BLOCK_DECODERS: dict[
    DataFormat, Callable[[np.ndarray, DataFormat, TileShape, int], np.ndarray]
] = {
    DataFormat.Float16_b: _decode_block_bf16,
    DataFormat.Float32: _decode_block_fp32,
    **{fmt: _decode_block_bfp for fmt in BLOCK_FLOAT},
}
"""Block decoders that land values straight in row-major order; the rest decode tiles first."""


def decode_block(
    data: ByteSource,
    fmt: DataFormat | int,
    tile: TileShape,
    rows: int,
    cols: int,
    *,
    l1_alignment: int = 16,
    dram_alignment: int = 32,
    dtype: np.dtype | type | None = np.float32,
) -> np.ndarray:
    """``rows * cols`` contiguous tiles (row-major tile order) -> a row-major matrix.

    Args:
        data: exactly ``rows * cols * tile_size_bytes`` bytes.
        fmt, tile: format and tile shape of every tile.
        rows, cols: the block's shape in tiles.
        l1_alignment, dram_alignment: as for ``encode_tiles``.
        dtype: result dtype, float32 by default (what compute works in; integers above
            2**24 round).  ``None`` keeps the decoded dtype (exact integers).

    Returns:
        ``(rows * th, cols * tw)`` array, always a new array.
    """
    fmt = as_data_format(fmt)
    size = tile_size_bytes(fmt, tile, l1_alignment=l1_alignment, dram_alignment=dram_alignment)
    data = _as_bytes(data).reshape(-1)
    if data.size != rows * cols * size:
        raise _shape_error(
            f"decode_block({format_name(fmt)}): {rows}x{cols} tiles of {size} bytes need "
            f"{rows * cols * size} bytes, got {data.size}"
        )
    decoder = _BLOCK_DECODERS.get(fmt, _decode_block_generic)
    grid = np.ascontiguousarray(data).reshape(rows, cols, size)
    matrix = decoder(grid, fmt, tile, l1_alignment).reshape(rows * tile.height, cols * tile.width)
    if dtype is None:
        return matrix
    return matrix.astype(dtype, copy=False)
