"""The unpack / FPU math of tt-metal's compute kernel API for Python kernels: copy_tile, the
binary ops on CB tiles (plain, broadcast, with a DST operand), matmul, reduce, transpose and
unary broadcast.

Each op is the op registry's (``device/ops``) applied to tiles with the kernel's
:class:`~tilewright.device.ops.numerics.MathConfig`: ``add_tiles`` is the block op ``add``
(``tile_ops.FPU_BINARY``), the broadcasts the block op ``broadcast`` of one tile,
``matmul_tiles`` adds the block op ``matmul`` into DST, ``reduce_tile`` is
``tiled.reduce_tile``, ``transpose_wh_tile`` the block op ``transpose``.  The native runtime
(``native/runtime/compute.cpp``) has the C++ implementation of each; the differential tests
(``tests/native/test_op_differential.py``, ``test_fidelity_matrix.py``) compare their bits.
The FPU multiplies (``mul_tiles`` and its broadcast / DST-reuse forms, ``matmul_tiles``,
``matmul_block``, ``reduce_tile`` SUM / AVG) run at the kernel's math fidelity
(``numerics.fpu_product``).
"""

from __future__ import annotations

import numpy as np

from tilewright.device import api_messages as M
from tilewright.device.kernel_api.compute import (
    BroadcastType,
    EltwiseBinaryReuseDestType,
    EltwiseBinaryType,
    PoolType,
    ReduceDim,
    _bytes,
    _check_dst,
    _check_dst_block,
    _ctx,
    _dst,
    _init_cbs,
    _run,
    _unpack,
    _write_dst,
    math_of,
    sfpu_init,
)
from tilewright.device.kernel_api.dataflow import api_state
from tilewright.device.ops import REGISTRY
from tilewright.device.ops.numerics import fpu_product
from tilewright.device.ops.tile_ops import FPU_BINARY
from tilewright.device.ops.tiled import reduce_tile as _reduce_tile
from tilewright.device.perf import pipeline

__all__ = [
    "copy_tile",
    "add_tiles",
    "sub_tiles",
    "mul_tiles",
    "add_tiles_bcast_rows",
    "add_tiles_bcast_cols",
    "add_tiles_bcast_scalar",
    "sub_tiles_bcast_rows",
    "sub_tiles_bcast_cols",
    "sub_tiles_bcast_scalar",
    "mul_tiles_bcast_rows",
    "mul_tiles_bcast_cols",
    "mul_tiles_bcast_scalar",
    "add_tiles_bcast",
    "sub_tiles_bcast",
    "mul_tiles_bcast",
    "unary_bcast",
    "matmul_tiles",
    "matmul_tile",
    "matmul_block",
    "binary_dest_reuse_tiles_init",
    "binary_dest_reuse_tiles",
    "transpose_wh_init",
    "transpose_wh_init_short",
    "transpose_wh_tile",
    "transpose_wh_dest_init_short",
    "transpose_wh_dest",
    "reduce_tile",
]


def copy_tile(icb: int, itile: int, idst: int) -> None:
    """``DST[idst] = CB[itile]`` converted to the DST format."""
    ctx = _ctx()
    tile = _unpack(icb, itile)
    if ctx.api is not None and ctx.api.get("unpack_transpose"):
        tile = tile.T
    _write_dst(ctx, idst, tile)
    pipeline.tile_copy(_run(), _bytes(icb))


_BROADCAST = REGISTRY["broadcast"]
_BCAST_DIMS = {
    BroadcastType.COL: [-1],  # column 0 across the tile
    BroadcastType.ROW: [-2],  # row 0 down the tile
    BroadcastType.SCALAR: [-2, -1],  # [0, 0] everywhere
}


def broadcast_tile(tile: np.ndarray, kind: BroadcastType, ctx) -> np.ndarray:
    """One tile broadcast as the FPU's B operand / ``unary_bcast`` (the block op)."""
    return _BROADCAST.apply(tile, dims=_BCAST_DIMS[kind], shape=(1, 1), config=math_of(ctx))


