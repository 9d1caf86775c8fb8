"""The layout part of tt-metal's compute kernel API for Python kernels: tilize (and
fast_tilize), untilize, pack_untilize and pack_rows (``api/compute/{tilize,untilize,
pack_untilize,pack_rows}.h``).

A row-major block in a CB is 32 rows of ``n * 32`` values, stored row after row from the
CB's read (or write) pointer; it fills ``n`` tile-sized pages of a 16/32-bit format.
tilize_block reads such a block and packs ``n`` tiles; untilize_block and
pack_untilize_block do the reverse.  Values pass through DST (rounded to its format);
integer formats are copied exactly, and a value an integer format cannot hold is an
error naming it.  Checks and messages are the native runtime's
(``native/runtime/layout.cpp``), from :mod:`tilewright.device.api_messages`.
"""

from __future__ import annotations

import numpy as np

from tilewright.device import api_messages as M
from tilewright.device.cb import read_limit, write_limit
from tilewright.device.formats import TILE_32x32, decode_elements, encode_elements
from tilewright.device.formats.codec import ELEMENT_CODEC_FORMATS
from tilewright.device.formats.dataformat import (
    BLOCK_FLOAT,
    ELEMENT_SIZE,
    INTEGER_DTYPE,
    as_data_format,
)
from tilewright.device.kernel_api.compute import (
    _capacity,
    _check_dst,
    _ctx,
    _dst,
    _init,
    _init_cbs,
    _round_dst,
    _run,
    _unpack,
    pack_values,
    slot_addr,
)
from tilewright.device.kernel_api.dataflow import api_state, circular_buffer
from tilewright.device.perf import pipeline

__all__ = [
    "tilize_init",
    "tilize_init_short",
    "tilize_init_short_with_dt",
    "tilize_uninit",
    "tilize_uninit_with_dt",
    "tilize_block",
    "fast_tilize_init",
    "fast_tilize_init_with_dt",
    "fast_tilize_uninit",
    "fast_tilize_block",
    "untilize_init",
    "untilize_init_short",
    "untilize_uninit",
    "untilize_block",
    "pack_untilize_init",
    "pack_untilize_uninit",
    "pack_untilize_block",
    "pack_untilize_dest_init",
    "pack_untilize_dest",
    "pack_rows_init",
    "pack_rows_uninit",
    "pack_rows",
]


def _tile32(cb, what: str) -> None:
    tile = cb.tile or TILE_32x32
    if (tile.height, tile.width) != (32, 32):
        raise M.TILE_SHAPE(what=what, cb=cb, h=tile.height, w=tile.width)


def _row_major_format(cb, what: str):
    """(format, element size) of a CB that holds row-major data."""
    fmt = as_data_format(cb.format_code)
    if fmt in BLOCK_FLOAT:
        raise M.ROW_MAJOR_BFP(what=what, cb=cb, format=fmt)
    if fmt not in ELEMENT_CODEC_FORMATS:
        raise M.ROW_MAJOR_SIZE(what=what, format=fmt, cb=cb)
    return fmt, ELEMENT_SIZE[fmt]


def _storable(values: np.ndarray, fmt, what: str, cb) -> np.ndarray:
    """``values`` as they are stored in ``fmt`` (the first value an integer format cannot
    hold, in the order given, is an error -- the native runtime stores in that order)."""
    dtype = INTEGER_DTYPE.get(fmt)
    if dtype is None:
        return values.astype(np.float32, copy=False)
    info = np.iinfo(dtype)
    flat = values.reshape(-1).astype(np.float64)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(flat) | (flat != np.trunc(flat)) | (flat < info.min) | (flat > info.max)
    if bad.any():
        raise M.ROW_MAJOR_VALUE(
            what=what, value=float(flat[int(np.argmax(bad))]), format=fmt, cb=cb
        )
    return flat.astype(dtype).reshape(values.shape)


def _through_dst(ctx, cb, itile: int, integer: bool) -> np.ndarray:
    """Tile ``itile`` of ``cb`` as DST holds it (integer formats: unrounded)."""
    values = _unpack(cb.index, itile)
    return values if integer else _round_dst(ctx, values)


# -- tilize -----------------------------------------------------------------------------------


def tilize_init(icb: int, block: int, ocb: int) -> None:
    _init_cbs(icb, ocb)


tilize_init_short = tilize_init


def tilize_init_short_with_dt(old_icb: int, new_icb: int, block: int, ocb: int) -> None:
    _init_cbs(old_icb, new_icb, ocb)


