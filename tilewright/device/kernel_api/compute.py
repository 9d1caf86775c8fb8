"""tt-metal's compute kernel API (``api/compute/*.h``) for Python kernels.

The three TRISCs of a compute kernel run as one thread (the API pairs are
self-synchronising, as in tt-emule).  The DST register file holds 16 tiles of
32x32 values; one acquire gives the kernel half of it (8 tiles; 4 with
``fp32_dest_acc_en``) unless ``dst_full_sync_en`` (16 / 8).  DST is bf16 unless
``fp32_dest_acc_en``: every value written into DST is rounded to bf16 (round to
nearest even), so accumulation in DST (matmul over K, reduce) rounds per step as on
hardware.  Unpack (``copy_tile``, binary ops) decodes the CB's format; pack encodes
into the output CB's format at the next sequential slot after the reservation.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from tilewright.device.engine import ACTIVE, current_run
from tilewright.device.formats import (
    TILE_32x32,
    decode_block,
    decode_elements,
    element_size,
    encode_block,
    encode_elements,
    float32_to_bf16_bits,
    is_block_float,
    is_integer,
)
from tilewright.device.formats.dataformat import as_data_format, format_name
from tilewright.device.kernel_api.dataflow import api_state, circular_buffer
from tilewright.device.ops import get_op
from tilewright.device.ops.special import erf as _erf
from tilewright.device.perf import pipeline
from tilewright.errors import KernelError

__all__ = [
    "PoolType",
    "ReduceDim",
    "EltwiseBinaryType",
    "EltwiseBinaryReuseDestType",
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
    "copy_tile_init",
    "copy_tile_to_dst_init_short",
    "copy_tile",
    "add_tiles_init",
    "sub_tiles_init",
    "mul_tiles_init",
    "add_tiles",
    "sub_tiles",
    "mul_tiles",
    "add_tiles_bcast_rows",
    "add_tiles_bcast_cols",
    "add_tiles_bcast_scalar",
    "mul_tiles_bcast_rows",
    "mul_tiles_bcast_cols",
    "mul_tiles_bcast_scalar",
    "sub_tiles_bcast_rows",
    "sub_tiles_bcast_cols",
    "sub_tiles_bcast_scalar",
    "mm_init",
    "mm_init_short",
    "matmul_init",
    "matmul_tiles",
    "mm_block_init",
    "mm_block_init_short",
    "matmul_block_init",
    "matmul_block",
    "binary_dest_reuse_tiles_init",
    "binary_dest_reuse_tiles",
    "transpose_wh_init",
    "transpose_wh_init_short",
    "transpose_wh_tile",
    "transpose_wh_dest_init_short",
    "transpose_wh_dest",
    "tilize_init",
    "tilize_init_short",
    "tilize_init_short_with_dt",
    "tilize_uninit",
    "tilize_uninit_with_dt",
    "tilize_block",
    "untilize_init",
    "untilize_init_short",
    "untilize_uninit",
    "untilize_block",
    "pack_untilize_init",
    "pack_untilize_uninit",
    "pack_untilize_block",
    "pack_untilize_dest_init",
    "pack_untilize_dest",
    "reconfig_data_format",
    "reconfig_data_format_srca",
    "reconfig_data_format_srcb",
    "pack_reconfig_data_format",
    "pack_reconfig_l1_acc",
    "pack_tile",
    "pack_tile_block",
    "reduce_init",
    "reduce_tile",
    "reduce_uninit",
    "read_dst",
    "SFPU_UNARY",
    "SFPU_UNARY_PARAM",
]

_DST_TILES = 16


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


def _ctx():
    run = ACTIVE.run
    if run is None:
        raise KernelError("the compute API can only be called from inside a running kernel")
    ctx = run.kernel_context()
    if ctx.compute is None:
        raise KernelError(
            f"kernel {ctx.kernel.name!r} is a data-movement kernel; the compute API runs on compute kernels"
        )
    return ctx


def _run():
    run = ACTIVE.run
    if run is None:  # checked inline: every kernel API call ticks
        raise KernelError("the compute API can only be called from inside a running kernel")
    return run


def _bytes(cb_id: int) -> int:
    """Bytes of one tile of a CB (what unpacking or packing it moves)."""
    return circular_buffer(cb_id).page_size


def _dst(ctx) -> np.ndarray:
    if ctx.dst is None:
        ctx.dst = np.zeros((_DST_TILES, 32, 32), dtype=np.float32)
    return ctx.dst


def _capacity(ctx) -> int:
    cfg = ctx.compute
    n = _DST_TILES if cfg.dst_full_sync_en else _DST_TILES // 2
    return n // 2 if cfg.fp32_dest_acc_en else n


def _check_dst(ctx, idst: int) -> None:
    cap = _capacity(ctx)
    if not 0 <= idst < cap:
        raise KernelError(
            f"DST index {idst} is out of range: this compute kernel has {cap} DST tiles per acquire "
            f"(fp32_dest_acc_en={ctx.compute.fp32_dest_acc_en}, "
            f"dst_full_sync_en={ctx.compute.dst_full_sync_en})"
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


def _unpack(cb_id: int, itile: int) -> np.ndarray:
    """Tile ``itile`` (relative to the CB's read pointer) as a 32x32 float32 matrix."""
    ctx = current_run().kernel_context()
    cb = circular_buffer(cb_id)
    if not 0 <= itile < cb.pages_filled:
        raise KernelError(
            f"tile {itile} of {cb.name} is not available: {cb.pages_filled} pages are waited at the front"
        )
    tile = cb.tile or TILE_32x32
    if (tile.height, tile.width) != (32, 32):
        raise KernelError(f"the compute API here handles 32x32 tiles; {cb.name} has {tile}")
    addr = cb.rd_ptr + itile * cb.page_size
    return decode_block(ctx.core.l1[addr : addr + cb.page_size], cb.data_format, tile, 1, 1)


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


def _init(*_args, **_kwargs) -> None:
    """An unpack/math/pack (re)configuration: resets the unpacker's transpose flag."""
    api_state(_ctx()).pop("unpack_transpose", None)


def sfpu_init(*_args, **_kwargs) -> None:
    """An SFPU init (math thread only): every SFPU op's ``<op>_tile_init`` is this one."""
    _ctx()


def _check_cbs(*cb_ids: int) -> None:
    for cb_id in cb_ids:
        circular_buffer(cb_id)


compute_kernel_hw_startup = _init
binary_op_init_common = _init
unary_op_init_common = _init
init_sfpu = _init
copy_tile_init = _init
add_tiles_init = _init
sub_tiles_init = _init
mul_tiles_init = _init
reduce_uninit = _init


def copy_tile_to_dst_init_short(cb_id: int, transpose: int = 0) -> None:
    """Datacopy init; with ``transpose`` the unpacker transposes every tile it copies (WH)."""
    _init()
    _check_cbs(cb_id)
    if transpose:
        api_state(_ctx())["unpack_transpose"] = True


def mm_init(in0_cb: int, in1_cb: int, out_cb: int = 16, transpose: int = 0) -> None:
    """Full matmul init (tile form: one output tile per matmul_tiles)."""
    _init()
    api_state(_ctx()).pop("matmul_block", None)


def mm_init_short(in0_cb: int, in1_cb: int, transpose: int = 0) -> None:
    mm_init(in0_cb, in1_cb, 16, transpose)


def matmul_init(in0_cb: int, in1_cb: int, transpose: int = 0) -> None:
    mm_init(in0_cb, in1_cb, 16, transpose)


def matmul_block_init(
    in0_cb: int, in1_cb: int, transpose: int = 0, ct_dim: int = 1, rt_dim: int = 1, kt_dim: int = 1
) -> None:
    """Configure matmul_block for ``rt_dim x ct_dim`` output tiles (the hardware MOP)."""
    _init()
    _check_cbs(in0_cb, in1_cb)
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


# -- format switches -------------------------------------------------------------------------
#
# On hardware the unpacker / packer are configured for one data format at a time and
# reconfig_data_format / pack_reconfig_data_format switch them between CBs of different
# formats.  Here every unpack decodes, and every pack encodes, with the format of the CB
# it touches, so the switches only check that the CBs exist.


def reconfig_data_format(*cb_ids: int) -> None:
    """``(srca_new, srcb_new)`` or ``(srca_old, srca_new, srcb_old, srcb_new)``."""
    _ctx()
    _check_cbs(*cb_ids)


def reconfig_data_format_srca(*cb_ids: int) -> None:
    """``(srca_new)`` or ``(srca_old, srca_new)``."""
    _ctx()
    _check_cbs(*cb_ids)


reconfig_data_format_srcb = reconfig_data_format_srca


def pack_reconfig_data_format(*cb_ids: int) -> None:
    """``(ocb_new)`` or ``(ocb_old, ocb_new)``."""
    _ctx()
    _check_cbs(*cb_ids)


def pack_reconfig_l1_acc(l1_acc_en: int) -> None:
    """Enable (1) or disable (0) L1 accumulation: while on, every pack does ``CB += DST``."""
    ctx = _ctx()
    if l1_acc_en not in (0, 1):
        raise KernelError(f"pack_reconfig_l1_acc({l1_acc_en}): the flag must be 0 or 1")
    api_state(ctx)["l1_acc"] = bool(l1_acc_en)


# -- unpack / FPU ------------------------------------------------------------------------------


def copy_tile(cb_id: int, itile: int, idst: int) -> None:
    """``DST[idst] = CB[itile]`` converted to the DST format."""
    ctx = _ctx()
    tile = _unpack(cb_id, itile)
    if ctx.api is not None and ctx.api.get("unpack_transpose"):
        tile = tile.T
    _write_dst(ctx, idst, tile)
    pipeline.tile_copy(_run(), _bytes(cb_id))


def _binary(
    op: str, icb0: int, icb1: int, itile0: int, itile1: int, idst: int, bcast: str | None = None
):
    ctx = _ctx()
    a = _unpack(icb0, itile0)
    b = _unpack(icb1, itile1)
    if bcast == "rows":  # B's first row broadcast down the tile
        b = np.broadcast_to(b[0:1, :], b.shape)
    elif bcast == "cols":  # B's first column broadcast across the tile
        b = np.broadcast_to(b[:, 0:1], b.shape)
    elif bcast == "scalar":
        b = np.full_like(b, b[0, 0])
    result = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](a, b)
    _write_dst(ctx, idst, result)
    pipeline.tile_binary(_run(), _bytes(icb0), _bytes(icb1), op == "mul")


