"""tt-metal's compute kernel API (``api/compute/*.h``) for Python kernels: DST, unpack and
pack, the inits and the format switches.

The three TRISCs of a compute kernel run as one thread (the API pairs are
self-synchronising, as in tt-emule).  The DST register file holds the descriptor's
physical DST tiles (16 on Wormhole / Blackhole) of 32x32 values; one acquire gives the
kernel :func:`dst_tiles` of them (8; 4 with ``fp32_dest_acc_en``; 16 / 8 with
``dst_full_sync_en``).  DST is bf16 unless
``fp32_dest_acc_en``: every value written into DST is rounded to bf16 (round to
nearest even), so accumulation in DST (matmul over K, reduce) rounds per step as on
hardware.  Unpack (``copy_tile``, binary ops) decodes the CB's format; pack encodes
into the output CB's format at the next sequential slot after the reservation.

The math is the op registry's (``device/ops``: ``tile_ops.FPU_BINARY``, the ``matmul``,
``transpose``, ``broadcast`` block ops, ``tiled.reduce_tile``), applied with the kernel's
:class:`~tilewright.device.ops.numerics.MathConfig`; the argument and protocol checks and
their messages are :mod:`tilewright.device.api_messages`' and :mod:`tilewright.device.cb`'s,
the ones the native runtime makes.  The unpack / FPU math ops are in :mod:`.fpu`, the SFPU
ops in :mod:`.sfpu`, the layout ops (tilize, untilize, pack_rows) in :mod:`.layout`.
"""

from __future__ import annotations

import functools
from enum import IntEnum

import numpy as np

from tilewright.device import api_messages as M
from tilewright.device.cb import read_limit, write_limit
from tilewright.device.engine import ACTIVE
from tilewright.device.formats import (
    TILE_32x32,
    decode_block,
    encode_block,
    float32_to_bf16_bits,
    tile_size_bytes,
)
from tilewright.device.formats.codec import ELEMENT_CODEC_FORMATS
from tilewright.device.formats.dataformat import BLOCK_FLOAT, as_data_format
from tilewright.device.kernel_api.dataflow import api_state, circular_buffer
from tilewright.device.ops import REGISTRY
from tilewright.device.ops.numerics import MathConfig, math_config
from tilewright.device.perf import pipeline
from tilewright.errors import FormatError, KernelError
from tilewright.target.enums import DataType
from tilewright.target.model import dst_logical_tiles

__all__ = [
    "PoolType",
    "ReduceDim",
    "EltwiseBinaryType",
    "EltwiseBinaryReuseDestType",
    "BroadcastType",
    "tile_regs_acquire",
    "tile_regs_commit",
    "tile_regs_wait",
    "tile_regs_release",
    "acquire_dst",
    "release_dst",
    "compute_kernel_hw_startup",
    "binary_op_init_common",
    "unary_op_init_common",
    "init_sfpu",
    "copy_init",
    "copy_tile_init",
    "copy_tile_to_dst_init_short",
    "copy_tile_to_dst_init_short_with_dt",
    "add_tiles_init",
    "sub_tiles_init",
    "mul_tiles_init",
    "add_tiles_init_nof",
    "sub_tiles_init_nof",
    "mul_tiles_init_f",
    "binary_op_specific_init",
    "add_bcast_rows_init_short",
    "add_bcast_cols_init_short",
    "add_bcast_scalar_init_short",
    "sub_bcast_rows_init_short",
    "sub_bcast_cols_init_short",
    "sub_bcast_scalar_init_short",
    "mul_bcast_rows_init_short",
    "mul_bcast_cols_init_short",
    "mul_bcast_scalar_init_short",
    "add_tiles_bcast_scalar_init_short",
    "sub_tiles_bcast_scalar_init_short",
    "mul_tiles_bcast_scalar_init_short",
    "init_bcast",
    "unary_bcast_init",
    "mm_init",
    "mm_init_short",
    "mm_init_short_with_dt",
    "matmul_init",
    "mm_block_init",
    "mm_block_init_short",
    "mm_block_init_short_with_dt",
    "matmul_block_init",
    "reconfig_data_format",
    "reconfig_data_format_srca",
    "reconfig_data_format_srcb",
    "pack_reconfig_data_format",
    "pack_reconfig_l1_acc",
    "pack_tile",
    "pack_tile_block",
    "reduce_init",
    "reduce_uninit",
    "read_dst",
]

_DST_TILES = 16  # the DST array's size when the descriptor's is smaller (a scratch floor)


