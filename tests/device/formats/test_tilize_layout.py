"""Tilize / untilize / padding (tilewright.device.formats.tilize), reference §1.1-§1.3.

The reference below is a per-element port of tilize_utils.cpp
(convert_layout_row_major_to_tile_nfaces with transpose_face / transpose_face_order).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilewright.device.formats import TileShape, pad_to_tiles, tile_view, tilize, untilize
from tilewright.device.formats.tile import FACE_SHAPES
from tilewright.errors import FormatError

ALL_TILES = [TileShape(h, w) for h, w in FACE_SHAPES] + [
    TileShape(h, w, transpose_tile=True) for h, w in FACE_SHAPES if h in (16, 32)
]


def ref_device_index(tile: TileShape, r: int, c: int) -> int:
    face_h, face_w = tile.face_shape
    face_rows, face_cols = tile.height // face_h, tile.width // face_w
    fy, fx = r // face_h, c // face_w
    if tile.transpose_tile and face_rows > 1 and face_cols > 1:
        face_id = fx * face_rows + fy
    else:
        face_id = fy * face_cols + fx
    if tile.transpose_tile:
        inner = (c % face_w) * face_h + (r % face_h)
    else:
        inner = (r % face_h) * face_w + (c % face_w)
    return face_id * face_h * face_w + inner


def ref_tilize(x: np.ndarray, tile: TileShape) -> np.ndarray:
    *lead, height, width = x.shape
    rows, cols = height // tile.height, width // tile.width
    out = np.zeros((*lead, rows, cols, tile.num_elements), dtype=x.dtype)
    for index in np.ndindex(*lead):
        for r in range(height):
            for c in range(width):
                tr, tc = r // tile.height, c // tile.width
                flat = ref_device_index(tile, r % tile.height, c % tile.width)
                out[(*index, tr, tc, flat)] = x[(*index, r, c)]
    return out


def test_32x32_face_layout_formula():
    # reference §1.1: face_id*256 + (r%16)*16 + (c%16), face_id = (r//16)*2 + (c//16)
    x = np.arange(32 * 32).reshape(32, 32)
    tiles = tilize(x)[0, 0]
    for r, c in [(0, 0), (0, 15), (0, 16), (15, 31), (16, 0), (31, 31), (17, 18)]:
        assert tiles[((r // 16) * 2 + c // 16) * 256 + (r % 16) * 16 + c % 16] == x[r, c]


def test_transposed_32x32_face_order():
    x = np.arange(32 * 32).reshape(32, 32)
    tiles = tilize(x, TileShape(32, 32, transpose_tile=True))[0, 0]
    # face order f0, f2, f1, f3 and each face transposed
    assert list(tiles[:3]) == [x[0, 0], x[1, 0], x[2, 0]]
    assert tiles[256] == x[16, 0]  # second stored face is f2 (bottom-left)
    assert tiles[512] == x[0, 16]  # third is f1 (top-right)
    assert tiles[256 + 1 * 16 + 2] == x[16 + 2, 1]


@pytest.mark.parametrize("tile", ALL_TILES, ids=str)
def test_matches_reference_every_tile_shape(tile):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 1 << 30, size=(2, 2 * tile.height, 3 * tile.width))
    tiles = tilize(x, tile)
    np.testing.assert_array_equal(tiles, ref_tilize(x, tile))
    np.testing.assert_array_equal(untilize(tiles, tile), x)
    np.testing.assert_array_equal(tile_view(x, tile).reshape(tiles.shape), tiles)


@settings(max_examples=60, deadline=None)
@given(
    tile=st.sampled_from(ALL_TILES),
    rows=st.integers(1, 3),
    cols=st.integers(1, 3),
    lead=st.lists(st.integers(1, 2), max_size=2),
    dtype=st.sampled_from([np.float32, np.uint16, np.int8, np.float64]),
)
def test_round_trip_property(tile, rows, cols, lead, dtype):
    shape = (*lead, rows * tile.height, cols * tile.width)
    x = np.arange(np.prod(shape)).astype(dtype).reshape(shape)
    tiles = tilize(x, tile)
    assert tiles.shape == (*lead, rows, cols, tile.num_elements)
    assert tiles.dtype == x.dtype
    np.testing.assert_array_equal(untilize(tiles, tile), x)
    if not lead:
        np.testing.assert_array_equal(tiles, ref_tilize(x, tile))


def test_tile_order_is_row_major_over_the_grid():
    x = np.arange(64 * 96).reshape(64, 96)
    tiles = tilize(x)
    assert tiles.shape == (2, 3, 1024)
    assert tiles[0, 1, 0] == x[0, 32]
    assert tiles[1, 0, 0] == x[32, 0]


def test_tilize_rejects_partial_tiles():
    with pytest.raises(FormatError, match=r"shape \(30, 32\) is not a whole number of 32x32"):
        tilize(np.zeros((30, 32)))
    with pytest.raises(FormatError, match="at least 2 dims"):
        tilize(np.zeros(32))


def test_untilize_rejects_wrong_tile_length():
    with pytest.raises(FormatError, match=r"\(\.\.\., rows, cols, 512\)"):
        untilize(np.zeros((1, 1, 1024)), TileShape(16, 32))


def test_pad_to_tiles_pads_last_two_dims_per_matrix():
    x = np.arange(2 * 3 * 5 * 40, dtype=np.float32).reshape(2, 3, 5, 40)
    padded = pad_to_tiles(x, pad_value=-1.0)
    assert padded.shape == (2, 3, 32, 64)
    np.testing.assert_array_equal(padded[..., :5, :40], x)
    assert (padded[..., 5:, :] == -1).all() and (padded[..., :, 40:] == -1).all()
    assert padded.dtype == x.dtype


def test_pad_to_tiles_tiny_tile_and_noop():
    x = np.ones((3, 17), dtype=np.uint16)
    assert pad_to_tiles(x, TileShape(4, 16)).shape == (4, 32)
    y = np.ones((32, 32))
    assert pad_to_tiles(y) is y
    with pytest.raises(FormatError, match="at least 2 dims"):
        pad_to_tiles(np.ones(5))


def test_pad_value_must_fit_the_dtype():
    with pytest.raises(
        FormatError, match="pad value -1 cannot be stored in an array of dtype uint8"
    ):
        pad_to_tiles(np.ones((3, 3), dtype=np.uint8), pad_value=-1)
