"""Block-float tiles (Bfp8_b, Bfp4_b, Bfp2_b and the "A"-exponent Bfp8, Bfp4, Bfp2).

Bit-exact with tt-metal's host packer and unpacker (reference §2.4):
``tt_metal/impl/data_format/blockfloat_common.cpp`` (``get_max_exp``,
``convert_u32_to_bfp``, ``pack_fp32_vec_as_bfp_tiles``) and the SIMD unpackers in
``bfloat8.cpp`` / ``bfloat4.cpp`` / ``bfloat2.cpp`` (``unpack_bfp*_tiles_into_float_vec``).

Layout of one tile: exponent section (one byte per block = 16 consecutive elements of one
face row, in device element order, padded to ``l1_alignment``), mantissa section (one code
of ``W + 1`` bits ``[sign | magnitude]`` per element, packed little-endian with element 0
in the least significant bits), then zero padding up to ``dram_alignment``.  Because face
width is always 16, block ``b`` of a tile is simply elements ``16*b .. 16*b + 15`` of the
tile in device order.

Encode, per block of 16 float32 bit patterns (W = 7 / 3 / 1 magnitude bits):

1. shared exponent ``E`` = max of the 8-bit exponent fields (for A formats each field is
   first rebiased to 5 bits, ``e - 127 + 15`` clamped to 0..31);
2. an element whose 8-bit exponent field is 0 (+-0 or a denormal) gets code 0;
3. A formats only: an element whose rebiased exponent is above 31 takes mantissa 0x7FFFFF,
   one below 0 takes mantissa 0 (both then clamped as in step 1);
4. ``m = (1 << 23) | mantissa``, shifted right by ``E - e`` (31+ -> 0);
5. round to W bits: ``shift = 24 - W``, round-to-nearest, ties to even on the kept LSB,
   saturate at ``2**W - 1`` (``truncate=True``: plain right shift, tt-metal's
   ``truncate_bfp_mantissa``);
6. a zero magnitude clears the sign.

Decode (the SIMD unpacker, bit assembly rather than arithmetic): magnitude 0 gives
``sign << 31`` (so a raw code ``[1 | 0]`` decodes to -0.0, which the encoder never
writes); otherwise the magnitude is normalised by ``s`` left shifts to put its top bit
in bit ``W - 1``, the fraction bits below it become the top fraction bits of a float32
with exponent field ``E - s`` (``E - s + 112`` for A formats), and lanes with
``s > E`` are flushed to +0.  Consequences, all as on tt-metal:

* the value is ``(-1)**s * mag * 2**(E - 127 - (W - 1))`` whenever that is a normal float;
* ``s == E`` yields exponent field 0, i.e. a float32 denormal holding the fraction bits
  (not the mathematically exact value); ``s > E`` yields +0;
* -0.0 and denormal inputs encode to code 0 and decode to +0.0;
* +-Inf in a block makes ``E = 255``; it encodes to magnitude ``2**(W-1)`` and decodes back
  to +-Inf; the block's finite values lose everything below ``2**(e - 255 + 24)``, i.e.
  become 0 unless huge;
* NaN also makes ``E = 255``; it decodes to a NaN whose top fraction bits are kept if any
  of its top ``W - 1`` fraction bits (after rounding) are set, otherwise to +-Inf (so
  quiet NaN 0x7FC00000 survives bfp8/bfp4 as 0x7FC00000 and becomes +Inf in bfp2);
* A formats saturate: exponents above 2**16 clamp to E = 31 with mantissa 0x7FFFFF (Inf
  and NaN included); tiny nonzero values keep a hidden bit at exponent 0 (2**-15).

Inputs are converted to float32 (a bf16 input widens exactly); to emulate a bf16 source
round it to bf16 first (``bf16.float32_to_bf16_bits``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .dataformat import BLOCK_FLOAT, BlockFloatSpec, DataFormat, ExponentKind
from .tile import TileShape, round_up
from .tilize import tile_view

__all__ = [
    "BLOCK_SIZE",
    "bfp_encode_codes",
    "bfp_pack_tiles",
    "decode_bfp_block",
    "decode_bfp_tiles",
    "decode_lut",
    "encode_bfp_tiles",
]

BLOCK_SIZE = 16  # elements sharing one exponent: one face row
_EXP_A_REBIAS = 127 - 15
_FLOAT32_HIDDEN_BIT = 1 << 23
_FLOAT32_MANTISSA = _FLOAT32_HIDDEN_BIT - 1


_CHUNK_BLOCKS = 4096  # 64K elements per pass: the work buffers stay in cache and are reused


@dataclass(slots=True)
class _EncodeWork:
    """Reusable work buffers for one chunk of blocks (fresh temporaries cost page faults)."""

    mantissa: np.ndarray
    scratch: np.ndarray
    exponent: np.ndarray

    @classmethod
    def for_blocks(cls, blocks: int) -> _EncodeWork:
        shape = (blocks, BLOCK_SIZE)
        return cls(
            np.empty(shape, np.uint32), np.empty(shape, np.uint32), np.empty(shape, np.uint8)
        )


def _encode_chunk(
    bits: np.ndarray,
    spec: BlockFloatSpec,
    truncate: bool,
    shared_out: np.ndarray,
    codes_out: np.ndarray,
    work: _EncodeWork,
) -> None:
    """§2.4 steps 1-6 for ``(blocks, 16)`` float32 bit patterns, written into the outputs."""
    blocks = bits.shape[0]
    width = spec.mantissa_bits
    mantissa, scratch = work.mantissa[:blocks], work.scratch[:blocks]
    exponent = work.exponent[:blocks]

    np.right_shift(bits, 23, out=exponent, casting="unsafe")  # the uint8 cast drops the sign
    nonzero = exponent != 0  # exponent field 0: +-0 or denormal -> code 0
    np.bitwise_and(bits, _FLOAT32_MANTISSA, out=mantissa)
    if spec.exponent is ExponentKind.A:
        rebiased = exponent.astype(np.int16) - _EXP_A_REBIAS
        mantissa[rebiased > 31] = _FLOAT32_MANTISSA
        mantissa[rebiased < 0] = 0
        np.clip(rebiased, 0, 31, out=rebiased)
        exponent[...] = rebiased
    shared = exponent.T.copy().max(axis=0)  # reduce over a leading axis: vectorised
    shared_out[...] = shared

    mantissa |= _FLOAT32_HIDDEN_BIT
    distance = np.subtract(shared[:, None], exponent, out=exponent)  # never negative
    np.minimum(distance, 31, out=distance)
    mantissa >>= distance
    shift = 24 - width
    if not truncate:
        # round half to even: add (tie - 1) plus the kept LSB, then drop `shift` bits
        kept_lsb = np.right_shift(mantissa, shift, out=scratch)
        kept_lsb &= 1
        mantissa += (1 << (shift - 1)) - 1
        mantissa += kept_lsb
    mantissa >>= shift
    np.minimum(mantissa, (1 << width) - 1, out=mantissa)

    magnitude = mantissa.astype(np.uint8)
    magnitude *= nonzero
    np.right_shift(bits, 31 - width, out=codes_out, casting="unsafe")
    codes_out &= 1 << width  # the sign, in bit W
    codes_out *= magnitude != 0  # a zero magnitude clears the sign
    codes_out |= magnitude


def bfp_encode_codes(
    values: np.ndarray, spec: BlockFloatSpec, *, truncate: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Shared exponents and element codes of ``values`` (§2.4 steps 1-6).

    Works through the blocks in cache-sized chunks of 4096 blocks (64 tiles of 32x32),
    each chunk fully vectorised.

    Args:
        values: ``(..., n)`` with ``n`` a multiple of 16, in device element order.
        spec: the block-float format.
        truncate: round down instead of to nearest even.

    Returns:
        ``(exponents, codes)``: uint8 ``(..., n // 16)`` and uint8 ``(..., n)``.
    """
    floats = np.ascontiguousarray(values, dtype=np.float32)
    bits = floats.view(np.uint32).reshape(-1, BLOCK_SIZE)
    blocks = bits.shape[0]
    shared = np.empty(blocks, dtype=np.uint8)
    codes = np.empty(bits.shape, dtype=np.uint8)
    work = _EncodeWork.for_blocks(min(blocks, _CHUNK_BLOCKS))
    for start in range(0, blocks, _CHUNK_BLOCKS):
        stop = start + _CHUNK_BLOCKS
        _encode_chunk(bits[start:stop], spec, truncate, shared[start:stop], codes[start:stop], work)
    return shared.reshape(*floats.shape[:-1], -1), codes.reshape(floats.shape)


