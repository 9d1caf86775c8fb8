"""Tile shapes and tile sizes (tilewright.device.formats.tile), reference §1.3, §2.3."""

import pytest

from tilewright.device.formats import DataFormat, TILE_32x32, TileShape, tile_size_bytes
from tilewright.errors import FormatError

F = DataFormat

# (tile h, tile w) -> (face h, face w, faces)
TABLE = {
    (32, 32): (16, 16, 4), (16, 32): (16, 16, 2), (32, 16): (16, 16, 2), (16, 16): (16, 16, 1),
    (8, 32): (8, 16, 2), (4, 32): (4, 16, 2), (2, 32): (2, 16, 2), (1, 32): (1, 16, 2),
    (8, 16): (8, 16, 1), (4, 16): (4, 16, 1), (2, 16): (2, 16, 1), (1, 16): (1, 16, 1),
}  # fmt: skip


@pytest.mark.parametrize(("shape", "faces"), TABLE.items())
def test_face_table(shape, faces):
    tile = TileShape(*shape)
    assert (*tile.face_shape, tile.num_faces) == faces
    assert tile.num_elements == shape[0] * shape[1]
    assert tile.num_blocks == faces[0] * faces[2]


def test_face_grid():
    assert TileShape(16, 32).face_grid == (1, 2)
    assert TileShape(32, 16).face_grid == (2, 1)
    assert TILE_32x32.face_grid == (2, 2)
    assert TileShape(4, 32).face_grid == (1, 2)


@pytest.mark.parametrize("shape", [(32, 8), (64, 32), (3, 32), (0, 16), (16, 48)])
def test_invalid_shape(shape):
    with pytest.raises(FormatError, match=f"tile shape {shape[0]}x{shape[1]} is not a valid"):
        TileShape(*shape)


@pytest.mark.parametrize("shape", [(8, 32), (1, 16), (4, 16)])
def test_transpose_needs_height_16_or_32(shape):
    with pytest.raises(FormatError, match="must equal 16 or 32 in transpose mode"):
        TileShape(*shape, transpose_tile=True)


def test_transpose_allowed():
    for shape in [(32, 32), (16, 32), (32, 16), (16, 16)]:
        assert TileShape(*shape, transpose_tile=True).transpose_tile


def test_table_values_32x32():
    assert tile_size_bytes(F.Float32) == 4096
    assert tile_size_bytes(F.Int32) == 4096
    assert tile_size_bytes(F.UInt32) == 4096
    assert tile_size_bytes(F.Float16_b) == 2048
    assert tile_size_bytes(F.Float16) == 2048
    assert tile_size_bytes(F.UInt16) == 2048
    assert tile_size_bytes(F.UInt8) == 1024
    assert tile_size_bytes(F.Int8) == 1024
    assert tile_size_bytes(F.Bfp8_b) == 1088
    assert tile_size_bytes(F.Bfp4_b) == 576
    assert tile_size_bytes(F.Bfp2_b) == 320
    assert tile_size_bytes(F.Bfp8) == 1088


@pytest.mark.parametrize(
    ("fmt", "wormhole", "blackhole"),
    [(F.Float32, 2048, 2048), (F.Float16_b, 1024, 1024), (F.UInt8, 512, 512),
     (F.Bfp8_b, 544, 576), (F.Bfp4_b, 288, 320), (F.Bfp2_b, 160, 192)],
)  # fmt: skip
def test_table_values_16x32(fmt, wormhole, blackhole):
    tile = TileShape(16, 32)
    assert tile_size_bytes(fmt, tile) == wormhole
    assert tile_size_bytes(fmt, tile, dram_alignment=64) == blackhole


def test_tiny_bfp_tiles_pad_exponents_and_tail():
    # 1x16: 1 exponent padded to 16 B, 16 mantissa bytes -> 32
    assert tile_size_bytes(F.Bfp8_b, TileShape(1, 16)) == 32
    # 4x32 bfp2: 8 exponents -> 16 B, 128 elements * 2 bits = 32 B -> 48 -> 64
    assert tile_size_bytes(F.Bfp2_b, TileShape(4, 32)) == 64
    assert tile_size_bytes(F.Bfp2_b, TileShape(4, 32), dram_alignment=16) == 48
    assert tile_size_bytes(F.Float16_b, TileShape(1, 16)) == 32


@pytest.mark.parametrize("fmt", [F.Tf32, F.Invalid])
def test_formats_without_tile_size(fmt):
    with pytest.raises(FormatError, match=fmt.name):
        tile_size_bytes(fmt)