def add_tiles(icb0: int, icb1: int, itile0: int, itile1: int, idst: int) -> None:
    _binary("add", icb0, icb1, itile0, itile1, idst)


def sub_tiles(icb0: int, icb1: int, itile0: int, itile1: int, idst: int) -> None:
    _binary("sub", icb0, icb1, itile0, itile1, idst)


def mul_tiles(icb0: int, icb1: int, itile0: int, itile1: int, idst: int) -> None:
    _binary("mul", icb0, icb1, itile0, itile1, idst)


def _bcast(op: str, kind: str):
    def fn(icb0: int, icb1: int, itile0: int, itile1: int, idst: int) -> None:
        _binary(op, icb0, icb1, itile0, itile1, idst, kind)

    fn.__name__ = f"{op}_tiles_bcast_{kind}"
    return fn


add_tiles_bcast_rows = _bcast("add", "rows")
add_tiles_bcast_cols = _bcast("add", "cols")
add_tiles_bcast_scalar = _bcast("add", "scalar")
sub_tiles_bcast_rows = _bcast("sub", "rows")
sub_tiles_bcast_cols = _bcast("sub", "cols")
sub_tiles_bcast_scalar = _bcast("sub", "scalar")
mul_tiles_bcast_rows = _bcast("mul", "rows")
mul_tiles_bcast_cols = _bcast("mul", "cols")
mul_tiles_bcast_scalar = _bcast("mul", "scalar")


