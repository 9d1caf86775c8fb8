"""Generic dispatch (tilewright.device.formats.codec): tiles, pages and blocks."""

import numpy as np
import pytest

from tilewright.device.formats import (
    DataFormat,
    TILE_32x32,
    TileShape,
    decode_block,
    decode_elements,
    decode_tiles,
    element_size,
    encode_block,
    encode_elements,
    encode_tiles,
    float32_to_bf16_bits,
    tile_size_bytes,
    tilize,
    untilize,
)
from tilewright.device.formats.tile import FACE_SHAPES
from tilewright.errors import FormatError

F = DataFormat
TILES = [TileShape(h, w) for h, w in FACE_SHAPES] + [
    TileShape(h, w, transpose_tile=True) for h, w in FACE_SHAPES if h in (16, 32)
]
ENCODABLE = [
    F.Float32, F.Float16, F.Float16_b, F.Bfp8_b, F.Bfp4_b, F.Bfp2_b, F.Bfp8, F.Bfp4, F.Bfp2,
    F.Int32, F.UInt32, F.UInt16, F.UInt8, F.Int8, F.RawUInt8, F.RawUInt16, F.RawUInt32,
]  # fmt: skip


def sample(fmt, shape, seed=0):
    rng = np.random.default_rng(seed)
    if fmt in (F.Int32, F.Int8):
        return rng.integers(-100, 100, shape).astype(np.float32)
    if fmt.name.startswith(("UInt", "Raw")):
        return rng.integers(0, 200, shape).astype(np.float32)
    return (rng.standard_normal(shape) * 10).astype(np.float32)


@pytest.mark.parametrize("fmt", [F.Tf32, F.Lf8, F.Fp8_e4m3, F.Invalid])
def test_unsupported_formats_name_themselves(fmt):
    with pytest.raises(FormatError, match=fmt.name) as info:
        encode_tiles(np.zeros(1024, dtype=np.float32), fmt)
    assert info.value.rule == "format-unsupported"
    with pytest.raises(FormatError, match=fmt.name):
        encode_elements(np.zeros(4, dtype=np.float32), fmt)


@pytest.mark.parametrize("fmt", [F.Bfp8_b, F.Bfp4_b, F.Bfp2_b, F.Bfp8])
def test_block_floats_have_no_row_major_form(fmt):
    with pytest.raises(FormatError, match=f"{fmt.name}.* row-major") as info:
        encode_elements(np.zeros(16, dtype=np.float32), fmt)
    assert "float32" in info.value.hint
    with pytest.raises(FormatError, match=fmt.name):
        decode_elements(np.zeros(64, dtype=np.uint8), fmt, 16)


def test_integer_format_values_accept_ints():
    assert encode_tiles(np.arange(1024), F.Int32).shape == (4096,)


@pytest.mark.parametrize("fmt", ENCODABLE)
def test_tiles_round_trip_shape_and_dtype(fmt):
    values = sample(fmt, (3, 1024))
    data = encode_tiles(values, fmt)
    assert data.shape == (3, tile_size_bytes(fmt)) and data.dtype == np.uint8
    flat = decode_tiles(data.reshape(-1), fmt)  # a flat buffer of whole tiles
    assert flat.shape == (3, 1024)
    assert (decode_tiles(data, fmt) == flat).all()
    assert decode_tiles(data.tobytes(), fmt).shape == (3, 1024)


def test_decode_tiles_shape_errors():
    with pytest.raises(FormatError, match=r"1000 bytes is not a whole number of 2048-byte tiles"):
        decode_tiles(np.zeros(1000, dtype=np.uint8), F.Float16_b)
    with pytest.raises(FormatError, match=r"needs data of shape \(\.\.\., 1088\)"):
        decode_tiles(np.zeros((2, 1000), dtype=np.uint8), F.Bfp8_b)
    with pytest.raises(FormatError, match="uint8 array"):
        decode_tiles(np.zeros(512, dtype=np.float32), F.Float16_b)
    with pytest.raises(FormatError, match=r"shape \(\.\.\., 512\) for 16x32 tiles"):
        encode_tiles(np.zeros(1024), F.Float16_b, TileShape(16, 32))