def _pack_codes(codes: np.ndarray, spec: BlockFloatSpec) -> np.ndarray:
    """``(..., n)`` codes -> ``(..., n * code_bits / 8)`` bytes, element 0 in the LSBs."""
    per_byte = spec.codes_per_byte
    if per_byte == 1:
        return codes
    groups = codes.reshape(*codes.shape[:-1], -1, per_byte)
    packed = groups[..., 0].copy()
    for slot in range(1, per_byte):
        packed |= groups[..., slot] << (slot * spec.code_bits)
    return packed


def _unpack_codes(packed: np.ndarray, spec: BlockFloatSpec) -> np.ndarray:
    """Inverse of ``_pack_codes``: bytes -> one code per element (uint8)."""
    per_byte = spec.codes_per_byte
    if per_byte == 1:
        return packed
    shifts = np.arange(per_byte, dtype=np.uint8) * spec.code_bits
    codes = (packed[..., None] >> shifts) & ((1 << spec.code_bits) - 1)
    return codes.reshape(*packed.shape[:-1], -1)


def _sections(tile: TileShape, spec: BlockFloatSpec, l1_alignment: int) -> tuple[int, int]:
    """(mantissa section offset, mantissa section length) within one tile."""
    return round_up(tile.num_blocks, l1_alignment), tile.num_elements * spec.code_bits // 8