def matmul_tiles(
    in0_cb: int, in1_cb: int, in0_tile: int, in1_tile: int, idst: int, transpose: int = 0
) -> None:
    """``DST[idst] += A[in0_tile] @ B[in1_tile]`` (B transposed if ``transpose``)."""
    ctx = _ctx()
    _check_dst(ctx, idst)
    a = _unpack(in0_cb, in0_tile)
    b = _unpack(in1_cb, in1_tile)
    if transpose:
        b = b.T
    dst = _dst(ctx)
    _write_dst(ctx, idst, dst[idst] + a @ b)
    pipeline.tile_matmul(_run(), _bytes(in0_cb), _bytes(in1_cb))


def matmul_block(
    in0_cb: int,
    in1_cb: int,
    in0_tile: int,
    in1_tile: int,
    idst: int,
    transpose: int,
    ct_dim: int,
    rt_dim: int,
    kt_dim: int,
) -> None:
    """``rt_dim x ct_dim`` output tiles: ``DST[idst + r*ct_dim + c] += A[in0_tile + r*kt_dim] @ B[in1_tile + c]``.

    A is a row-major block of ``rt_dim x kt_dim`` tiles in ``in0_cb`` (this call uses its
    column ``in0_tile``), B a row-major block whose rows hold at least ``ct_dim`` tiles in
    ``in1_cb`` (this call uses ``ct_dim`` consecutive tiles from ``in1_tile``); the caller
    steps ``in0_tile += 1`` and ``in1_tile += B's row width`` over the inner dimension
    (tt-llk ``_llk_unpack_AB_matmul_``).  Each B tile is transposed when ``transpose``.
    """
    ctx = _ctx()
    what = f"matmul_block(ct_dim={ct_dim}, rt_dim={rt_dim}, kt_dim={kt_dim})"
    if ct_dim < 1 or rt_dim < 1 or kt_dim < 1:
        raise KernelError(f"{what}: block dimensions must be at least 1")
    cap = _capacity(ctx)
    n = ct_dim * rt_dim
    if idst < 0 or idst + n > cap:
        raise KernelError(
            f"{what} writes DST tiles {idst}..{idst + n - 1}, beyond the {cap} DST tiles of one "
            f"acquire (fp32_dest_acc_en={ctx.compute.fp32_dest_acc_en}, "
            f"dst_full_sync_en={ctx.compute.dst_full_sync_en})"
        )
    configured = api_state(ctx).get("matmul_block")
    if configured is not None:
        c_transpose, c_ct, c_rt, _ = configured
        if (c_transpose, c_ct, c_rt) != (bool(transpose), ct_dim, rt_dim):
            raise KernelError(
                f"{what}, transpose={int(bool(transpose))}: the last matmul_block_init / "
                f"mm_block_init configured ct_dim={c_ct}, rt_dim={c_rt}, transpose={int(c_transpose)}; "
                "the hardware runs the configured block (re-init before changing it)"
            )
    dst = _dst(ctx)
    b_tiles = []
    for c in range(ct_dim):
        b = _unpack(in1_cb, in1_tile + c)
        b_tiles.append(b.T if transpose else b)
    for r in range(rt_dim):
        a = _unpack(in0_cb, in0_tile + r * kt_dim)
        for c in range(ct_dim):
            d = idst + r * ct_dim + c
            _write_dst(ctx, d, dst[d] + a @ b_tiles[c])
    pipeline.tile_matmul(_run(), rt_dim * _bytes(in0_cb), ct_dim * _bytes(in1_cb), n)


def binary_dest_reuse_tiles_init(
    in_cb: int,
    op: EltwiseBinaryType = EltwiseBinaryType.ELWADD,
    reuse: EltwiseBinaryReuseDestType = EltwiseBinaryReuseDestType.NONE,
) -> None:
    _init()
    _check_cbs(in_cb)


def binary_dest_reuse_tiles(
    in_cb: int,
    in_tile: int,
    idst: int,
    op: EltwiseBinaryType = EltwiseBinaryType.ELWADD,
    reuse: EltwiseBinaryReuseDestType = EltwiseBinaryReuseDestType.NONE,
) -> None:
    """A binary op with one operand from DST: ``DST[idst] = SrcA op SrcB``.

    ``DEST_TO_SRCA``: DST[idst] goes to SrcA and the CB tile to SrcB (``DST op CB``);
    ``DEST_TO_SRCB``: the CB tile is SrcA (``CB op DST``).  ELWADD, ELWSUB, ELWMUL.
    """
    ctx = _ctx()
    _check_dst(ctx, idst)
    reuse = EltwiseBinaryReuseDestType(reuse)
    op = EltwiseBinaryType(op)
    if reuse == EltwiseBinaryReuseDestType.NONE:
        raise KernelError(
            "binary_dest_reuse_tiles needs EltwiseBinaryReuseDestType::DEST_TO_SRCA or DEST_TO_SRCB "
            "(NONE reuses nothing: use add_tiles / sub_tiles / mul_tiles)"
        )
    fn = {
        EltwiseBinaryType.ELWADD: np.add,
        EltwiseBinaryType.ELWSUB: np.subtract,
        EltwiseBinaryType.ELWMUL: np.multiply,
    }.get(op)
    if fn is None:
        raise KernelError(
            f"binary_dest_reuse_tiles: {op.name} is not an FPU binary op (ELWADD, ELWSUB, ELWMUL)"
        )
    cb_tile = _unpack(in_cb, in_tile)
    dst_tile = _dst(ctx)[idst].copy()
    if reuse == EltwiseBinaryReuseDestType.DEST_TO_SRCA:
        result = fn(dst_tile, cb_tile)
    else:
        result = fn(cb_tile, dst_tile)
    _write_dst(ctx, idst, result)
    pipeline.tile_dest_reuse(_run(), _bytes(in_cb), op == EltwiseBinaryType.ELWMUL)