class PoolType(IntEnum):
    SUM = 0
    AVG = 1
    MAX = 2


class ReduceDim(IntEnum):
    REDUCE_ROW = 0
    REDUCE_COL = 1
    REDUCE_SCALAR = 2


class EltwiseBinaryType(IntEnum):
    ELWMUL = 0
    ELWDIV = 1
    ELWADD = 2
    ELWSUB = 3
    ELWMAXMIN = 4


class EltwiseBinaryReuseDestType(IntEnum):
    NONE = 0
    DEST_TO_SRCA = 1
    DEST_TO_SRCB = 2


class BroadcastType(IntEnum):
    NONE = 0
    COL = 1
    ROW = 2
    SCALAR = 3


# -- the running compute kernel, DST -------------------------------------------------------------


def _ctx():
    run = ACTIVE.run
    if run is None:
        raise KernelError("the compute API can only be called from inside a running kernel")
    ctx = run.kernel_context()
    if ctx.compute is None:
        raise M.NOT_COMPUTE(kernel=ctx.kernel.name)
    return ctx


def _run():
    run = ACTIVE.run
    if run is None:  # checked inline: every kernel API call ticks
        raise KernelError("the compute API can only be called from inside a running kernel")
    return run


def _bytes(cb_id: int) -> int:
    """Bytes of one tile of a CB (what unpacking or packing it moves)."""
    return circular_buffer(cb_id).page_size


@functools.lru_cache(maxsize=64)
def _math_of(compute) -> MathConfig:
    return math_config(compute)


def math_of(ctx) -> MathConfig:
    """The running kernel's numerics (what every op implementation is applied with)."""
    return _math_of(ctx.compute)


def _dst(ctx) -> np.ndarray:
    if ctx.dst is None:
        tiles = max(_DST_TILES, ctx.device.capacity.dst_physical_tiles)
        ctx.dst = np.zeros((tiles, 32, 32), dtype=np.float32)
    return ctx.dst


@functools.lru_cache(maxsize=16)
def _logical_tiles(physical: int, fp32_dest_acc_en: bool, dst_full_sync_en: bool) -> int:
    dtype = DataType.FLOAT32 if fp32_dest_acc_en else DataType.BFLOAT16
    return dst_logical_tiles(physical, dtype, dst_full_sync_en)


def dst_tiles(physical: int, compute) -> int:
    """DST tiles of one acquire for a ``ComputeConfig``: the target's rule
    (``target.model.dst_logical_tiles``, tt-mlir ``getDstLogicalSizeTiles``) on the
    descriptor's physical DST size -- 16 tiles: 8 with 16-bit DST, 4 with
    ``fp32_dest_acc_en``, doubled by ``dst_full_sync_en``.  The native runtime is handed
    this number at launch (``twrt_run_compute``); it keeps no copy of the rule."""
    return _logical_tiles(
        int(physical), bool(compute.fp32_dest_acc_en), bool(compute.dst_full_sync_en)
    )


def _capacity(ctx) -> int:
    return dst_tiles(ctx.device.capacity.dst_physical_tiles, ctx.compute)


dst_capacity = _capacity


def _check_dst(ctx, idst: int) -> None:
    cap = _capacity(ctx)
    if not 0 <= idst < cap:
        raise M.DST_RANGE(
            idst=idst,
            capacity=cap,
            fp32_dest_acc_en=ctx.compute.fp32_dest_acc_en,
            dst_full_sync_en=ctx.compute.dst_full_sync_en,
        )


def _check_dst_block(ctx, first: int, count: int, what: str) -> None:
    """DST tiles ``first .. first + count - 1`` are inside one acquire."""
    cap = _capacity(ctx)
    if first < 0 or first + count > cap:
        raise M.DST_BLOCK_RANGE(
            what=what,
            first=first,
            last=first + count - 1,
            capacity=cap,
            fp32_dest_acc_en=ctx.compute.fp32_dest_acc_en,
            dst_full_sync_en=ctx.compute.dst_full_sync_en,
        )


def _round_dst(ctx, values: np.ndarray) -> np.ndarray:
    """What DST keeps: fp32 with fp32_dest_acc_en, else bf16 (RNE)."""
    if ctx.compute.fp32_dest_acc_en:
        return values.astype(np.float32, copy=False)
    bits = float32_to_bf16_bits(values.astype(np.float32, copy=False)).astype(np.uint32) << 16
    return bits.view(np.float32)


def _write_dst(ctx, idst: int, values: np.ndarray) -> None:
    _check_dst(ctx, idst)
    _dst(ctx)[idst] = _round_dst(ctx, values)