def tilize_uninit(icb: int, ocb: int) -> None:
    _init_cbs(icb, ocb)


def tilize_uninit_with_dt(old_icb: int, new_icb: int, ocb: int) -> None:
    _init_cbs(old_icb, new_icb, ocb)


def _tilize(fn: str, icb: int, block: int, ocb: int, input_tile_index: int, output_tile_index: int):
    ctx = _ctx()
    src, dst = circular_buffer(icb), circular_buffer(ocb)
    what = M.TILIZE_WHAT.text(fn=fn, icb=src, block=block, ocb=dst)
    if block < 1 or input_tile_index < 0:
        raise M.TILIZE_ARGS(what=what)
    _tile32(src, what)
    _tile32(dst, what)
    fmt, esize = _row_major_format(src, what)
    width = block * 32
    count = 31 * width + (input_tile_index + block) * 32
    needed = count * esize
    waited = read_limit(src)
    available = waited * src.page_size
    if needed > available:
        raise M.TILIZE_PARTIAL(
            what=what, width=width, format=fmt, bytes=needed, pages=-(-needed // src.page_size),
            waited=waited, available=available, cb=src,
        )  # fmt: skip
    if src.rd_ptr + needed > src.fifo_limit:
        raise M.TILIZE_WRAP(what=what, cb=src)
    values = decode_elements(ctx.core.l1[src.rd_ptr : src.rd_ptr + needed], fmt, count)
    exact = fmt in INTEGER_DTYPE
    if not exact:
        values = values.astype(np.float32, copy=False)
    index = np.arange(32)[:, None] * width + np.arange(32)[None, :]
    for t in range(block):
        tile = values[index + 32 * (input_tile_index + t)]
        pack_values(ctx, dst, output_tile_index + t, tile if exact else _round_dst(ctx, tile), what)
    pipeline.tile_through(_run(), block * src.page_size, block * dst.page_size, block)


def tilize_block(
    icb: int, block: int, ocb: int, input_tile_index: int = 0, output_tile_index: int = 0
) -> None:
    """Tilize a row-major block of 32 rows x ``block * 32`` values at the front of ``icb``.

    Output tile ``t`` (packed out of order into slot ``output_tile_index + t`` of the
    reservation) holds columns ``32 * (input_tile_index + t)`` .. ``+ 31`` of the block,
    whose rows are ``block * 32`` values apart (tt-llk ``llk_unpack_tilize``).
    """
    _tilize("tilize_block", icb, block, ocb, input_tile_index, output_tile_index)


# fast_tilize: the same result as tilize on the emulated packer (the hardware path differs
# only in speed).


def fast_tilize_init(icb: int, full_dim: int, ocb: int) -> None:
    _init_cbs(icb, ocb)


fast_tilize_init_with_dt = fast_tilize_init


def fast_tilize_uninit(icb: int, ocb: int) -> None:
    _init_cbs(icb, ocb)


def fast_tilize_block(
    icb: int, block: int, ocb: int, input_tile_index: int = 0, output_tile_index: int = 0
) -> None:
    """``tilize_block`` (the hardware's faster unpack path, the same tiles)."""
    _tilize("tilize_block", icb, block, ocb, input_tile_index, output_tile_index)


# -- untilize ---------------------------------------------------------------------------------


def untilize_init(icb: int, ocb: int = 16) -> None:
    """``untilize_init(icb)`` (newer) or ``untilize_init<N>(icb, ocb)`` (older)."""
    _init_cbs(icb)


def untilize_init_short(icb: int) -> None:
    _init_cbs(icb)


def untilize_uninit(icb: int) -> None:
    _init_cbs(icb)


def _write_row_major(
    ctx, cb, slot: int, tiles: list[list[np.ndarray]], col_offset: int, row_width: int, what: str
) -> None:
    """Store a grid of tiles (``rows x cols``) row-major into ``cb`` from tile slot ``slot``.

    Row ``i`` of the block starts ``i * row_width`` values after the slot; the tiles land
    in columns ``col_offset ..`` of it.
    """
    fmt, esize = _row_major_format(cb, what)
    rows = len(tiles) * 32
    region = rows * row_width * esize
    base = cb.wr_ptr + slot * cb.page_size
    if base + cb.page_size > cb.fifo_limit and slot < cb.num_pages:
        base -= cb.num_pages * cb.page_size
    if slot >= cb.num_pages or base + region > cb.fifo_limit:
        raise M.ROW_MAJOR_FIT(
            what=what, rows=rows, width=row_width, format=fmt, bytes=region, cb=cb, slot=slot,
            pages=cb.num_pages, page=cb.page_size,
        )  # fmt: skip
    pages = -(-region // cb.page_size)
    limit = write_limit(cb)
    if slot + pages > limit:
        raise M.SLOTS_UNRESERVED(what=what, count=pages, cb=cb, slot=slot, reserved=limit)
    stored = [[_storable(t, fmt, what, cb) for t in row] for row in tiles]  # C++ order
    block = np.concatenate([np.concatenate(row, axis=1) for row in stored], axis=0)
    data = encode_elements(block, fmt)
    cols = block.shape[1]
    view = ctx.core.l1[base : base + region].reshape(rows, row_width * esize)
    view[:, col_offset * esize : (col_offset + cols) * esize] = data.reshape(rows, cols * esize)


def _untilize_checks(ctx, block_ct_dim: int, full_ct_dim: int, what: str) -> None:
    if block_ct_dim < 1 or full_ct_dim < 1 or full_ct_dim % block_ct_dim:
        raise M.UNTILIZE_DIMS(what=what)
    cap = _capacity(ctx)
    if block_ct_dim > cap:
        raise M.UNTILIZE_DST(what=what, block_ct=block_ct_dim, capacity=cap)


def _waited_tiles(ctx, src, n: int, what: str) -> list[np.ndarray]:
    """The first ``n`` waited tiles of ``src`` as DST holds them."""
    waited = read_limit(src)
    if waited < n:
        raise M.PAGES_NOT_WAITED(what=what, need=n, cb=src, waited=waited)
    integer = as_data_format(src.format_code) in INTEGER_DTYPE
    return [_through_dst(ctx, src, t, integer) for t in range(n)]


def untilize_block(icb: int, full_ct_dim: int, ocb: int, block_ct_dim: int = 1) -> None:
    """Untilize ``full_ct_dim`` tiles at the front of ``icb`` into a row-major block.

    The block (32 rows of ``full_ct_dim * 32`` values) is packed at the next sequential
    slot of ``ocb``'s reservation and takes ``full_ct_dim`` slots.
    """
    ctx = _ctx()
    src, dst = circular_buffer(icb), circular_buffer(ocb)
    what = M.UNTILIZE_WHAT.text(icb=src, full=full_ct_dim, ocb=dst)
    _untilize_checks(ctx, block_ct_dim, full_ct_dim, what)
    tiles = [_waited_tiles(ctx, src, full_ct_dim, what)]
    _write_row_major(ctx, dst, dst.pack_counter, tiles, 0, full_ct_dim * 32, what)
    dst.pack_counter += full_ct_dim
    pipeline.tile_through(
        _run(), full_ct_dim * src.page_size, full_ct_dim * dst.page_size, full_ct_dim
    )


def pack_untilize_init(
    icb: int, ocb: int, block_ct_dim: int = 8, full_ct_dim: int | None = None
) -> None:
    _init_cbs(icb, ocb)


def pack_untilize_uninit(ocb: int) -> None:
    _init_cbs(ocb)


def pack_untilize_dest_init(
    ocb: int,
    face_r_dim: int = 16,
    num_faces: int = 4,
    block_ct_dim: int = 8,
    full_ct_dim: int | None = None,
) -> None:
    _init_cbs(ocb)


def _pack_untilize_index(block_rt_dim: int, block_c_index: int, full: int, block_ct_dim: int, what):
    if block_rt_dim < 1 or not 0 <= block_c_index < full // block_ct_dim:
        raise M.PACK_UNTILIZE_INDEX(what=what, limit=full // block_ct_dim)


def pack_untilize_block(
    icb: int,
    block_rt_dim: int,
    ocb: int,
    block_c_index: int = 0,
    block_ct_dim: int = 8,
    full_ct_dim: int | None = None,
) -> None:
    """Untilize ``block_rt_dim x block_ct_dim`` tiles (row-major at the front of ``icb``).

    The output is ``block_rt_dim * 32`` rows of ``full_ct_dim * 32`` values from the start
    of ``ocb``'s reservation; this call fills columns ``block_c_index * block_ct_dim * 32``
    onwards (wide rows are untilized in ``full_ct_dim / block_ct_dim`` calls).  Defaults
    as tt-metal's templates: ``block_ct_dim = 8``, ``full_ct_dim = block_ct_dim``.
    """
    ctx = _ctx()
    full = full_ct_dim or block_ct_dim
    src, dst = circular_buffer(icb), circular_buffer(ocb)
    what = M.PACK_UNTILIZE_WHAT.text(
        block_ct=block_ct_dim, full=full, icb=src, block_rt=block_rt_dim, ocb=dst
    )
    _untilize_checks(ctx, block_ct_dim, full, what)
    _pack_untilize_index(block_rt_dim, block_c_index, full, block_ct_dim, what)
    n = block_rt_dim * block_ct_dim
    flat = _waited_tiles(ctx, src, n, what)
    tiles = [flat[r * block_ct_dim : (r + 1) * block_ct_dim] for r in range(block_rt_dim)]
    _write_row_major(ctx, dst, 0, tiles, block_c_index * block_ct_dim * 32, full * 32, what)
    pipeline.tile_through(_run(), n * src.page_size, n * dst.page_size, n)


def pack_untilize_dest(
    ocb: int,
    block_rt_dim: int = 1,
    block_c_index: int = 0,
    face_r_dim: int = 16,
    num_faces: int = 4,
    block_ct_dim: int = 8,
    full_ct_dim: int | None = None,
) -> None:
    """Untilize DST tiles ``0 .. block_rt_dim * block_ct_dim - 1`` (row-major) into ``ocb``."""
    ctx = _ctx()
    full = full_ct_dim or block_ct_dim
    dst = circular_buffer(ocb)
    what = M.PACK_UNTILIZE_DEST_WHAT.text(
        block_ct=block_ct_dim, full=full, ocb=dst, block_rt=block_rt_dim
    )
    _untilize_checks(ctx, block_ct_dim, full, what)
    _pack_untilize_index(block_rt_dim, block_c_index, full, block_ct_dim, what)
    n = block_rt_dim * block_ct_dim
    _check_dst(ctx, n - 1)
    regs = _dst(ctx)
    tiles = [[regs[r * block_ct_dim + c] for c in range(block_ct_dim)] for r in range(block_rt_dim)]
    _write_row_major(ctx, dst, 0, tiles, block_c_index * block_ct_dim * 32, full * 32, what)
    pipeline.tile_pack(_run(), n * dst.page_size)


# -- pack_rows: DST holds row-major data (a page unpacked as a tile); pack its first num_rows
# rows of 16 datums, in storage order, to the next slot of the output CB ---------------------

_ROW = np.arange(1024)
_STORAGE_ORDER = (
    (((_ROW // 256) // 2) * 16 + (_ROW % 256) // 16) * 32 + ((_ROW // 256) % 2) * 16 + _ROW % 16
)
"""Row-major index (in a 32x32 DST tile) of the i-th datum in storage (face) order."""


def pack_rows_init(*args: int, row_num_datums: int = 16) -> None:
    """``pack_rows_init(num_rows)`` or ``pack_rows_init<row_num_datums>(ocb, num_rows)``."""
    if len(args) == 1:
        _init()
        count = args[0]
    else:
        ocb, num_rows = args
        _init_cbs(ocb)
        count = num_rows * row_num_datums // 16
    api_state(_ctx())["pack_rows"] = int(count) & 0xFFFFFFFF


def pack_rows_uninit() -> None:
    _init()


def pack_rows(idst: int, ocb: int, output_index: int = 0, row_num_datums: int = 16) -> None:
    """Pack the first ``num_rows`` rows of 16 datums of DST[idst] (storage order) into the
    next slot of ``ocb`` (``num_rows`` from the last ``pack_rows_init``, else 1)."""
    ctx = _ctx()
    _check_dst(ctx, idst)
    cb = circular_buffer(ocb)
    what = "pack_rows"
    fmt, esize = _row_major_format(cb, what)
    num_rows = api_state(ctx).get("pack_rows", 1)
    if not 1 <= num_rows <= 64:
        raise M.PACK_ROWS_COUNT(rows=num_rows)
    size = num_rows * 16 * esize
    slot = cb.pack_counter
    if slot >= cb.num_pages or size > cb.page_size:
        raise M.PACK_ROWS_FIT(rows=num_rows, bytes=size, page=cb.page_size, cb=cb)
    addr = slot_addr(cb, slot, what)
    values = _dst(ctx)[idst].reshape(-1)[_STORAGE_ORDER[: num_rows * 16]]
    ctx.core.l1[addr : addr + size] = encode_elements(_storable(values, fmt, what, cb), fmt)
    cb.pack_counter += 1
    pipeline.tile_pack(_run(), size)