def transpose_wh_init(icb: int, ocb: int = 16) -> None:
    _init()
    _check_cbs(icb)


def transpose_wh_init_short(icb: int) -> None:
    transpose_wh_init(icb)


def transpose_wh_tile(icb: int, itile: int, idst: int) -> None:
    """``DST[idst] = CB[itile]`` transposed (rows become columns)."""
    ctx = _ctx()
    _write_dst(ctx, idst, _unpack(icb, itile).T)
    pipeline.tile_transpose(_run(), _bytes(icb))


def transpose_wh_dest_init_short(*_args) -> None:
    sfpu_init()


def transpose_wh_dest(idst: int) -> None:
    """Transpose DST[idst] in place."""
    ctx = _ctx()
    _check_dst(ctx, idst)
    _write_dst(ctx, idst, _dst(ctx)[idst].T.copy())
    pipeline.tile_sfpu(_run(), "transpose_dest")


def reduce_init(*_args, **_kwargs) -> None:
    _ctx()


def reduce_tile(
    icb: int,
    icb_scaler: int,
    itile: int,
    itile_scaler: int,
    idst: int,
    pool_type: PoolType = PoolType.SUM,
    reduce_dim: ReduceDim = ReduceDim.REDUCE_ROW,
) -> None:
    """Reduce a tile into DST (accumulating), scaled by the scaler tile's [0, 0] value.

    REDUCE_ROW leaves each row's result in column 0, REDUCE_COL in row 0,
    REDUCE_SCALAR at [0, 0]; other DST values are kept (accumulation).
    """
    ctx = _ctx()
    _check_dst(ctx, idst)
    a = _unpack(icb, itile)
    scale = float(_unpack(icb_scaler, itile_scaler)[0, 0])
    dst = _dst(ctx)[idst].copy()
    pool = PoolType(pool_type)
    combine: np.ufunc
    if pool == PoolType.MAX:
        red = {
            ReduceDim.REDUCE_ROW: a.max(axis=1),
            ReduceDim.REDUCE_COL: a.max(axis=0),
            ReduceDim.REDUCE_SCALAR: a.max(),
        }[ReduceDim(reduce_dim)]
        red = red * scale
        combine = np.maximum
    else:
        red = {
            ReduceDim.REDUCE_ROW: a.sum(axis=1),
            ReduceDim.REDUCE_COL: a.sum(axis=0),
            ReduceDim.REDUCE_SCALAR: a.sum(),
        }[ReduceDim(reduce_dim)]
        red = red * scale
        combine = np.add
    dim = ReduceDim(reduce_dim)
    if dim == ReduceDim.REDUCE_ROW:
        dst[:, 0] = combine(dst[:, 0], red)
    elif dim == ReduceDim.REDUCE_COL:
        dst[0, :] = combine(dst[0, :], red)
    else:
        dst[0, 0] = combine(dst[0, 0], red)
    _write_dst(ctx, idst, dst)
    pipeline.tile_reduce(_run(), _bytes(icb), _bytes(icb_scaler), pool == PoolType.MAX)


# -- pack -------------------------------------------------------------------------------------


def _slot_addr(cb, slot: int, what: str) -> int:
    """L1 address of tile slot ``slot`` after the CB's write pointer."""
    if not 0 <= slot < cb.num_pages:
        raise KernelError(
            f"{what} into {cb.name}: tile slot {slot} is beyond its {cb.num_pages} pages"
        )
    addr = cb.wr_ptr + slot * cb.page_size
    if addr + cb.page_size > cb.fifo_limit:
        addr -= cb.num_pages * cb.page_size
    return addr


def _pack_values(ctx, cb, slot: int, values: np.ndarray, what: str) -> None:
    """Pack one 32x32 tile of values into ``cb`` at ``slot``, in the CB's format.

    With L1 accumulation on (``pack_reconfig_l1_acc(1)``) the packer adds the tile
    already in L1 (decoded from the CB's format) and stores the sum.
    """
    addr = _slot_addr(cb, slot, what)
    tile = cb.tile or TILE_32x32
    l1 = ctx.core.l1
    if ctx.api is not None and ctx.api.get("l1_acc"):
        values = decode_block(l1[addr : addr + cb.page_size], cb.data_format, tile, 1, 1) + values
    l1[addr : addr + cb.page_size] = encode_block(values, cb.data_format, tile)


def pack_tile(idst: int, ocb: int, out_idx: int = 0, out_of_order: bool = False) -> None:
    """Pack DST[idst] into the output CB, converted to its format.

    Sequential by default: each call writes the next tile slot after the reservation
    point (``out_idx`` ignored); the counter resets at ``cb_push_back``.  With L1
    accumulation on, the slot receives ``CB + DST``.
    """
    ctx = _ctx()
    _check_dst(ctx, idst)
    cb = circular_buffer(ocb)
    slot = out_idx if out_of_order else cb.pack_counter
    _pack_values(ctx, cb, slot, _dst(ctx)[idst], "pack_tile")
    if not out_of_order:
        cb.pack_counter += 1
    l1_acc = bool(ctx.api is not None and ctx.api.get("l1_acc"))
    pipeline.tile_pack(_run(), cb.page_size, l1_acc)