# -- unpack and pack: the tile checks both kernel APIs make --------------------------------------


@functools.lru_cache(maxsize=64)
def _tile_bytes(fmt: int) -> int:
    """Bytes of a 32x32 tile of ``fmt`` (-1: no tile codec)."""
    data_format = as_data_format(fmt)
    if data_format not in ELEMENT_CODEC_FORMATS and data_format not in BLOCK_FLOAT:
        return -1
    try:
        return tile_size_bytes(data_format, TILE_32x32)
    except FormatError:
        return -1


def check_tile_page(cb, what: str) -> None:
    """``cb`` holds 32x32 tiles of a format with a tile codec, one per page."""
    tile = cb.tile or TILE_32x32
    if (tile.height, tile.width) != (32, 32):
        raise M.TILE_SHAPE(what=what, cb=cb, h=tile.height, w=tile.width)
    size = _tile_bytes(cb.format_code)
    if size < 0:
        raise M.NO_TILE_FORM(what=what, format=cb.format_code, cb=cb)
    if size != cb.page_size:
        raise M.PAGE_SIZE(what=what, cb=cb, page=cb.page_size, format=cb.format_code, tile=size)


def _unpack(cb_id: int, itile: int, what: str = "unpack") -> np.ndarray:
    """Tile ``itile`` (relative to the CB's read pointer) as a 32x32 float32 matrix."""
    cb = circular_buffer(cb_id)
    limit = read_limit(cb)
    if not 0 <= itile < limit:
        raise M.TILE_NOT_WAITED(itile=itile, cb=cb, waited=limit)
    check_tile_page(cb, what)
    addr = cb.rd_ptr + itile * cb.page_size
    l1 = cb.core.l1
    return decode_block(l1[addr : addr + cb.page_size], cb.data_format, TILE_32x32, 1, 1)


def slot_addr(cb, slot: int, what: str) -> int:
    """L1 address of tile slot ``slot`` of the reservation (checked against it)."""
    limit = write_limit(cb)
    if not 0 <= slot < limit:
        raise M.SLOT_UNRESERVED(what=what, cb=cb, slot=slot, reserved=limit)
    addr = cb.wr_ptr + slot * cb.page_size
    if addr + cb.page_size > cb.fifo_limit:
        addr -= cb.num_pages * cb.page_size
    return addr


def pack_values(ctx, cb, slot: int, values: np.ndarray, what: str) -> None:
    """Pack one 32x32 tile of values into ``cb`` at ``slot``, in the CB's format.

    With L1 accumulation on (``pack_reconfig_l1_acc(1)``) the packer adds the tile
    already in L1 (decoded from the CB's format) and stores the sum.
    """
    addr = slot_addr(cb, slot, what)
    check_tile_page(cb, what)
    l1 = ctx.core.l1
    if ctx.api is not None and ctx.api.get("l1_acc"):
        held = decode_block(l1[addr : addr + cb.page_size], cb.data_format, TILE_32x32, 1, 1)
        values = REGISTRY["add"].apply(held, values, config=math_of(ctx))
    l1[addr : addr + cb.page_size] = encode_block(values, cb.data_format, TILE_32x32)


# -- DST handshake -------------------------------------------------------------------------


def tile_regs_acquire() -> None:
    """MATH takes a DST half; it is zero (the previous release cleared it)."""
    ctx = _ctx()
    _dst(ctx)[:] = 0.0
    pipeline.acquire(_run())


def tile_regs_commit() -> None:
    _ctx()
    pipeline.handoff(_run())


def tile_regs_wait() -> None:
    _ctx()
    pipeline.handoff(_run())


def tile_regs_release() -> None:
    ctx = _ctx()
    _dst(ctx)[:] = 0.0
    pipeline.release(_run())


acquire_dst = tile_regs_acquire
release_dst = tile_regs_release


# -- inits ----------------------------------------------------------------------------------------
#
# On hardware an init configures the unpacker, the math engine and the packer for the
# next ops; here the values do not depend on it.  Inits reset the unpacker's transpose
# flag; those that name CBs check them where the C++ does.


def _init(*_args, **_kwargs) -> None:
    """An unpack/math/pack (re)configuration: resets the unpacker's transpose flag."""
    api_state(_ctx()).pop("unpack_transpose", None)


def sfpu_init(*_args, **_kwargs) -> None:
    """An SFPU init (math thread only): every SFPU op's ``<op>_tile_init`` is this one."""
    _ctx()


def _check_cbs(*cb_ids: int) -> None:
    for cb_id in cb_ids:
        circular_buffer(cb_id)


