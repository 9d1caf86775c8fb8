"""Tile geometry: tile and face shapes, face order, and tile sizes in bytes.

A tile is ``height x width`` elements stored as faces (reference §1.1, §1.3): a 32x32 tile
is four 16x16 faces, face0 top-left, face1 top-right, face2 bottom-left, face3
bottom-right, each row-major.  Tiny tiles keep faces of width 16 and at most 16 rows
(``tt_metal/impl/data_format/tile.cpp`` ``TILE_FACE_HW_CHOICES``).  With
``transpose_tile`` the faces are stored in column-major face order (f0, f2, f1, f3) and
each face transposed (``transpose_of_faces`` + ``transpose_within_face``); tile.cpp only
allows it for tile heights 16 and 32.

Sizes follow ``Tile::get_tile_size`` plus the recent trailing DRAM-alignment pad for
block-float tiles (reference §2.3).  Layout conversion lives in ``tilize``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from tilewright.errors import FormatError

from .dataformat import (
    BLOCK_FLOAT,
    ELEMENT_SIZE,
    RULE_TILE,
    DataFormat,
    as_data_format,
    unsupported,
)

__all__ = [
    "DEFAULT_TILE",
    "FACE_SHAPES",
    "TILE_32x32",
    "TileShape",
    "round_up",
    "tile_size_bytes",
]

FACE_SHAPES: dict[tuple[int, int], tuple[int, int]] = {
    (32, 32): (16, 16),
    (16, 32): (16, 16),
    (32, 16): (16, 16),
    (16, 16): (16, 16),
    (8, 32): (8, 16),
    (4, 32): (4, 16),
    (2, 32): (2, 16),
    (1, 32): (1, 16),
    (8, 16): (8, 16),
    (4, 16): (4, 16),
    (2, 16): (2, 16),
    (1, 16): (1, 16),
}
"""Tile shape -> face shape, every shape tt-metal accepts (tile.cpp TILE_FACE_HW_CHOICES)."""

_TRANSPOSABLE_HEIGHTS = (16, 32)


def round_up(value: int, multiple: int) -> int:
    """``tt::round_up``: the smallest multiple of ``multiple`` that is >= ``value``."""
    return -(-value // multiple) * multiple


@dataclass(frozen=True, slots=True)
class TileShape:
    """A tile shape (``ttnn.Tile`` / ``tt::tt_metal::Tile``): height, width, transpose flag."""

    height: int = 32
    width: int = 32
    transpose_tile: bool = False

    def __post_init__(self) -> None:
        shape = (self.height, self.width)
        if shape not in FACE_SHAPES:
            valid = ", ".join(f"{h}x{w}" for h, w in FACE_SHAPES)
            raise FormatError(
                f"tile shape {self.height}x{self.width} is not a valid tile shape",
                rule=RULE_TILE,
                hint=f"valid tile shapes: {valid}",
            )
        if self.transpose_tile and self.height not in _TRANSPOSABLE_HEIGHTS:
            raise FormatError(
                f"tile shape {self.height}x{self.width} cannot be transposed: "
                "tile height must equal 16 or 32 in transpose mode",
                rule=RULE_TILE,
            )

    @property
    def shape(self) -> tuple[int, int]:
        return (self.height, self.width)

    @property
    def face_shape(self) -> tuple[int, int]:
        """(face height, face width); face width is always 16."""
        return FACE_SHAPES[(self.height, self.width)]

    @property
    def face_height(self) -> int:
        return self.face_shape[0]

    @property
    def face_width(self) -> int:
        return self.face_shape[1]

    @property
    def face_grid(self) -> tuple[int, int]:
        """(faces down, faces across) of the face grid."""
        face_h, face_w = self.face_shape
        return (self.height // face_h, self.width // face_w)

    @property
    def num_faces(self) -> int:
        rows, cols = self.face_grid
        return rows * cols

    @property
    def num_elements(self) -> int:
        """Elements per tile (``tile_hw``)."""
        return self.height * self.width

    @property
    def num_blocks(self) -> int:
        """Block-float blocks (face rows of 16 elements) per tile: one shared exponent each."""
        return self.num_faces * self.face_height

    def __str__(self) -> str:
        suffix = ", transposed" if self.transpose_tile else ""
        return f"{self.height}x{self.width}{suffix}"


TILE_32x32 = TileShape(32, 32)
DEFAULT_TILE = TILE_32x32


def tile_size_bytes(
    fmt: DataFormat | int,
    tile: TileShape = TILE_32x32,
    *,
    l1_alignment: int = 16,
    dram_alignment: int = 32,
) -> int:
    """Bytes of one tile in ``fmt`` (``Tile::get_tile_size``, reference §2.3).

    Block-float: ``round_up(mantissa_bytes + round_up(num_faces * face_h, l1_alignment),
    dram_alignment)`` -- exponent section, mantissa section, trailing pad.  Wormhole DRAM
    alignment is 32 (the default), Blackhole 64.  Other formats: ``tile_hw * element size``.

    Raises:
        FormatError: for formats without a tile size (Tf32, Invalid).
    """
    return _tile_size(as_data_format(fmt), tile, l1_alignment, dram_alignment)


@functools.lru_cache(maxsize=512)
def _tile_size(fmt: DataFormat, tile: TileShape, l1_alignment: int, dram_alignment: int) -> int:
    spec = BLOCK_FLOAT.get(fmt)
    if spec is not None:
        mantissa_bytes = tile.num_elements * spec.code_bits // 8
        exponent_bytes = round_up(tile.num_blocks, l1_alignment)
        return round_up(mantissa_bytes + exponent_bytes, dram_alignment)
    size = ELEMENT_SIZE.get(fmt)
    if size is None:
        raise unsupported(fmt, "tiles")
    return tile.num_elements * size