def pack_tile_block(ifrom_dst: int, ocb: int, ntiles: int) -> None:
    """Pack DST tiles ``ifrom_dst .. ifrom_dst + ntiles - 1`` into the next ``ntiles`` slots."""
    ctx = _ctx()
    if ntiles < 1:
        raise KernelError(f"pack_tile_block: ntiles must be at least 1, got {ntiles}")
    _check_dst(ctx, ifrom_dst)
    _check_dst(ctx, ifrom_dst + ntiles - 1)
    for i in range(ntiles):
        pack_tile(ifrom_dst + i, ocb)


# -- tilize / untilize -----------------------------------------------------------------------
#
# A row-major block in a CB is 32 rows of ``n * 32`` values, stored row after row from the
# CB's read (or write) pointer; it fills ``n`` tile-sized pages of a 16/32-bit format.
# tilize_block reads such a block and packs ``n`` tiles; untilize_block and
# pack_untilize_block do the reverse.  Values pass through DST (rounded to its format);
# integer formats are copied exactly.


def _tile32(cb, what: str) -> None:
    tile = cb.tile or TILE_32x32
    if (tile.height, tile.width) != (32, 32):
        raise KernelError(f"{what}: the compute API here handles 32x32 tiles; {cb.name} has {tile}")


def _row_major_format(cb, what: str):
    fmt = as_data_format(cb.data_format)
    if is_block_float(fmt):
        raise KernelError(
            f"{what}: {cb.name} holds {format_name(fmt)}, a block-float format, which has no "
            "row-major form (a row-major block needs a 16- or 32-bit format)"
        )
    return fmt, element_size(fmt)


tilize_init = _init
tilize_init_short = _init
tilize_uninit = _init
untilize_init = _init
untilize_init_short = _init
untilize_uninit = _init
pack_untilize_uninit = _init
pack_untilize_dest_init = _init


def tilize_init_short_with_dt(old_icb: int, new_icb: int, block: int, ocb: int) -> None:
    _init()
    _check_cbs(old_icb, new_icb, ocb)


def tilize_uninit_with_dt(old_icb: int, new_icb: int, ocb: int) -> None:
    _init()
    _check_cbs(old_icb, new_icb, ocb)


def pack_untilize_init(
    icb: int, ocb: int, block_ct_dim: int = 8, full_ct_dim: int | None = None
) -> None:
    _init()
    _check_cbs(icb, ocb)


