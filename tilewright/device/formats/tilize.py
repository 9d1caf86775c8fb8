"""Tilize / untilize: row-major matrices <-> tiles in device (TILED_NFACES) element order.

Mirrors ``tt_metal/impl/data_format/tilize_utils.cpp``
(``convert_layout_row_major_to_tile_nfaces`` and ``convert_layout_tile_nfaces_to_row_major``),
reference §1.1-§1.3: tiles row-major over each 2D matrix's tile grid; inside a tile, faces
row-major over the face grid, each face row-major.  A ``transpose_tile`` tile stores the
faces in column-major face order and each face transposed.

Everything is one ``reshape`` / ``transpose`` / ``reshape``: the six axes of a matrix of
tiles are (tile row, face row, row in face, tile column, face column, column in face), and
device order is a permutation of them.  Padding a logical shape up to whole tiles is
``pad_to_tiles`` (reference §1.2: only the last two dims, per 2D matrix).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from tilewright.errors import FormatError

from .dataformat import RULE_SHAPE
from .tile import TILE_32x32, TileShape, round_up

__all__ = [
    "device_axis_order",
    "pad_to_tiles",
    "padded_shape",
    "row_major_view",
    "tile_view",
    "tilize",
    "untilize",
]

# Axes of one row of tiles as (tile row R, face row fr, row in face fh, tile column C,
# face column fc, column in face fw) = 0..5; device order keeps R, C outermost.
_DEVICE_ORDER = (0, 3, 1, 4, 2, 5)  # R, C, fr, fc, fh, fw
_TRANSPOSED_ORDER = (0, 3, 4, 1, 5, 2)  # R, C, fc, fr, fw, fh


def device_axis_order(tile: TileShape) -> tuple[int, ...]:
    """Permutation of the six matrix-of-tiles axes into device element order.

    When the face grid has one row or column, swapping the face axes of a transposed
    tile is a no-op, which matches tilize_utils.cpp skipping ``transpose_face_order``.
    """
    return _TRANSPOSED_ORDER if tile.transpose_tile else _DEVICE_ORDER


@dataclass(frozen=True, slots=True)
class _Layout:
    """Per-tile-shape constants of the six-axis view (computed once per tile shape)."""

    faces: tuple[int, int, int, int]  # (fr, fh, fc, fw)
    to_device: tuple[int, ...]  # six row-major axes -> stored order
    to_row_major: tuple[int, ...]  # stored order -> six row-major axes
    stored_faces: tuple[int, ...]  # the four face axes in stored order

    def six(self, rows: int, cols: int) -> tuple[int, ...]:
        face_rows, face_h, face_cols, face_w = self.faces
        return (rows, face_rows, face_h, cols, face_cols, face_w)


@functools.cache
def _layout(tile: TileShape) -> _Layout:
    face_rows, face_cols = tile.face_grid
    face_h, face_w = tile.face_shape
    order = device_axis_order(tile)
    six = (0, face_rows, face_h, 0, face_cols, face_w)
    return _Layout(
        faces=(face_rows, face_h, face_cols, face_w),
        to_device=order,
        to_row_major=tuple(order.index(axis) for axis in range(6)),
        stored_faces=tuple(six[axis] for axis in order[2:]),
    )


def _permute(lead: int, order: tuple[int, ...]) -> tuple[int, ...]:
    return (*range(lead), *(lead + axis for axis in order))


def _check_matrix(shape: tuple[int, ...], tile: TileShape, what: str) -> None:
    if len(shape) < 2:
        raise FormatError(
            f"{what} needs an array of at least 2 dims (..., H, W), got shape {shape}",
            rule=RULE_SHAPE,
        )
    height, width = shape[-2:]
    if height % tile.height or width % tile.width:
        raise FormatError(
            f"{what}: shape {shape} is not a whole number of {tile} tiles "
            f"(last two dims must be multiples of {tile.height} and {tile.width})",
            rule=RULE_SHAPE,
            hint="pad with pad_to_tiles(x, tile) first",
        )


def tile_view(x: np.ndarray, tile: TileShape = TILE_32x32) -> np.ndarray:
    """A strided view of row-major ``(..., H, W)`` with its elements in device order.

    Shape ``(..., H//th, W//tw, a, b, c, d)`` where ``(a, b, c, d)`` are the face and
    in-face axes in stored order, so ``view.reshape(..., H//th, W//tw, th*tw)`` is
    ``tilize(x)``.  Writing into the view writes into ``x``: this is how ``untilize`` and
    the block decoders land tiles straight in a row-major matrix.

    Raises:
        FormatError: if ``x`` has fewer than 2 dims or H, W are not tile multiples.
    """
    _check_matrix(x.shape, tile, "tile layout")
    *lead, height, width = x.shape
    layout = _layout(tile)
    six = x.reshape(*lead, *layout.six(height // tile.height, width // tile.width))
    return six.transpose(_permute(len(lead), layout.to_device))


def tilize(x: np.ndarray, tile: TileShape = TILE_32x32) -> np.ndarray:
    """Row-major ``(..., H, W)`` -> tiles ``(..., H//th, W//tw, th*tw)`` in device order.

    The result is a new array unless no reordering is needed (then a view).

    Raises:
        FormatError: if ``x`` has fewer than 2 dims or H, W are not tile multiples.
    """
    x = np.asarray(x)
    view = tile_view(x, tile)
    return view.reshape(*view.shape[:-4], tile.num_elements)


def untilize(tiles: np.ndarray, tile: TileShape = TILE_32x32) -> np.ndarray:
    """Tiles ``(..., R, C, th*tw)`` in device order -> row-major ``(..., R*th, C*tw)``.

    Always returns a new array.

    Raises:
        FormatError: if the last axis is not ``th*tw`` or there is no (R, C) grid.
    """
    tiles = np.asarray(tiles)
    if tiles.ndim < 3 or tiles.shape[-1] != tile.num_elements:
        raise FormatError(
            f"untilize needs tiles of shape (..., rows, cols, {tile.num_elements}) for "
            f"{tile} tiles, got shape {tiles.shape}",
            rule=RULE_SHAPE,
        )
    *lead, rows, cols, _ = tiles.shape
    matrix = row_major_view(tiles, tile).astype(tiles.dtype, order="C")
    return matrix.reshape(*lead, rows * tile.height, cols * tile.width)


def row_major_view(tiles: np.ndarray, tile: TileShape = TILE_32x32) -> np.ndarray:
    """A strided view of tiles ``(..., R, C, th*tw)`` with its axes in row-major order.

    Shape ``(..., R, fr, fh, C, fc, fw)`` (face rows, rows in face, ...); its C-order
    reshape to ``(..., R*th, C*tw)`` is ``untilize(tiles)``.  Lets a gather or cast write
    the row-major result directly.
    """
    *lead, rows, cols, _ = tiles.shape
    layout = _layout(tile)
    stored = tiles.reshape(*lead, rows, cols, *layout.stored_faces)
    return stored.transpose(_permute(len(lead), layout.to_row_major))


def padded_shape(shape: tuple[int, ...], tile: TileShape = TILE_32x32) -> tuple[int, ...]:
    """Logical -> padded shape: the last two dims rounded up to tile multiples (§1.2)."""
    if len(shape) < 2:
        raise FormatError(
            f"tile layout needs at least 2 dims (..., H, W), got shape {tuple(shape)}",
            rule=RULE_SHAPE,
        )
    *lead, height, width = shape
    return (*lead, round_up(height, tile.height), round_up(width, tile.width))


def pad_to_tiles(x: np.ndarray, tile: TileShape = TILE_32x32, pad_value: float = 0) -> np.ndarray:
    """Pad the last two dims of ``x`` up to tile multiples with ``pad_value`` (§1.2).

    Higher dims are never padded (each 2D matrix is padded on its own).  Returns ``x``
    itself when it is already whole tiles.
    """
    x = np.asarray(x)
    target = padded_shape(x.shape, tile)
    if target == x.shape:
        return x
    try:
        out = np.full(target, pad_value, dtype=x.dtype)
    except (OverflowError, ValueError, TypeError):
        raise FormatError(
            f"pad value {pad_value!r} cannot be stored in an array of dtype {x.dtype}",
            rule=RULE_SHAPE,
        ) from None
    out[..., : x.shape[-2], : x.shape[-1]] = x
    return out