def _binary(
    op: str,
    icb0: int,
    icb1: int,
    itile0: int,
    itile1: int,
    idst: int,
    bcast: BroadcastType = BroadcastType.NONE,
) -> None:
    ctx = _ctx()
    a = _unpack(icb0, itile0)
    b = _unpack(icb1, itile1)
    if bcast != BroadcastType.NONE:
        b = broadcast_tile(b, bcast, ctx)
    _write_dst(ctx, idst, FPU_BINARY[op].apply(a, b, config=math_of(ctx)))
    pipeline.tile_binary(_run(), _bytes(icb0), _bytes(icb1), op == "mul")


def add_tiles(icb0: int, icb1: int, itile0: int, itile1: int, idst: int) -> None:
    _binary("add", icb0, icb1, itile0, itile1, idst)


def sub_tiles(icb0: int, icb1: int, itile0: int, itile1: int, idst: int) -> None:
    _binary("sub", icb0, icb1, itile0, itile1, idst)


def mul_tiles(icb0: int, icb1: int, itile0: int, itile1: int, idst: int) -> None:
    _binary("mul", icb0, icb1, itile0, itile1, idst)


def _bcast(op: str, kind: BroadcastType | None):
    if kind is None:  # <op>_tiles_bcast<BroadcastType>(...)

        def templated(
            icb0: int, icb1: int, itile0: int, itile1: int, idst: int, bcast: BroadcastType
        ) -> None:
            kind = _enum(BroadcastType, bcast, f"{op}_tiles_bcast")
            if kind == BroadcastType.NONE:
                raise M.ENUM_VALUE(
                    what=f"{op}_tiles_bcast",
                    value=int(kind),
                    type_name="broadcast (ROW, COL, SCALAR)",
                )
            _binary(op, icb0, icb1, itile0, itile1, idst, kind)

        templated.__name__ = templated.__qualname__ = f"{op}_tiles_bcast"
        return templated

    def fn(icb0: int, icb1: int, itile0: int, itile1: int, idst: int) -> None:
        _binary(op, icb0, icb1, itile0, itile1, idst, kind)

    fn.__name__ = fn.__qualname__ = f"{op}_tiles_bcast_{_BCAST_SUFFIX[kind]}"
    return fn


_BCAST_SUFFIX = {
    BroadcastType.ROW: "rows",
    BroadcastType.COL: "cols",
    BroadcastType.SCALAR: "scalar",
}


add_tiles_bcast_rows = _bcast("add", BroadcastType.ROW)
add_tiles_bcast_cols = _bcast("add", BroadcastType.COL)
add_tiles_bcast_scalar = _bcast("add", BroadcastType.SCALAR)
sub_tiles_bcast_rows = _bcast("sub", BroadcastType.ROW)
sub_tiles_bcast_cols = _bcast("sub", BroadcastType.COL)
sub_tiles_bcast_scalar = _bcast("sub", BroadcastType.SCALAR)
mul_tiles_bcast_rows = _bcast("mul", BroadcastType.ROW)
mul_tiles_bcast_cols = _bcast("mul", BroadcastType.COL)
mul_tiles_bcast_scalar = _bcast("mul", BroadcastType.SCALAR)
add_tiles_bcast = _bcast("add", None)
sub_tiles_bcast = _bcast("sub", None)
mul_tiles_bcast = _bcast("mul", None)


def _enum(cls, value, what: str):
    try:
        return cls(int(value))
    except ValueError:
        raise M.ENUM_VALUE(what=what, value=int(value), type_name=cls.__name__) from None