def tilize_block(
    icb: int, block: int, ocb: int, input_tile_index: int = 0, output_tile_index: int = 0
) -> None:
    """Tilize a row-major block of 32 rows x ``block * 32`` values at the front of ``icb``.

    Output tile ``t`` (packed out of order into slot ``output_tile_index + t`` of the
    reservation) holds columns ``32 * (input_tile_index + t)`` .. ``+ 31`` of the block,
    whose rows are ``block * 32`` values apart (tt-llk ``llk_unpack_tilize``).
    """
    ctx = _ctx()
    src, dst = circular_buffer(icb), circular_buffer(ocb)
    what = f"tilize_block({src.name}, block={block}, {dst.name})"
    if block < 1 or input_tile_index < 0:
        raise KernelError(f"{what}: block must be at least 1 and input_tile_index non-negative")
    _tile32(src, what)
    _tile32(dst, what)
    fmt, esize = _row_major_format(src, what)
    width = block * 32
    count = 31 * width + (input_tile_index + block) * 32
    needed = count * esize
    available = src.pages_filled * src.page_size
    if needed > available:
        pages = -(-needed // src.page_size)
        raise KernelError(
            f"{what}: the row-major block is 32 rows of {width} {format_name(fmt)} values "
            f"({needed} bytes, {pages} pages) but only {src.pages_filled} pages ({available} bytes) "
            f"are waited at the front of {src.name}: a partial block"
        )
    if src.rd_ptr + needed > src.fifo_limit:
        raise KernelError(f"{what}: the row-major block wraps past the end of {src.name}'s FIFO")
    values = decode_elements(ctx.core.l1[src.rd_ptr : src.rd_ptr + needed], fmt, count)
    exact = is_integer(fmt)
    if not exact:
        values = values.astype(np.float32, copy=False)
    index = np.arange(32)[:, None] * width + np.arange(32)[None, :]
    for t in range(block):
        tile = values[index + 32 * (input_tile_index + t)]
        _pack_values(
            ctx, dst, output_tile_index + t, tile if exact else _round_dst(ctx, tile), what
        )
    pipeline.tile_through(_run(), block * src.page_size, block * dst.page_size, block)


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
        raise KernelError(
            f"{what}: the row-major block ({rows} rows of {row_width} {format_name(fmt)} values, "
            f"{region} bytes) does not fit in {cb.name} from tile slot {slot} "
            f"({cb.num_pages} pages of {cb.page_size} bytes)"
        )
    block = np.concatenate([np.concatenate(row, axis=1) for row in tiles], axis=0)
    data = encode_elements(block if is_integer(fmt) else block.astype(np.float32, copy=False), fmt)
    cols = block.shape[1]
    view = ctx.core.l1[base : base + region].reshape(rows, row_width * esize)
    view[:, col_offset * esize : (col_offset + cols) * esize] = data.reshape(rows, cols * esize)


def _through_dst(ctx, cb, itile: int) -> np.ndarray:
    """Tile ``itile`` of ``cb`` as DST holds it (integer formats: unrounded)."""
    values = _unpack(cb.index, itile)
    return values if is_integer(cb.data_format) else _round_dst(ctx, values)


def _untilize_checks(ctx, block_ct_dim: int, full_ct_dim: int, what: str) -> None:
    cap = _capacity(ctx)
    if block_ct_dim < 1 or full_ct_dim < 1 or full_ct_dim % block_ct_dim:
        raise KernelError(f"{what}: full_ct_dim must be a positive multiple of block_ct_dim")
    if block_ct_dim > cap:
        raise KernelError(
            f"{what}: block_ct_dim={block_ct_dim} tiles do not fit the {cap} DST tiles of one acquire"
        )


def untilize_block(icb: int, full_ct_dim: int, ocb: int, block_ct_dim: int = 1) -> None:
    """Untilize ``full_ct_dim`` tiles at the front of ``icb`` into a row-major block.

    The block (32 rows of ``full_ct_dim * 32`` values) is packed at the next sequential
    slot of ``ocb``'s reservation and takes ``full_ct_dim`` slots.
    """
    ctx = _ctx()
    src, dst = circular_buffer(icb), circular_buffer(ocb)
    what = f"untilize_block({src.name}, full_ct_dim={full_ct_dim}, {dst.name})"
    _untilize_checks(ctx, block_ct_dim, full_ct_dim, what)
    if src.pages_filled < full_ct_dim:
        raise KernelError(
            f"{what}: needs {full_ct_dim} tiles at the front of {src.name}, only "
            f"{src.pages_filled} are waited: a partial block"
        )
    tiles = [[_through_dst(ctx, src, t) for t in range(full_ct_dim)]]
    _write_row_major(ctx, dst, dst.pack_counter, tiles, 0, full_ct_dim * 32, what)
    dst.pack_counter += full_ct_dim
    pipeline.tile_through(
        _run(), full_ct_dim * src.page_size, full_ct_dim * dst.page_size, full_ct_dim
    )


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
    what = f"pack_untilize_block<{block_ct_dim}, {full}>({src.name}, {block_rt_dim}, {dst.name})"
    _untilize_checks(ctx, block_ct_dim, full, what)
    if block_rt_dim < 1 or not 0 <= block_c_index < full // block_ct_dim:
        raise KernelError(
            f"{what}: block_rt_dim must be >= 1 and block_c_index < {full // block_ct_dim}"
        )
    n = block_rt_dim * block_ct_dim
    if src.pages_filled < n:
        raise KernelError(
            f"{what}: needs {n} tiles at the front of {src.name}, only {src.pages_filled} are "
            "waited: a partial block"
        )
    tiles = [
        [_through_dst(ctx, src, r * block_ct_dim + c) for c in range(block_ct_dim)]
        for r in range(block_rt_dim)
    ]
    _write_row_major(ctx, dst, 0, tiles, block_c_index * block_ct_dim * 32, full * 32, what)
    pipeline.tile_through(_run(), n * src.page_size, n * dst.page_size, n)


def pack_untilize_dest(
    ocb: int,
    block_rt_dim: int = 1,
    block_c_index: int = 0,
    block_ct_dim: int = 8,
    full_ct_dim: int | None = None,
) -> None:
    """Untilize DST tiles ``0 .. block_rt_dim * block_ct_dim - 1`` (row-major) into ``ocb``."""
    ctx = _ctx()
    full = full_ct_dim or block_ct_dim
    dst = circular_buffer(ocb)
    what = f"pack_untilize_dest<{block_ct_dim}, {full}>({dst.name}, {block_rt_dim})"
    _untilize_checks(ctx, block_ct_dim, full, what)
    if block_rt_dim < 1 or not 0 <= block_c_index < full // block_ct_dim:
        raise KernelError(
            f"{what}: block_rt_dim must be >= 1 and block_c_index < {full // block_ct_dim}"
        )
    n = block_rt_dim * block_ct_dim
    _check_dst(ctx, n - 1)
    regs = _dst(ctx)
    tiles = [[regs[r * block_ct_dim + c] for c in range(block_ct_dim)] for r in range(block_rt_dim)]
    _write_row_major(ctx, dst, 0, tiles, block_c_index * block_ct_dim * 32, full * 32, what)
    pipeline.tile_pack(_run(), n * dst.page_size)


def read_dst(idst: int) -> np.ndarray:
    """A copy of DST tile ``idst`` (debugging aid; tt-metal's dprint of DST)."""
    ctx = _ctx()
    _check_dst(ctx, idst)
    return _dst(ctx)[idst].copy()


# -- SFPU unary ops (in place on DST), bound explicitly from the op registry -----------


def _sfpu_apply(idst: int, compute, cost: str) -> None:
    """An SFPU function on DST[idst]; ``cost`` names it in the cost table (C++ name)."""
    ctx = _ctx()
    _check_dst(ctx, idst)
    with np.errstate(all="ignore"):
        result = np.asarray(compute(_dst(ctx)[idst]), dtype=np.float32)
    _write_dst(ctx, idst, result)
    pipeline.tile_sfpu(_run(), cost)


def _sfpu(op_name: str, cost: str):
    spec = get_op(op_name)

    def fn(idst: int, *args, **kwargs) -> None:
        _sfpu_apply(idst, spec.impl, cost)

    fn.__name__ = f"{op_name}_tile"
    return fn


SFPU_UNARY = {
    "exp_tile": "exp",
    "log_tile": "log",
    "sqrt_tile": "sqrt",
    "rsqrt_tile": "rsqrt",
    "recip_tile": "recip",
    "relu_tile": "relu",
    "gelu_tile": "gelu",
    "sigmoid_tile": "sigmoid",
    "tanh_tile": "tanh",
    "sin_tile": "sin",
    "cos_tile": "cos",
    "tan_tile": "tan",
    "abs_tile": "abs",
    "negative_tile": "neg",
    "square_tile": "square",
    "exp2_tile": "exp2",
    "expm1_tile": "expm1",
    "log1p_tile": "logp1",
    "floor_tile": "floor",
    "ceil_tile": "ceil",
    "sign_tile": "sign",
    "silu_tile": "silu",
    "asin_tile": "asin",
    "acos_tile": "acos",
    "atan_tile": "atan",
    "asinh_tile": "asinh",
    "acosh_tile": "acosh",
    "atanh_tile": "atanh",
    "hardsigmoid_tile": "hardsigmoid",
    "softsign_tile": "softsign",
    "signbit_tile": "signbit",
    "trunc_tile": "trunc",
    "frac_tile": "frac",
}
"""C++ SFPU function name -> op registry name (no parameters)."""

SFPU_UNARY_SPECIAL = {
    "erf_tile": lambda x: _erf(x),
    "erfc_tile": lambda x: 1.0 - _erf(x),
}
"""SFPU ops without a ``ttl.math`` registry entry (float64 reference, rounded to float32)."""

for _cpp, _op_name in SFPU_UNARY.items():
    globals()[_cpp] = _sfpu(_op_name, _cpp.removesuffix("_tile"))
    globals()[_cpp].__name__ = _cpp
    globals()[_cpp + "_init"] = sfpu_init


def _special(name: str, compute):
    def fn(idst: int, *args, **kwargs) -> None:
        _sfpu_apply(
            idst,
            lambda x: compute(x.astype(np.float64)).astype(np.float32),
            name.removesuffix("_tile"),
        )

    fn.__name__ = name
    return fn


for _cpp, _compute in SFPU_UNARY_SPECIAL.items():
    globals()[_cpp] = _special(_cpp, _compute)
    globals()[_cpp + "_init"] = sfpu_init


def _float_param(value) -> np.float32:
    """A float parameter: C++ passes the IEEE-754 bits as uint32 (``std::bit_cast<uint32_t>(x)``);
    Python kernels may pass the same bits (an int) or the float itself."""
    if isinstance(value, (float, np.floating)):
        return np.float32(value)
    return np.array([int(value) & 0xFFFFFFFF], dtype=np.uint32).view(np.float32)[0]


def _int_param(value) -> int:
    """A signed 32-bit integer parameter (C++ ``int32_t`` / ``uint32_t`` count)."""
    v = int(value) & 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def _op_impl(op_name: str):
    return get_op(op_name).impl


def _binop_scalar(kind: str):
    def compute(x: np.ndarray, p: np.float32) -> np.ndarray:
        if kind == "add":
            return x + p
        if kind == "sub":
            return x - p
        if kind == "rsub":
            return p - x
        return x * p  # mul; div too: the host passes 1/value (the SFPU multiplies)

    return compute


SFPU_UNARY_PARAM: dict[str, tuple[tuple[str, ...], object]] = {
    "leaky_relu_tile": (("f",), lambda x, s: _op_impl("leaky_relu")(x, s)),
    "elu_tile": (("f",), lambda x, s: _op_impl("elu")(x, s)),
    "prelu_tile": (("f",), lambda x, a: _op_impl("prelu")(x, a)),
    "relu_max_tile": (("f",), lambda x, t: _op_impl("relu_max")(x, t)),
    # tt-llk _relu_min_ (2025+): values below the threshold become the threshold.
    "relu_min_tile": (("f",), lambda x, t: np.maximum(x, t)),
    "rsub_tile": (("f",), lambda x, b: _op_impl("rsub")(x, b)),
    "power_tile": (("f",), lambda x, e: np.power(x, e)),
    "power_iterative_tile": (("i",), lambda x, n: _op_impl("pow")(x, n)),
    "round_tile": (("i",), lambda x, d: _op_impl("round")(x, d)),
    "softplus_tile": (("f", "f", "f"), lambda x, b, br, t: _op_impl("softplus")(x, b, br, t)),
    "add_unary_tile": (("f",), _binop_scalar("add")),
    "sub_unary_tile": (("f",), _binop_scalar("sub")),
    "mul_unary_tile": (("f",), _binop_scalar("mul")),
    "div_unary_tile": (("f",), _binop_scalar("div")),
    "rsub_unary_tile": (("f",), _binop_scalar("rsub")),
    # tt-metal's SFPU forms: hardtanh / clamp (min, max); threshold keeps x > t, else value
    # (torch / ttnn semantics); selu (scale, alpha); celu (alpha, 1 / alpha).
    "hardtanh_tile": (("f", "f"), lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi)),
    "clamp_tile": (("f", "f"), lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi)),
    "threshold_tile": (("f", "f"), lambda x, t, v: np.where(x > t, x, v)),
    "selu_tile": (("f", "f"), lambda x, scale, alpha: _op_impl("selu")(x, scale, alpha)),
    "celu_tile": (("f", "f"), lambda x, alpha, recip: _op_impl("celu")(x, alpha, recip)),
}
"""C++ SFPU functions with parameters: name -> (parameter kinds, compute(x, *params)).

Kinds: ``f`` a float passed as its IEEE-754 bits (or a Python float), ``i`` an int32."""