def _init_cbs(*cb_ids: int) -> None:
    """An init that checks the CBs it names (C++ ``detail::init_cbs``)."""
    _init()
    _check_cbs(*cb_ids)


def compute_kernel_hw_startup(*cbs: int) -> None:
    """``(icb0, icb1, ocb)`` or ``(icb, ocb)``: the once-per-kernel hardware init."""
    _init()


def binary_op_init_common(icb0: int, icb1: int, ocb: int) -> None:
    _init()


def unary_op_init_common(icb: int, ocb: int) -> None:
    _init()


def init_sfpu(icb: int, ocb: int) -> None:
    _init()


def copy_tile_init(cb: int) -> None:
    _init()


def copy_init(cb: int = 0) -> None:
    _init()


def add_tiles_init(icb0: int, icb1: int, acc_to_dest: bool = False) -> None:
    _init()


def sub_tiles_init(icb0: int, icb1: int, acc_to_dest: bool = False) -> None:
    _init()


def mul_tiles_init(icb0: int, icb1: int) -> None:
    _init()


def add_tiles_init_nof() -> None:
    _init()


def sub_tiles_init_nof() -> None:
    _init()


def mul_tiles_init_f() -> None:
    _init()


def binary_op_specific_init(
    icb0: int = 0, icb1: int = 1, op: EltwiseBinaryType = EltwiseBinaryType.ELWADD
) -> None:
    _init()


def copy_tile_to_dst_init_short(cb_id: int, transpose: int = 0) -> None:
    """Datacopy init; with ``transpose`` the unpacker transposes every tile it copies (WH)."""
    _init_cbs(cb_id)
    if transpose:
        api_state(_ctx())["unpack_transpose"] = True


def copy_tile_to_dst_init_short_with_dt(old_cb: int, new_cb: int, transpose: int = 0) -> None:
    """Datacopy init after switching the unpacker from ``old_cb``'s format to ``new_cb``'s."""
    _check_cbs(old_cb)
    copy_tile_to_dst_init_short(new_cb, transpose)


def mm_init(in0_cb: int, in1_cb: int, out_cb: int = 16, transpose: int = 0) -> None:
    """Full matmul init (tile form: one output tile per matmul_tiles)."""
    _init()
    api_state(_ctx()).pop("matmul_block", None)


def mm_init_short(in0_cb: int, in1_cb: int, transpose: int = 0) -> None:
    mm_init(in0_cb, in1_cb, 16, transpose)


def mm_init_short_with_dt(in0_cb: int, in1_cb: int, old_in1_cb: int, transpose: int = 0) -> None:
    mm_init(in0_cb, in1_cb, 16, transpose)


def matmul_init(in0_cb: int, in1_cb: int, transpose: int = 0) -> None:
    mm_init(in0_cb, in1_cb, 16, transpose)


def matmul_block_init(
    in0_cb: int, in1_cb: int, transpose: int = 0, ct_dim: int = 1, rt_dim: int = 1, kt_dim: int = 1
) -> None:
    """Configure matmul_block for ``rt_dim x ct_dim`` output tiles (the hardware MOP)."""
    _init_cbs(in0_cb, in1_cb)
    api_state(_ctx())["matmul_block"] = (bool(transpose), ct_dim, rt_dim, kt_dim)


def mm_block_init(
    in0_cb: int,
    in1_cb: int,
    out_cb: int = 16,
    transpose: int = 0,
    ct_dim: int = 1,
    rt_dim: int = 1,
    kt_dim: int = 1,
) -> None:
    matmul_block_init(in0_cb, in1_cb, transpose, ct_dim, rt_dim, kt_dim)


def mm_block_init_short(
    in0_cb: int, in1_cb: int, transpose: int = 0, ct_dim: int = 1, rt_dim: int = 1, kt_dim: int = 1
) -> None:
    matmul_block_init(in0_cb, in1_cb, transpose, ct_dim, rt_dim, kt_dim)


def mm_block_init_short_with_dt(
    in0_cb: int,
    in1_cb: int,
    old_in1_cb: int,
    transpose: int = 0,
    ct_dim: int = 1,
    rt_dim: int = 1,
    kt_dim: int = 1,
) -> None:
    _check_cbs(old_in1_cb)
    matmul_block_init(in0_cb, in1_cb, transpose, ct_dim, rt_dim, kt_dim)


def _bcast_init_short(icb0: int, icb1: int) -> None:
    _init_cbs(icb0, icb1)


