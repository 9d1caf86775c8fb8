"""Block-float tiles (tilewright.device.formats.blockfloat), reference §2.4.

The slow reference is a per-element port of tt-metal's host code: get_max_exp,
convert_u32_to_bfp and pack_fp32_vec_as_bfp_tiles (blockfloat_common.cpp) for encoding,
and the lane logic of unpack_bfp{8,4,2}_tiles_into_float_vec (bfloat8/4/2.cpp) for
decoding, written with Python ints and loops.
"""

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilewright.device.formats import (
    BLOCK_FLOAT,
    DataFormat,
    ExponentKind,
    TileShape,
    decode_block,
    decode_tiles,
    encode_block,
    encode_tiles,
    tile_size_bytes,
    tilize,
)
from tilewright.device.formats.tile import FACE_SHAPES

F = DataFormat
B_FORMATS = [F.Bfp8_b, F.Bfp4_b, F.Bfp2_b]
A_FORMATS = [F.Bfp8, F.Bfp4, F.Bfp2]
TILE = TileShape(32, 32)
ALL_TILES = [TileShape(h, w) for h, w in FACE_SHAPES] + [
    TileShape(h, w, transpose_tile=True) for h, w in FACE_SHAPES if h in (16, 32)
]


# --- slow reference -------------------------------------------------------------------


def ref_max_exp(row: list[int], exp_a: bool) -> int:
    result = 0
    for bits in row:
        exp = (bits & 0x7F800000) >> 23
        if exp_a:
            exp = min(max(exp - 127 + 15, 0), 31)
        result = max(result, exp)
    return result


def ref_code(bits: int, shared: int, width: int, exp_a: bool, truncate: bool = False) -> int:
    mantissa, exp, sign = bits & 0x7FFFFF, (bits >> 23) & 0xFF, bits >> 31
    if exp == 0:  # +-0 or denormal
        return 0
    if exp_a:
        rebiased = exp - 127 + 15
        if rebiased > 31:
            rebiased, mantissa = 31, 0x7FFFFF
        elif rebiased < 0:
            rebiased, mantissa = 0, 0
        exp = rebiased
    mantissa |= 1 << 23
    if shared > exp:
        diff = shared - exp
        while diff > 31:
            mantissa >>= 31
            diff -= 31
        mantissa >>= diff
    shift = 24 - width
    if truncate:
        mantissa >>= shift
    else:
        round_value = mantissa & ((1 << shift) - 1)
        tie = 1 << (shift - 1)
        mantissa >>= shift
        guard = mantissa & 1
        if round_value > tie or (round_value == tie and guard == 1):
            mantissa += 1
        mantissa = min(mantissa, (1 << width) - 1)
    if mantissa == 0:
        sign = 0
    return (sign << width) | mantissa