def _sfpu_param(name: str, kinds: tuple[str, ...], compute):
    def fn(idst: int, *params) -> None:
        if len(params) != len(kinds):
            raise KernelError(
                f"{name} takes {len(kinds)} parameter(s) after idst, got {len(params)}"
            )
        values = [_float_param(p) if k == "f" else _int_param(p) for k, p in zip(kinds, params)]
        _sfpu_apply(idst, lambda x: compute(x, *values), name.removesuffix("_tile"))

    fn.__name__ = name
    return fn


for _cpp, (_kinds, _param_compute) in SFPU_UNARY_PARAM.items():
    globals()[_cpp] = _sfpu_param(_cpp, _kinds, _param_compute)
    globals()[_cpp + "_init"] = sfpu_init

binop_with_scalar_tile_init = sfpu_init
rounding_op_tile_init = sfpu_init

__all__ += [
    name for c in (*SFPU_UNARY, *SFPU_UNARY_SPECIAL, *SFPU_UNARY_PARAM) for name in (c, c + "_init")
]
__all__ += ["binop_with_scalar_tile_init", "rounding_op_tile_init"]


# -- fill, unary broadcast and SFPU binary ops (api/compute/eltwise_unary/fill.h, bcast.h,
# eltwise_binary_sfpu.h, binary_max_min.h): the native runtime's twrt_fill_tile,
# twrt_unary_bcast and twrt_sfpu_binary, in numpy ---------------------------------------------