def unary_bcast(icb: int, itile: int, idst: int, bcast_type: BroadcastType) -> None:
    """DST[idst] = tile ``itile`` of ``icb`` broadcast: ROW row 0 down the tile, COL column 0
    across, SCALAR element [0, 0] everywhere (C++: ``unary_bcast<BroadcastType::ROW>``)."""
    ctx = _ctx()
    kind = _enum(BroadcastType, bcast_type, "unary_bcast")
    if kind == BroadcastType.NONE:
        raise M.ENUM_VALUE(what="unary_bcast", value=0, type_name="broadcast (ROW, COL, SCALAR)")
    t = _unpack(icb, itile)
    _write_dst(ctx, idst, broadcast_tile(t, kind, ctx))
    pipeline.tile_copy(_run(), _bytes(icb))


_MATMUL = REGISTRY["matmul"]
_ADD = REGISTRY["add"]


def _mac(ctx, d: int, a: np.ndarray, b: np.ndarray, transpose: bool) -> None:
    """``DST[d] += a @ b`` (b transposed first): the registry's matmul, then DST's add."""
    math = math_of(ctx)
    # MVMUL: Dst += SrcB @ SrcA with in0 (``a``) in SrcB and in1 (``b``) in SrcA; the math
    # fidelity slices both (numerics.fpu_product; transposing commutes with the slicing).
    product = fpu_product(
        lambda src_b, src_a: _MATMUL.apply(src_b, src_a, transpose_rhs=transpose, config=math),
        a,
        b,
        math.math_fidelity,
    )
    _write_dst(ctx, d, _ADD.apply(_dst(ctx)[d], product, config=math))


def matmul_tiles(
    in0_cb: int, in1_cb: int, in0_tile: int, in1_tile: int, idst: int, transpose: int = 0
) -> None:
    """``DST[idst] += A[in0_tile] @ B[in1_tile]`` (B transposed if ``transpose``)."""
    ctx = _ctx()
    _check_dst(ctx, idst)
    a = _unpack(in0_cb, in0_tile)
    b = _unpack(in1_cb, in1_tile)
    _mac(ctx, idst, a, b, bool(transpose))
    pipeline.tile_matmul(_run(), _bytes(in0_cb), _bytes(in1_cb))


matmul_tile = matmul_tiles
"""Newer spelling of matmul_tiles."""


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
    what = M.MATMUL_BLOCK_WHAT.text(ct=ct_dim, rt=rt_dim, kt=kt_dim)
    if ct_dim < 1 or rt_dim < 1 or kt_dim < 1:
        raise M.MATMUL_BLOCK_DIMS(what=what)
    n = ct_dim * rt_dim
    _check_dst_block(ctx, idst, n, what)
    configured = api_state(ctx).get("matmul_block")
    if configured is not None:
        c_transpose, c_ct, c_rt, _ = configured
        if (c_transpose, c_ct, c_rt) != (bool(transpose), ct_dim, rt_dim):
            raise M.MATMUL_BLOCK_CONFIG(
                what=what,
                transpose=int(bool(transpose)),
                ct=c_ct,
                rt=c_rt,
                c_transpose=int(c_transpose),
            )
    b_tiles = [_unpack(in1_cb, in1_tile + c) for c in range(ct_dim)]
    for r in range(rt_dim):
        a = _unpack(in0_cb, in0_tile + r * kt_dim)
        for c in range(ct_dim):
            _mac(ctx, idst + r * ct_dim + c, a, b_tiles[c], bool(transpose))
    pipeline.tile_matmul(_run(), rt_dim * _bytes(in0_cb), ct_dim * _bytes(in1_cb), n)


def binary_dest_reuse_tiles_init(
    in_cb_id: int,
    op: EltwiseBinaryType = EltwiseBinaryType.ELWADD,
    reuse: EltwiseBinaryReuseDestType = EltwiseBinaryReuseDestType.NONE,
) -> None:
    _init_cbs(in_cb_id)


_REUSE_OPS = {
    EltwiseBinaryType.ELWADD: "add",
    EltwiseBinaryType.ELWSUB: "sub",
    EltwiseBinaryType.ELWMUL: "mul",
}