def ref_pack_tile(
    bits: np.ndarray, fmt: DataFormat, tile: TileShape, row_major: bool, dram_alignment=32,
    truncate=False,
) -> bytes:  # fmt: skip
    """pack_fp32_vec_as_bfp_tiles for one tile of uint32 patterns."""
    spec = BLOCK_FLOAT[fmt]
    width, exp_a = spec.mantissa_bits, spec.exponent is ExponentKind.A
    face_h, face_w = tile.face_shape
    flat = [int(b) for b in bits.ravel()]
    exponents, codes, sequential = [], [], 0
    for tr in range(tile.height // face_h):
        for tc in range(tile.width // face_w):
            for i in range(face_h):
                row = []
                for j in range(face_w):
                    if row_major:
                        row.append(flat[(tr * face_h + i) * tile.width + tc * face_w + j])
                    else:
                        row.append(flat[sequential])
                        sequential += 1
                shared = ref_max_exp(row, exp_a)
                exponents.append(shared)
                codes += [ref_code(b, shared, width, exp_a, truncate) for b in row]
    exponents += [0] * (-len(exponents) % 16)
    per_word = 32 // (width + 1)
    words = []
    for start in range(0, len(codes), per_word):
        word = 0
        for k in reversed(range(per_word)):
            word = (word << (width + 1)) | codes[start + k]
        words.append(word)
    data = bytes(exponents) + struct.pack(f"<{len(words)}I", *words)
    return data + bytes(-len(data) % dram_alignment)


def ref_decode_value(code: int, shared: int, width: int, exp_a: bool) -> int:
    """One lane of the SIMD unpacker: float32 bit pattern."""
    max_magnitude = (1 << width) - 1
    sign, magnitude = code >> width, code & max_magnitude
    if magnitude == 0:
        return sign << 31
    shift_count = 0
    for _ in range(width):
        if magnitude >= 1 << (width - 1):
            break
        magnitude <<= 1
        shift_count += 1
    fraction = (magnitude << 1) & max_magnitude
    if shift_count > shared:  # flush denormals
        return 0
    exponent = shared - shift_count + (112 if exp_a else 0)
    return ((sign << 31) | ((exponent << 23) & 0xFFFFFFFF) | (fraction << (23 - width))) & (
        0xFFFFFFFF
    )


def ref_decode_tile(data: bytes, fmt: DataFormat, tile: TileShape) -> np.ndarray:
    """Device-order float32 bit patterns of one encoded tile."""
    spec = BLOCK_FLOAT[fmt]
    width, exp_a = spec.mantissa_bits, spec.exponent is ExponentKind.A
    code_bits = width + 1
    mantissa_start = -(-tile.num_blocks // 16) * 16
    out = []
    for element in range(tile.num_elements):
        shared = data[element // 16]
        bit = element * code_bits
        code = (data[mantissa_start + bit // 8] >> (bit % 8)) & ((1 << code_bits) - 1)
        out.append(ref_decode_value(code, shared, width, exp_a))
    return np.array(out, dtype=np.uint32)


# --- value generation -----------------------------------------------------------------

SPECIALS = np.array(
    [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x00000001,
     0x807FFFFF, 0x3F800000, 0x00800000, 0x7F7FFFFF],
    dtype=np.uint32,
)  # fmt: skip


@st.composite
def block_bits(draw, count: int) -> np.ndarray:
    """float32 patterns whose blocks of 16 have related exponents, ties and specials."""
    seed = draw(st.integers(0, 2**32 - 1))
    base = draw(st.integers(0, 255))
    spread = draw(st.sampled_from([0, 1, 3, 8, 30, 255]))
    special_rate = draw(st.sampled_from([0.0, 0.02, 0.2]))
    rng = np.random.default_rng(seed)
    blocks = count // 16
    block_base = np.clip(base + rng.integers(-4, 5, blocks), 0, 255).repeat(16)
    exps = np.clip(block_base - rng.integers(0, spread + 1, count), 0, 255)
    mantissa = rng.integers(0, 1 << 23, count)
    keep_low = rng.integers(0, 24, count)  # clear low bits so exact ties are common
    mantissa = (mantissa >> keep_low) << keep_low
    sign = rng.integers(0, 2, count)
    bits = (sign << 31) | (exps << 23) | mantissa
    special = rng.random(count) < special_rate
    bits[special] = rng.choice(SPECIALS, special.sum())
    return bits.astype(np.uint32)


def as_float(bits: np.ndarray) -> np.ndarray:
    return bits.astype(np.uint32).view(np.float32)


# --- known byte vectors ---------------------------------------------------------------


def one_tile(values, tile=TILE) -> np.ndarray:
    out = np.zeros(tile.num_elements, dtype=np.float32)
    out[: len(values)] = values
    return out


def test_bfp8_b_hand_derived_block():
    # shared exponent = 128 (from 3.0); 1.0 -> 0x800000>>1>>17 = 32; 0.5 -> 16;
    # -0.75 -> 0xC00000>>2>>17 = 24 with sign -> 0x98; 3.0 -> 0xC00000>>17 = 96
    data = encode_tiles(one_tile([1.0, 0.5, -0.75, 3.0]), F.Bfp8_b)
    assert data.shape == (1088,)
    assert data[0] == 128 and (data[1:64] == 0).all()
    assert list(data[64:69]) == [0x20, 0x10, 0x98, 0x60, 0x00]
    decoded = decode_tiles(data, F.Bfp8_b)
    assert list(decoded[:5]) == [1.0, 0.5, -0.75, 3.0, 0.0]


def test_bfp8_b_all_ones_tile():
    data = encode_tiles(np.ones(1024, dtype=np.float32), F.Bfp8_b)
    assert (data[:64] == 127).all() and (data[64:] == 0x40).all()


def test_bfp8_b_rounding_ties_saturation_sign_clearing_denormals():
    block = [
        1.0,
        struct.unpack("<f", struct.pack("<I", 0x3F810000))[0],  # 1 + 2**-7: tie, even -> 64
        struct.unpack("<f", struct.pack("<I", 0x3F830000))[0],  # 1 + 3*2**-7: tie, odd -> 66
        struct.unpack("<f", struct.pack("<I", 0x3F810001))[0],  # above the tie -> 65
        struct.unpack("<f", struct.pack("<I", 0x3FFFFFFF))[0],  # rounds to 128: saturate 127
        -(2.0**-10),  # shifted out -> magnitude 0, sign cleared
        1e-40,  # denormal -> code 0
        -0.0,  # -> code 0
    ]
    data = encode_tiles(one_tile(block), F.Bfp8_b)
    assert data[0] == 127
    assert list(data[64:72]) == [64, 64, 66, 65, 127, 0, 0, 0]
    decoded = decode_tiles(data, F.Bfp8_b)
    assert list(decoded[:5]) == [1.0, 1.0, 66 / 64, 65 / 64, 127 / 64]
    assert decoded[5:8].view(np.uint32).tolist() == [0, 0, 0]  # all +0.0


def test_bfp8_b_block_of_only_denormals_has_exponent_zero():
    data = encode_tiles(one_tile([1e-40] * 16), F.Bfp8_b)
    assert data[0] == 0 and (data[64:80] == 0).all()


def test_bfp4_b_nibbles():
    # E = 127; 1.0 -> 0x800000>>21 = 4; -0.5 -> 2 | sign 8 = 0xA; element 0 in the low nibble
    data = encode_tiles(one_tile([1.0, -0.5, 0.25, 0.75]), F.Bfp4_b)
    assert data.shape == (576,)
    assert data[0] == 127
    assert list(data[64:66]) == [0xA4, 0x31]  # 0.25 -> 1; 0.75 -> 3
    assert list(decode_tiles(data, F.Bfp4_b)[:4]) == [1.0, -0.5, 0.25, 0.75]


def test_bfp4_b_tie_and_saturation():
    # 1.625 = 0xD00000: keep 3 bits -> 6 with tie (1<<20) and even guard -> 6 (1.5)
    # 1.875 = 0xF00000: 7, tie, odd guard -> 8 -> saturate 7 (1.75)
    data = encode_tiles(one_tile([1.625, 1.875]), F.Bfp4_b)
    assert data[64] == 0x76
    assert list(decode_tiles(data, F.Bfp4_b)[:2]) == [1.5, 1.75]


def test_bfp2_b_two_bit_codes():
    # E = 128 (2.0): 2.0 -> 1; -2.0 -> 0b11; 1.0 -> 0x800000>>1>>23 = 0, rounds: tie, even -> 0
    # 1.5 -> 0xC00000>>1 = 0x600000 >> 23 = 0, round value 0x600000 > tie -> 1
    data = encode_tiles(one_tile([2.0, -2.0, 1.0, 1.5]), F.Bfp2_b)
    assert data.shape == (320,)
    assert data[0] == 128
    assert data[64] == 0b01_00_11_01
    assert list(decode_tiles(data, F.Bfp2_b)[:4]) == [2.0, -2.0, 0.0, 2.0]


def test_infinity_and_nan_in_a_block():
    inf, nan = np.float32(np.inf), np.float32(np.nan)
    data = encode_tiles(one_tile([inf, -inf, 1.0, nan]), F.Bfp8_b)
    assert data[0] == 255
    assert list(data[64:68]) == [0x40, 0xC0, 0x00, 0x60]
    decoded = decode_tiles(data, F.Bfp8_b)
    assert decoded[:4].view(np.uint32).tolist() == [0x7F800000, 0xFF800000, 0, 0x7FC00000]
    decoded2 = decode_tiles(encode_tiles(one_tile([nan]), F.Bfp2_b), F.Bfp2_b)
    assert decoded2[0] == np.inf  # bfp2 keeps no fraction bit: NaN -> +Inf


def test_decode_negative_zero_code_and_flush():
    data = np.zeros(1088, dtype=np.uint8)
    data[0] = 3
    data[64:68] = [0x80, 0x01, 0x08, 0x04]  # -0 code; mag 1 (shift 6 > 3); mag 8 (shift 3 == E)
    decoded = decode_tiles(data, F.Bfp8_b).view(np.uint32)
    # 0x80 -> -0.0 (sign kept, as the SIMD unpacker); 0x01 flushed; 0x08 -> exponent field 0,
    # fraction (8 << 3 << 1) & 0x7F = 0 -> +0; 0x04 (shift 4 > 3) flushed
    assert decoded[:4].tolist() == [0x80000000, 0, 0, 0]


def test_exp_a_formats():
    # Bfp8 (A exponent): 1.0 -> rebiased exponent 15, magnitude 64
    data = encode_tiles(one_tile([1.0, -0.5]), F.Bfp8)
    assert data[0] == 15 and list(data[64:66]) == [0x40, 0xA0]
    assert list(decode_tiles(data, F.Bfp8)[:2]) == [1.0, -0.5]
    # Inf saturates: E = 31, mantissa 0x7FFFFF -> 127 -> 1.984375 * 2**16
    data = encode_tiles(one_tile([np.inf]), F.Bfp8)
    assert data[0] == 31 and data[64] == 127
    assert decode_tiles(data, F.Bfp8)[0] == 127 * 2.0**10


def test_tiny_tile_layout_and_trailing_pad():
    tile = TileShape(1, 16)
    values = np.arange(16, dtype=np.float32)
    data = encode_tiles(values, F.Bfp2_b, tile)
    assert data.shape == (32,)  # 16 B exponents + 4 B mantissa + 12 B pad
    assert data[0] == 127 + 3 and (data[1:16] == 0).all() and (data[20:] == 0).all()
    data64 = encode_tiles(values, F.Bfp2_b, tile, dram_alignment=64)
    assert data64.shape == (64,) and (data64[:32] == data).all()
    assert (
        decode_tiles(data64, F.Bfp2_b, tile, dram_alignment=64)
        == decode_tiles(data, F.Bfp2_b, tile)
    ).all()


def test_bf16_source_emulation_note():
    # a bf16 value widens exactly, so encoding it equals encoding its float32 value
    import ml_dtypes

    values = np.linspace(-3, 3, 1024).astype(ml_dtypes.bfloat16)
    assert (
        encode_tiles(values, F.Bfp8_b) == encode_tiles(values.astype(np.float32), F.Bfp8_b)
    ).all()


# --- properties against the reference ---------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(data=st.data(), fmt=st.sampled_from(B_FORMATS + A_FORMATS), tile=st.sampled_from(ALL_TILES))
def test_encode_tiles_matches_reference(data, fmt, tile):
    bits = data.draw(block_bits(tile.num_elements))
    got = encode_tiles(as_float(bits), fmt, tile)
    expected = ref_pack_tile(bits, fmt, tile, row_major=False)
    assert got.tobytes() == expected


@settings(max_examples=25, deadline=None)
@given(data=st.data(), fmt=st.sampled_from(B_FORMATS), tile=st.sampled_from(ALL_TILES))
def test_truncating_encode_matches_reference(data, fmt, tile):
    bits = data.draw(block_bits(tile.num_elements))
    got = encode_tiles(as_float(bits), fmt, tile, truncate=True)
    assert got.tobytes() == ref_pack_tile(bits, fmt, tile, row_major=False, truncate=True)


@settings(max_examples=30, deadline=None)
@given(
    data=st.data(),
    fmt=st.sampled_from(B_FORMATS + A_FORMATS),
    tile=st.sampled_from([t for t in ALL_TILES if not t.transpose_tile]),
    dram=st.sampled_from([32, 64]),
)
def test_encode_block_row_major_matches_reference(data, fmt, tile, dram):
    bits = data.draw(block_bits(tile.num_elements)).reshape(tile.shape)
    got = encode_block(as_float(bits), fmt, tile, dram_alignment=dram)
    assert got.tobytes() == ref_pack_tile(bits, fmt, tile, row_major=True, dram_alignment=dram)


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    fmt=st.sampled_from(B_FORMATS + A_FORMATS),
    tile=st.sampled_from(ALL_TILES),
    exp_range=st.sampled_from([(0, 256), (0, 8), (250, 256), (0, 32)]),
)
def test_decode_of_arbitrary_bytes_matches_reference(seed, fmt, tile, exp_range):
    rng = np.random.default_rng(seed)
    size = tile_size_bytes(fmt, tile)
    raw = rng.integers(0, 256, size, dtype=np.uint8)
    raw[: tile.num_blocks] = rng.integers(*exp_range, tile.num_blocks)
    got = decode_tiles(raw, fmt, tile).view(np.uint32)
    assert got.tolist() == ref_decode_tile(raw.tobytes(), fmt, tile).tolist()


@settings(max_examples=100, deadline=None)
@given(data=st.data(), fmt=st.sampled_from(B_FORMATS + A_FORMATS), tile=st.sampled_from(ALL_TILES))
def test_decode_of_encoded_matches_reference(data, fmt, tile):
    bits = data.draw(block_bits(tile.num_elements))
    encoded = encode_tiles(as_float(bits), fmt, tile)
    got = decode_tiles(encoded, fmt, tile).view(np.uint32)
    assert got.tolist() == ref_decode_tile(encoded.tobytes(), fmt, tile).tolist()


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), fmt=st.sampled_from(B_FORMATS + A_FORMATS))
def test_representable_values_round_trip(seed, fmt):
    """decode(encode(v)) == v for every v that is a decoded tile (away from the flush zone)."""
    rng = np.random.default_rng(seed)
    tile = TileShape(32, 32)
    raw = rng.integers(0, 256, tile_size_bytes(fmt, tile), dtype=np.uint8)
    top = 32 if BLOCK_FLOAT[fmt].exponent is ExponentKind.A else 255
    raw[:64] = rng.integers(8, top, 64)
    values = decode_tiles(raw, fmt, tile)
    again = decode_tiles(encode_tiles(values, fmt, tile), fmt, tile)
    # -0.0 decodes from a raw [1|0] code but re-encodes to +0.0: compare values, then bits
    assert (again == values).all()
    nonzero = values != 0
    assert (again.view(np.uint32)[nonzero] == values.view(np.uint32)[nonzero]).all()


def test_value_formula_where_normal():
    """Decoded value == (-1)^s * mag * 2^(E - 127 - (W - 1)) for normal results."""
    for fmt in B_FORMATS:
        spec = BLOCK_FLOAT[fmt]
        rng = np.random.default_rng(int(fmt))
        raw = rng.integers(0, 256, tile_size_bytes(fmt), dtype=np.uint8)
        raw[:64] = rng.integers(10, 250, 64)
        values = decode_tiles(raw, fmt).astype(np.float64)
        codes = (
            np.unpackbits(raw[64 : 64 + 1024 * spec.code_bits // 8], bitorder="little")
            .reshape(-1, spec.code_bits)
            .dot(1 << np.arange(spec.code_bits))
        )
        magnitude = codes & ((1 << spec.mantissa_bits) - 1)
        sign = np.where(codes >> spec.mantissa_bits, -1.0, 1.0)
        shared = raw[:64].repeat(16).astype(np.float64)
        expected = sign * magnitude * 2.0 ** (shared - 127 - (spec.mantissa_bits - 1))
        assert (values == expected).all()


@pytest.mark.parametrize("fmt", B_FORMATS + A_FORMATS)
@pytest.mark.parametrize("tile", ALL_TILES, ids=str)
def test_block_paths_agree_with_tile_paths(fmt, tile):
    rng = np.random.default_rng(7)
    matrix = (rng.standard_normal((2 * tile.height, 3 * tile.width)) * 4).astype(np.float32)
    block = encode_block(matrix, fmt, tile)
    tiles = encode_tiles(tilize(matrix, tile), fmt, tile)
    assert block.tobytes() == tiles.tobytes()
    decoded = decode_block(block, fmt, tile, 2, 3)
    via_tiles = decode_tiles(tiles, fmt, tile)
    from tilewright.device.formats import untilize

    assert decoded.tobytes() == untilize(via_tiles, tile).tobytes()


@pytest.mark.parametrize("fmt", [F.Bfp8_b, F.Bfp4_b, F.Bfp2_b, F.Bfp8])
def test_many_tiles_cross_chunk_boundaries(fmt):
    """Encoding / decoding works in chunks of 4096 blocks: results equal tile by tile."""
    rng = np.random.default_rng(3)
    tiles = 70  # 4480 blocks: one full chunk plus a partial one
    scale = 2.0 ** rng.integers(-20, 20, (tiles, 64, 1))
    values = (rng.standard_normal((tiles, 64, 16)) * scale).astype(np.float32).reshape(tiles, -1)
    together = encode_tiles(values, fmt)
    one_by_one = np.stack([encode_tiles(tile_values, fmt) for tile_values in values])
    assert together.tobytes() == one_by_one.tobytes()
    decoded = decode_tiles(together, fmt)
    assert decoded.tobytes() == np.stack([decode_tiles(t, fmt) for t in together]).tobytes()
    # decode_block chunks by rows of tiles: 70 rows x 1 column spans two chunks
    block = decode_block(together, fmt, TILE, 70, 1)
    from tilewright.device.formats import untilize

    assert block.tobytes() == untilize(decoded.reshape(70, 1, -1)).tobytes()
    wide = decode_block(together, fmt, TILE, 1, 70)
    assert wide.tobytes() == untilize(decoded.reshape(1, 70, -1)).tobytes()
