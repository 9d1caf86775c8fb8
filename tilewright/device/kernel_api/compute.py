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

from tilewright.device import costs
from tilewright.device.engine import ACTIVE
from tilewright.device.formats import TILE_32x32, decode_block, encode_block, float32_to_bf16_bits
from tilewright.device.kernel_api.dataflow import circular_buffer
from tilewright.device.ops import get_op
from tilewright.errors import KernelError

__all__ = [
    "PoolType",
    "ReduceDim",
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
    "matmul_init",
    "matmul_tiles",
    "pack_tile",
    "reduce_init",
    "reduce_tile",
    "reduce_uninit",
    "read_dst",
    "SFPU_UNARY",
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


def _ctx():
    run = ACTIVE.run
    if run is None:
        raise KernelError("the compute API can only be called from inside a running kernel")
    ctx = run.context
    if ctx.compute is None:
        raise KernelError(
            f"kernel {ctx.kernel.name!r} is a data-movement kernel; the compute API runs on compute kernels"
        )
    return ctx


def _tick(cycles: int) -> None:
    run = ACTIVE.run
    run.clock += cycles
    run.stats_ops += 1


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
    ctx = ACTIVE.run.context
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


def tile_regs_commit() -> None:
    _ctx()


def tile_regs_wait() -> None:
    _ctx()


def tile_regs_release() -> None:
    ctx = _ctx()
    _dst(ctx)[:] = 0.0


acquire_dst = tile_regs_acquire
release_dst = tile_regs_release


def _init(*_args, **_kwargs) -> None:
    _ctx()


compute_kernel_hw_startup = _init
binary_op_init_common = _init
unary_op_init_common = _init
init_sfpu = _init
copy_tile_init = _init
copy_tile_to_dst_init_short = _init
add_tiles_init = _init
sub_tiles_init = _init
mul_tiles_init = _init
mm_init = _init
matmul_init = _init
reduce_uninit = _init


# -- unpack / FPU ------------------------------------------------------------------------------


def copy_tile(cb_id: int, itile: int, idst: int) -> None:
    """``DST[idst] = CB[itile]`` converted to the DST format."""
    ctx = _ctx()
    _write_dst(ctx, idst, _unpack(cb_id, itile))
    _tick(costs.TILE_COPY)


def _binary(op: str, icb0: int, icb1: int, itile0: int, itile1: int, idst: int, bcast: str | None = None):
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
    _tick(costs.TILE_ELTWISE)


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


def matmul_tiles(in0_cb: int, in1_cb: int, in0_tile: int, in1_tile: int, idst: int, transpose: int = 0) -> None:
    """``DST[idst] += A[in0_tile] @ B[in1_tile]`` (B transposed if ``transpose``)."""
    ctx = _ctx()
    _check_dst(ctx, idst)
    a = _unpack(in0_cb, in0_tile)
    b = _unpack(in1_cb, in1_tile)
    if transpose:
        b = b.T
    dst = _dst(ctx)
    _write_dst(ctx, idst, dst[idst] + a @ b)
    _tick(costs.TILE_MATMUL)


def reduce_init(*_args, **_kwargs) -> None:
    _ctx()


def reduce_tile(icb: int, icb_scaler: int, itile: int, itile_scaler: int, idst: int,
                pool_type: PoolType = PoolType.SUM, reduce_dim: ReduceDim = ReduceDim.REDUCE_ROW) -> None:
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
    if pool == PoolType.MAX:
        red = {ReduceDim.REDUCE_ROW: a.max(axis=1), ReduceDim.REDUCE_COL: a.max(axis=0),
               ReduceDim.REDUCE_SCALAR: a.max()}[ReduceDim(reduce_dim)]
        red = red * scale
        combine = np.maximum
    else:
        red = {ReduceDim.REDUCE_ROW: a.sum(axis=1), ReduceDim.REDUCE_COL: a.sum(axis=0),
               ReduceDim.REDUCE_SCALAR: a.sum()}[ReduceDim(reduce_dim)]
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
    _tick(costs.TILE_REDUCE)


# -- pack -------------------------------------------------------------------------------------


def pack_tile(idst: int, ocb: int, out_idx: int = 0, out_of_order: bool = False) -> None:
    """Pack DST[idst] into the output CB, converted to its format.

    Sequential by default: each call writes the next tile slot after the reservation
    point (``out_idx`` ignored); the counter resets at ``cb_push_back``.
    """
    ctx = _ctx()
    _check_dst(ctx, idst)
    cb = circular_buffer(ocb)
    slot = out_idx if out_of_order else cb.pack_counter
    if slot >= cb.num_pages:
        raise KernelError(f"pack_tile into {cb.name}: tile slot {slot} is beyond its {cb.num_pages} pages")
    addr = cb.wr_ptr + slot * cb.page_size
    if addr + cb.page_size > cb.fifo_limit:
        addr -= cb.num_pages * cb.page_size
    data = encode_block(_dst(ctx)[idst], cb.data_format, cb.tile or TILE_32x32)
    ctx.core.l1[addr : addr + cb.page_size] = data
    if not out_of_order:
        cb.pack_counter += 1
    _tick(costs.TILE_COPY)


def read_dst(idst: int) -> np.ndarray:
    """A copy of DST tile ``idst`` (debugging aid; tt-metal's dprint of DST)."""
    ctx = _ctx()
    _check_dst(ctx, idst)
    return _dst(ctx)[idst].copy()


# -- SFPU unary ops (in place on DST), bound explicitly from the op registry -----------


def _sfpu(op_name: str):
    spec = get_op(op_name)

    def fn(idst: int, *args, **kwargs) -> None:
        ctx = _ctx()
        _check_dst(ctx, idst)
        _write_dst(ctx, idst, spec.impl(_dst(ctx)[idst]))
        _tick(costs.TILE_SFPU)

    fn.__name__ = f"{op_name}_tile"
    return fn


exp_tile = _sfpu("exp")
exp_tile_init = _init
log_tile = _sfpu("log")
log_tile_init = _init
sqrt_tile = _sfpu("sqrt")
sqrt_tile_init = _init
rsqrt_tile = _sfpu("rsqrt")
rsqrt_tile_init = _init
recip_tile = _sfpu("recip")
recip_tile_init = _init
relu_tile = _sfpu("relu")
relu_tile_init = _init
gelu_tile = _sfpu("gelu")
gelu_tile_init = _init
sigmoid_tile = _sfpu("sigmoid")
sigmoid_tile_init = _init
tanh_tile = _sfpu("tanh")
tanh_tile_init = _init
sin_tile = _sfpu("sin")
sin_tile_init = _init
cos_tile = _sfpu("cos")
cos_tile_init = _init
tan_tile = _sfpu("tan")
tan_tile_init = _init
abs_tile = _sfpu("abs")
abs_tile_init = _init
negative_tile = _sfpu("neg")
negative_tile_init = _init
square_tile = _sfpu("square")
square_tile_init = _init
exp2_tile = _sfpu("exp2")
exp2_tile_init = _init
expm1_tile = _sfpu("expm1")
expm1_tile_init = _init
log1p_tile = _sfpu("logp1")
log1p_tile_init = _init
floor_tile = _sfpu("floor")
floor_tile_init = _init
ceil_tile = _sfpu("ceil")
ceil_tile_init = _init
sign_tile = _sfpu("sign")
sign_tile_init = _init
silu_tile = _sfpu("silu")
silu_tile_init = _init

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
}
"""C++ SFPU function name -> op registry name."""

__all__ += [name for c in SFPU_UNARY for name in (c, c + "_init")]