@pytest.mark.parametrize("fmt", ENCODABLE)
@pytest.mark.parametrize("tile", TILES, ids=str)
def test_block_round_trip_every_format_and_tile(fmt, tile):
    matrix = sample(fmt, (2 * tile.height, 3 * tile.width))
    data = encode_block(matrix, fmt, tile)
    assert data.shape == (6 * tile_size_bytes(fmt, tile),)
    via_tiles = encode_tiles(tilize(matrix, tile), fmt, tile).reshape(-1)
    assert data.tobytes() == via_tiles.tobytes()
    decoded = decode_block(data, fmt, tile, 2, 3)
    assert decoded.dtype == np.float32 and decoded.shape == matrix.shape
    expected = untilize(decode_tiles(data.reshape(2, 3, -1), fmt, tile), tile)
    assert decoded.tobytes() == expected.astype(np.float32).tobytes()
    if fmt in (F.Float32,) or fmt.name.startswith(("Int", "UInt", "Raw")):
        assert (decoded == matrix).all()


def test_bf16_block_is_rne_of_the_matrix():
    matrix = sample(F.Float16_b, (64, 96))
    decoded = decode_block(encode_block(matrix, F.Float16_b), F.Float16_b, TILE_32x32, 2, 3)
    expected = (float32_to_bf16_bits(matrix).astype(np.uint32) << 16).view(np.float32)
    assert (decoded.view(np.uint32) == expected.view(np.uint32)).all()


def test_decode_block_keeps_exact_integers_on_request():
    matrix = np.full((32, 32), 2**30 + 1, dtype=np.int64)
    data = encode_block(matrix, F.Int32)
    assert decode_block(data, F.Int32, TILE_32x32, 1, 1, dtype=None).dtype == np.int32
    assert (decode_block(data, F.Int32, TILE_32x32, 1, 1, dtype=None) == matrix).all()
    assert decode_block(data, F.Int32, TILE_32x32, 1, 1).dtype == np.float32


def test_decode_block_errors_and_independence():
    data = encode_block(np.ones((32, 64), dtype=np.float32), F.Float32)
    with pytest.raises(FormatError, match=r"2x2 tiles of 4096 bytes need 16384 bytes, got 8192"):
        decode_block(data, F.Float32, TILE_32x32, 2, 2)
    out = decode_block(data, F.Float32, TILE_32x32, 1, 2)
    data[:] = 0
    assert (out == 1).all()  # never a view into the source bytes
    with pytest.raises(FormatError, match="2-D matrix"):
        encode_block(np.ones((2, 32, 32)), F.Float32)


@pytest.mark.parametrize(
    "fmt", [F.Float32, F.Float16_b, F.Float16, F.Int32, F.UInt32, F.UInt16, F.UInt8, F.Int8]
)
def test_row_major_elements(fmt):
    values = sample(fmt, (5, 7))
    data = encode_elements(values, fmt)
    assert data.shape == (35 * element_size(fmt),) and data.dtype == np.uint8
    padded = np.concatenate([data, np.zeros(13, dtype=np.uint8)])  # an aligned page
    decoded = decode_elements(padded, fmt, 35)
    assert decoded.shape == (35,)
    reencoded = encode_elements(decoded, fmt)
    assert reencoded.tobytes() == data.tobytes()
    with pytest.raises(FormatError, match="36 elements need"):
        decode_elements(data, fmt, 36)


def test_bf16_elements_bytes():
    data = encode_elements(np.array([1.0, -2.0], dtype=np.float32), F.Float16_b)
    assert list(data) == [0x80, 0x3F, 0x00, 0xC0]
    assert list(decode_elements(bytes(data), F.Float16_b, 2)) == [1.0, -2.0]


def test_accepts_int_format_ids():
    assert encode_tiles(np.zeros(1024), 6).shape == (1088,)


@pytest.mark.parametrize("fmt", [F.Float32, F.Int32, F.UInt8, F.Float16_b, F.Bfp8_b])
def test_encoders_never_return_views_of_the_input(fmt):
    values = sample(fmt, (1, 1024)).astype(np.int32 if fmt is F.Int32 else np.float32)
    values = values.astype(np.uint8) if fmt is F.UInt8 else values
    assert not np.shares_memory(encode_tiles(values, fmt), values)
    if fmt is not F.Bfp8_b:
        assert not np.shares_memory(encode_elements(values, fmt), values)
    row = values.reshape(1, 1024)[:, :16]  # one 1x16 tile: tilize needs no reordering
    assert not np.shares_memory(encode_block(row, fmt, TileShape(1, 16)), row)