class BroadcastType(IntEnum):
    NONE = 0
    COL = 1
    ROW = 2
    SCALAR = 3


def fill_tile_init() -> None:
    sfpu_init()


def fill_tile(idst: int, value: float) -> None:
    """Every element of DST[idst] = ``value`` (a float32)."""
    ctx = _ctx()
    _write_dst(ctx, idst, np.full((32, 32), np.float32(value), dtype=np.float32))
    pipeline.tile_sfpu(_run(), "fill")


def fill_tile_bitcast(idst: int, bits: int) -> None:
    """fill_tile with the value given as its IEEE-754 bits."""
    fill_tile(idst, float(_float_param(bits)))


def _bcast_init_short(icb0: int, icb1: int) -> None:
    _init()
    _check_cbs(icb0, icb1)


add_bcast_rows_init_short = _bcast_init_short
add_bcast_cols_init_short = _bcast_init_short
add_bcast_scalar_init_short = _bcast_init_short
sub_bcast_rows_init_short = _bcast_init_short
sub_bcast_cols_init_short = _bcast_init_short
sub_bcast_scalar_init_short = _bcast_init_short
mul_bcast_rows_init_short = _bcast_init_short
mul_bcast_cols_init_short = _bcast_init_short
mul_bcast_scalar_init_short = _bcast_init_short


def unary_bcast_init(icb: int, ocb: int, bcast_type: BroadcastType = BroadcastType.ROW) -> None:
    _bcast_init_short(icb, ocb)


def unary_bcast(icb: int, itile: int, idst: int, bcast_type: BroadcastType) -> None:
    """DST[idst] = tile ``itile`` of ``icb`` broadcast: ROW row 0 down the tile, COL column 0
    across, SCALAR element [0, 0] everywhere (C++: ``unary_bcast<BroadcastType::ROW>``)."""
    ctx = _ctx()
    t = _unpack(icb, itile)
    kind = BroadcastType(bcast_type)
    if kind == BroadcastType.NONE:
        raise KernelError("unary_bcast needs BroadcastType ROW, COL or SCALAR")
    pick = {
        BroadcastType.ROW: t[0:1, :],
        BroadcastType.COL: t[:, 0:1],
        BroadcastType.SCALAR: t[0:1, 0:1],
    }[kind]
    _write_dst(ctx, idst, np.broadcast_to(pick, (32, 32)))
    pipeline.tile_copy(_run(), _bytes(icb))


def _sfpu_binary(name: str, fn):
    def op(idst0: int, idst1: int, odst: int) -> None:
        ctx = _ctx()
        for i in (idst0, idst1, odst):
            _check_dst(ctx, i)
        dst = _dst(ctx)
        with np.errstate(all="ignore"):
            _write_dst(ctx, odst, fn(dst[idst0], dst[idst1]))
        pipeline.tile_sfpu(_run(), "binary")

    op.__name__ = name
    return op


add_binary_tile = _sfpu_binary("add_binary_tile", np.add)
sub_binary_tile = _sfpu_binary("sub_binary_tile", np.subtract)
mul_binary_tile = _sfpu_binary("mul_binary_tile", np.multiply)
div_binary_tile = _sfpu_binary("div_binary_tile", np.divide)
binary_max_tile = _sfpu_binary("binary_max_tile", np.maximum)
binary_min_tile = _sfpu_binary("binary_min_tile", np.minimum)
add_binary_tile_init = sub_binary_tile_init = mul_binary_tile_init = sfpu_init
div_binary_tile_init = binary_max_tile_init = binary_min_tile_init = sfpu_init
SFPU_BINARY_TILE = (
    "add_binary_tile",
    "sub_binary_tile",
    "mul_binary_tile",
    "div_binary_tile",
    "binary_max_tile",
    "binary_min_tile",
)
"""SFPU binary ops on two DST tiles: odst = op(DST[idst0], DST[idst1]) in float32."""

__all__ += [
    "BroadcastType",
    "fill_tile_init",
    "fill_tile",
    "fill_tile_bitcast",
    "unary_bcast_init",
    "unary_bcast",
    "SFPU_BINARY_TILE",
    "add_bcast_rows_init_short",
    "add_bcast_cols_init_short",
    "add_bcast_scalar_init_short",
    "sub_bcast_rows_init_short",
    "sub_bcast_cols_init_short",
    "sub_bcast_scalar_init_short",
    "mul_bcast_rows_init_short",
    "mul_bcast_cols_init_short",
    "mul_bcast_scalar_init_short",
    "add_binary_tile",
    "add_binary_tile_init",
    "sub_binary_tile",
    "sub_binary_tile_init",
    "mul_binary_tile",
    "mul_binary_tile_init",
    "div_binary_tile",
    "div_binary_tile_init",
    "binary_max_tile",
    "binary_max_tile_init",
    "binary_min_tile",
    "binary_min_tile_init",
]