def binary_dest_reuse_tiles(
    in_cb_id: int,
    in_tile_index: int,
    dst_tile_index: int,
    op: EltwiseBinaryType = EltwiseBinaryType.ELWADD,
    reuse: EltwiseBinaryReuseDestType = EltwiseBinaryReuseDestType.NONE,
) -> None:
    """A binary op with one operand from DST: ``DST[idst] = SrcA op SrcB``.

    ``DEST_TO_SRCA``: DST[idst] goes to SrcA and the CB tile to SrcB (``DST op CB``);
    ``DEST_TO_SRCB``: the CB tile is SrcA (``CB op DST``).  ELWADD, ELWSUB, ELWMUL.
    """
    ctx = _ctx()
    _check_dst(ctx, dst_tile_index)
    reuse = _enum(EltwiseBinaryReuseDestType, reuse, "binary_dest_reuse_tiles")
    if reuse == EltwiseBinaryReuseDestType.NONE:
        raise M.DEST_REUSE_NONE()
    name = _REUSE_OPS.get(_enum(EltwiseBinaryType, op, "binary_dest_reuse_tiles"))
    if name is None:
        raise M.DEST_REUSE_OP(op=EltwiseBinaryType(int(op)).name)
    cb_tile = _unpack(in_cb_id, in_tile_index)
    dst_tile = _dst(ctx)[dst_tile_index].copy()
    a, b = (
        (dst_tile, cb_tile)
        if reuse == EltwiseBinaryReuseDestType.DEST_TO_SRCA
        else (cb_tile, dst_tile)
    )
    _write_dst(ctx, dst_tile_index, FPU_BINARY[name].apply(a, b, config=math_of(ctx)))
    pipeline.tile_dest_reuse(_run(), _bytes(in_cb_id), name == "mul")


_TRANSPOSE = REGISTRY["transpose"]


def transpose_wh_init(icb: int, ocb: int = 16) -> None:
    _init_cbs(icb)


def transpose_wh_init_short(icb: int) -> None:
    _init_cbs(icb)


def transpose_wh_tile(icb: int, itile: int, idst: int) -> None:
    """``DST[idst] = CB[itile]`` transposed (rows become columns)."""
    ctx = _ctx()
    tile = _unpack(icb, itile)
    _write_dst(ctx, idst, _TRANSPOSE.apply(tile, config=math_of(ctx)))
    pipeline.tile_transpose(_run(), _bytes(icb))


def transpose_wh_dest_init_short(*_args) -> None:
    sfpu_init()


def transpose_wh_dest(idst: int) -> None:
    """Transpose DST[idst] in place."""
    ctx = _ctx()
    _check_dst(ctx, idst)
    _write_dst(ctx, idst, _TRANSPOSE.apply(_dst(ctx)[idst], config=math_of(ctx)))
    pipeline.tile_sfpu(_run(), "transpose_dest")


def reduce_tile(
    icb: int,
    icb_scaler: int,
    itile: int,
    itile_scaler: int,
    idst: int,
    pool_type: PoolType = PoolType.SUM,
    reduce_dim: ReduceDim = ReduceDim.REDUCE_ROW,
    enforce_fp32_accumulation: bool = False,
) -> None:
    """Reduce a tile into DST (accumulating), scaled by the scaler tile's [0, 0] value.

    REDUCE_ROW leaves each row's result in column 0, REDUCE_COL in row 0,
    REDUCE_SCALAR at [0, 0]; other DST values are kept (accumulation).
    """
    ctx = _ctx()
    _check_dst(ctx, idst)
    pool = _enum(PoolType, pool_type, "reduce_tile")
    dim = _enum(ReduceDim, reduce_dim, "reduce_tile")
    a = _unpack(icb, itile)
    scale = _unpack(icb_scaler, itile_scaler)[0, 0]
    result = _reduce_tile(
        _dst(ctx)[idst],
        a,
        scale,
        maximum=pool == PoolType.MAX,
        dim=int(dim),
        fidelity=math_of(ctx).math_fidelity,
    )
    _write_dst(ctx, idst, result)
    pipeline.tile_reduce(_run(), _bytes(icb), _bytes(icb_scaler), pool == PoolType.MAX)