def bfp_pack_tiles(
    exponents: np.ndarray,
    codes: np.ndarray,
    spec: BlockFloatSpec,
    tile: TileShape,
    tile_bytes: int,
    *,
    l1_alignment: int = 16,
) -> np.ndarray:
    """Lay out exponents and codes as tiles of ``tile_bytes`` bytes each."""
    offset, length = _sections(tile, spec, l1_alignment)
    lead = exponents.shape[:-1]
    out = np.zeros((*lead, tile_bytes), dtype=np.uint8)
    out[..., : tile.num_blocks] = exponents
    out[..., offset : offset + length] = _pack_codes(codes, spec)
    return out


def encode_bfp_tiles(
    values: np.ndarray,
    fmt: DataFormat,
    tile: TileShape,
    tile_bytes: int,
    *,
    l1_alignment: int = 16,
    truncate: bool = False,
) -> np.ndarray:
    """``(..., th*tw)`` values in device order -> ``(..., tile_bytes)`` uint8 tiles."""
    spec = BLOCK_FLOAT[fmt]
    exponents, codes = bfp_encode_codes(values, spec, truncate=truncate)
    return bfp_pack_tiles(exponents, codes, spec, tile, tile_bytes, l1_alignment=l1_alignment)


@functools.cache
def decode_lut(spec: BlockFloatSpec) -> np.ndarray:
    """float32 bit pattern for every (shared exponent byte, code): uint32 ``(256 << code_bits,)``.

    Index ``(E << code_bits) | code``.  Built once per format with the unpacker's integer
    steps (normalise, rebias, flush), so a decode is one gather.
    """
    width = spec.mantissa_bits
    max_magnitude = (1 << width) - 1
    shared = np.arange(256, dtype=np.int64)[:, None]
    code = np.arange(1 << spec.code_bits, dtype=np.int64)[None, :]
    magnitude = code & max_magnitude
    sign = code >> width
    top_bit = np.floor(np.log2(np.maximum(magnitude, 1))).astype(np.int64)
    normalise = (width - 1) - top_bit
    fraction = (((magnitude << normalise) << 1) & max_magnitude) << (23 - width)
    rebias = _EXP_A_REBIAS if spec.exponent is ExponentKind.A else 0
    exponent = shared - normalise + rebias
    bits = (sign << 31) | ((exponent << 23) & 0xFFFFFFFF) | fraction
    bits = np.where(magnitude == 0, sign << 31, bits)
    bits = np.where((magnitude != 0) & (normalise > shared), 0, bits)
    lut = bits.astype(np.uint32).ravel()
    lut.flags.writeable = False
    return lut