add_bcast_rows_init_short = _bcast_init_short
add_bcast_cols_init_short = _bcast_init_short
add_bcast_scalar_init_short = _bcast_init_short
sub_bcast_rows_init_short = _bcast_init_short
sub_bcast_cols_init_short = _bcast_init_short
sub_bcast_scalar_init_short = _bcast_init_short
mul_bcast_rows_init_short = _bcast_init_short
mul_bcast_cols_init_short = _bcast_init_short
mul_bcast_scalar_init_short = _bcast_init_short
add_tiles_bcast_scalar_init_short = _bcast_init_short
sub_tiles_bcast_scalar_init_short = _bcast_init_short
mul_tiles_bcast_scalar_init_short = _bcast_init_short


def init_bcast(
    icb0: int,
    icb1: int,
    ocb: int,
    op: EltwiseBinaryType = EltwiseBinaryType.ELWADD,
    dim: BroadcastType = BroadcastType.ROW,
) -> None:
    """``init_bcast<op, dim>(icb0, icb1, ocb)``."""
    _init_cbs(icb0, icb1)


def unary_bcast_init(icb: int, ocb: int, bcast_type: BroadcastType = BroadcastType.ROW) -> None:
    _init_cbs(icb, ocb)


reduce_uninit = _init


def reduce_init(
    icb: int,
    icb_scaler: int,
    ocb: int,
    pool_type: PoolType = PoolType.SUM,
    reduce_dim: ReduceDim = ReduceDim.REDUCE_ROW,
    enforce_fp32_accumulation: bool = False,
) -> None:
    _init()


# -- format switches -------------------------------------------------------------------------
#
# On hardware the unpacker / packer are configured for one data format at a time and
# reconfig_data_format / pack_reconfig_data_format switch them between CBs of different
# formats.  Here every unpack decodes, and every pack encodes, with the format of the CB
# it touches, so the switches only check that the CBs exist.


def reconfig_data_format(*cb_ids: int) -> None:
    """``(srca_new, srcb_new)`` or ``(srca_old, srca_new, srcb_old, srcb_new)``."""
    _init_cbs(*cb_ids)


def reconfig_data_format_srca(*cb_ids: int) -> None:
    """``(srca_new)`` or ``(srca_old, srca_new)``."""
    _init_cbs(*cb_ids)


reconfig_data_format_srcb = reconfig_data_format_srca


def pack_reconfig_data_format(*cb_ids: int) -> None:
    """``(ocb_new)`` or ``(ocb_old, ocb_new)``."""
    _ctx()
    _check_cbs(*cb_ids)


def pack_reconfig_l1_acc(l1_acc_en: int) -> None:
    """Enable (1) or disable (0) L1 accumulation: while on, every pack does ``CB += DST``."""
    ctx = _ctx()
    if l1_acc_en not in (0, 1):
        raise M.L1_ACC_FLAG(flag=l1_acc_en)
    api_state(ctx)["l1_acc"] = bool(l1_acc_en)


# -- pack -------------------------------------------------------------------------------------


def pack_tile(idst: int, ocb: int, output_tile_index: int = 0, out_of_order: bool = False) -> None:
    """Pack DST[idst] into the output CB, converted to its format.

    Sequential by default: each call writes the next tile slot after the reservation
    point (``out_idx`` ignored); the counter resets at ``cb_push_back``.  With L1
    accumulation on, the slot receives ``CB + DST``.
    """
    ctx = _ctx()
    _check_dst(ctx, idst)
    cb = circular_buffer(ocb)
    slot = output_tile_index if out_of_order else cb.pack_counter
    pack_values(ctx, cb, slot, _dst(ctx)[idst], "pack_tile")
    if not out_of_order:
        cb.pack_counter += 1
    l1_acc = bool(ctx.api is not None and ctx.api.get("l1_acc"))
    pipeline.tile_pack(_run(), cb.page_size, l1_acc)


def pack_tile_block(ifrom_dst: int, ocb: int, ntiles: int) -> None:
    """Pack DST tiles ``ifrom_dst .. ifrom_dst + ntiles - 1`` into the next ``ntiles`` slots."""
    _ctx()
    if ntiles < 1:
        raise M.NTILES(ntiles=ntiles)
    for i in range(ntiles):
        pack_tile(ifrom_dst + i, ocb)


def read_dst(idst: int) -> np.ndarray:
    """A copy of DST tile ``idst`` (debugging aid; tt-metal's dprint of DST)."""
    ctx = _ctx()
    _check_dst(ctx, idst)
    return _dst(ctx)[idst].copy()