_CHUNK_ELEMENTS = 1 << 16  # decode this many elements per pass (index buffer in cache)


def _fill_index(
    data: np.ndarray, spec: BlockFloatSpec, tile: TileShape, l1_alignment: int, index: np.ndarray
) -> None:
    """``index[k, i] = (E << code_bits) | code`` for tiles ``data`` ``(k, tile_bytes)``."""
    offset, length = _sections(tile, spec, l1_alignment)
    exponents = np.repeat(data[:, : tile.num_blocks], BLOCK_SIZE, axis=-1)
    np.left_shift(exponents, spec.code_bits, out=index, dtype=np.intp)
    index |= _unpack_codes(data[:, offset : offset + length], spec)


def decode_bfp_tiles(
    data: np.ndarray, fmt: DataFormat, tile: TileShape, *, l1_alignment: int = 16
) -> np.ndarray:
    """``(..., tile_bytes)`` uint8 tiles -> ``(..., th*tw)`` float32 in device order.

    One gather from ``decode_lut`` at ``(E << code_bits) | code`` per element, in
    cache-sized chunks of whole tiles.
    """
    spec = BLOCK_FLOAT[fmt]
    lut = decode_lut(spec)
    lead = data.shape[:-1]
    tiles = data.reshape(-1, data.shape[-1])
    count = tiles.shape[0]
    out = np.empty((count, tile.num_elements), dtype=np.uint32)
    per_chunk = max(1, _CHUNK_ELEMENTS // tile.num_elements)
    index = np.empty((min(per_chunk, count), tile.num_elements), dtype=np.intp)
    for start in range(0, count, per_chunk):
        chunk = tiles[start : start + per_chunk]
        chunk_index = index[: chunk.shape[0]]
        _fill_index(chunk, spec, tile, l1_alignment, chunk_index)
        np.take(lut, chunk_index, out=out[start : start + chunk.shape[0]], mode="wrap")
    return out.view(np.float32).reshape(*lead, tile.num_elements)


def decode_bfp_block(
    data: np.ndarray, fmt: DataFormat, tile: TileShape, *, l1_alignment: int = 16
) -> np.ndarray:
    """``(rows, cols, tile_bytes)`` tiles -> row-major float32 ``(rows*th, cols*tw)``.

    Decodes whole rows of tiles at a time into a cache-resident buffer and copies each
    into place through ``tile_view`` (no separate untilize pass over the result).
    """
    spec = BLOCK_FLOAT[fmt]
    lut = decode_lut(spec)
    rows, cols, size = data.shape
    out = np.empty((rows * tile.height, cols * tile.width), dtype=np.uint32)
    placed = tile_view(out, tile)
    rows_per_chunk = max(1, _CHUNK_ELEMENTS // (cols * tile.num_elements))
    chunk_tiles = min(rows_per_chunk, rows) * cols
    index = np.empty((chunk_tiles, tile.num_elements), dtype=np.intp)
    values = np.empty((chunk_tiles, tile.num_elements), dtype=np.uint32)
    for start in range(0, rows, rows_per_chunk):
        chunk = data[start : start + rows_per_chunk].reshape(-1, size)
        count = chunk.shape[0]
        _fill_index(chunk, spec, tile, l1_alignment, index[:count])
        np.take(lut, index[:count], out=values[:count], mode="wrap")
        target = placed[start : start + rows_per_chunk]
        target[...] = values[:count].reshape(target.shape)
    return out.view(np.float32)
