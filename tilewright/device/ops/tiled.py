"""Block ops whose result depends on the tiling: reduce, broadcast, transpose, fill,
squeeze/unsqueeze, and matmul.

Inputs and outputs are float32 block values ``(..., R*th, C*tw)`` (see
``tilewright.device.ops``); ``tile=(th, tw)`` is the operands' tile shape, supplied by
the engine from the block's DFB (default 32x32; row-major blocks are 1x1 tiles).  All
work is whole-array numpy: tiles are exposed as axes by reshapes (``shapes.to_tiles``),
never visited in Python.  Shape rules come from ``shapes.py`` (one definition shared
with ``result_shape``).

Tile semantics (TT-Lang specification v0.20, Appendix B, "Reduction, broadcast and
transpose functions"; tt-lang simulator ``python/sim/math.py`` ``_reduce_impl`` and the
``ttl.block`` module's ``broadcast``):

* reduce, two steps: (1) tile level -- the tiles along every reduced dimension are
  combined elementwise (sum or max); (2) intra-tile, only when ``dims`` names one or
  both of the two innermost dims -- ``dims=[-1]`` reduces each tile's rows across its
  columns and leaves the result in **column 0**; ``dims=[-2]`` reduces each column
  and leaves it in **row 0**; both leave one scalar at ``[0, 0]``.  Every other
  element of a result tile is **0** (the hardware packs zeros there; the simulator
  does the same).  Batch dims are reduced at tile level only.  The spec's prose names
  the innermost axis "rows" (it says dims=[-1] reduces "to row 0"); with the usual
  naming that is column 0, which is what the simulator, the hardware (REDUCE_ROW) and
  ``examples/03_broadcast_reduce.py`` do.
* broadcast, two steps: (1) intra-tile, only for the innermost dims -- ``dims=[-1]``
  replicates column 0 of every tile over all its columns, ``dims=[-2]`` row 0 over all
  rows, both the ``[0, 0]`` element over the tile (padding is ignored); (2) tile level --
  the (now uniform) tiles are replicated to ``shape``.  Batch dims: tile level only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .elementwise import kernel
from .numerics import HIFI4, fpu_product
from .op_errors import OpShapeError
from .shapes import (
    block_shape_of,
    broadcast_result_shape,
    from_tiles,
    reduce_result_shape,
    squeeze_result_shape,
    to_tiles,
    unsqueeze_result_shape,
    value_shape,
)
from .spec import DEFAULT_TILE

__all__ = [
    "broadcast",
    "fill",
    "matmul",
    "reduce_max",
    "reduce_sum",
    "reduce_tile",
    "squeeze",
    "transpose",
    "unsqueeze",
]

F32 = np.float32


def _split(value: np.ndarray, tile: Sequence[int]) -> np.ndarray:
    """``(..., R*th, C*tw)`` -> ``(..., R, th, C, tw)`` (a view)."""
    th, tw = tile
    *batch, rows, cols = value.shape
    return value.reshape(*batch, rows // th, th, cols // tw, tw)


def _reduce(
    op_name: str,
    ufunc: np.ufunc,
    x: np.ndarray,
    dims: Sequence[int],
    shape: Sequence[int] | None,
    tile: Sequence[int],
) -> np.ndarray:
    in_shape = block_shape_of(x, tile, op_name)
    out_shape = reduce_result_shape(
        op_name, in_shape, dims, None if shape is None else tuple(shape)
    )
    ndim = len(in_shape)
    nbatch = ndim - 2
    reduced = {i for i, (a, b) in enumerate(zip(in_shape, out_shape)) if a != b}
    named = _dims_set(dims, ndim)
    inner_row, inner_col = ndim - 2 in named, ndim - 1 in named
    # split axes: batch 0..nbatch-1, R = nbatch, th = nbatch+1, C = nbatch+2, tw = nbatch+3
    grid_axis = {i: i for i in range(nbatch)} | {ndim - 2: nbatch, ndim - 1: nbatch + 2}
    axes = [grid_axis[i] for i in sorted(reduced)]  # step 1: tile level
    if inner_row:
        axes.append(nbatch + 1)  # step 2: rows of each tile -> row 0
    if inner_col:
        axes.append(nbatch + 3)  # step 2: columns of each tile -> column 0
    split = _split(x, tile)
    partial = ufunc.reduce(split, axis=tuple(axes), keepdims=True) if axes else split
    out = np.zeros(value_shape(out_shape, tile), dtype=F32)
    view = _split(out, tile)
    view[..., : 1 if inner_row else None, :, : 1 if inner_col else None] = partial
    return out


def _dims_set(dims: Sequence[int], ndim: int) -> set[int]:
    return {d % ndim for d in dims}


@kernel
def reduce_sum(
    x: np.ndarray,
    dims: Sequence[int],
    shape: Sequence[int] | None = None,
    *,
    tile: Sequence[int] = DEFAULT_TILE,
) -> np.ndarray:
    """``ttl.math.reduce_sum(x, dims, shape)``: tiled two-step sum (module docstring).

    ``shape=None`` is the deprecated form without ``shape`` (inferred).
    """
    return _reduce("math.reduce_sum", np.add, x, dims, shape, tile)


@kernel
def reduce_max(
    x: np.ndarray,
    dims: Sequence[int],
    shape: Sequence[int] | None = None,
    *,
    tile: Sequence[int] = DEFAULT_TILE,
) -> np.ndarray:
    """``ttl.math.reduce_max(x, dims, shape)``: tiled two-step maximum (module docstring)."""
    return _reduce("math.reduce_max", np.maximum, x, dims, shape, tile)


@kernel
def reduce_tile(
    acc: np.ndarray,
    x: np.ndarray,
    scale: np.floating,
    *,
    maximum: bool,
    dim: int,
    fidelity: int = HIFI4,
) -> np.ndarray:
    """One step of the compute API's ``reduce_tile``: reduce the tile ``x`` and combine the
    result, times ``scale``, into ``acc`` (the DST tile), which is returned updated.

    ``dim`` is tt-metal's ``ReduceDim``: 0 REDUCE_ROW (each row into column 0), 1
    REDUCE_COL (each column into row 0), 2 REDUCE_SCALAR (the tile into [0, 0]); other
    values of ``acc`` are kept.  ``maximum`` selects MAX pooling (else SUM).  The block
    ops :func:`reduce_sum` / :func:`reduce_max` are the whole-block form of the same
    reduction; the compiler lowers them to a sequence of these steps.

    SUM multiplies by the scaler on the FPU: ``x`` is SrcA, the scaler SrcB, sliced by
    ``fidelity`` (``numerics.fpu_product``: the reduction of each slice of ``x`` times the
    scaler's slice).  MAX runs no fidelity phases (tt-metal's LLK reduce:
    ``num_fidelity_phases`` "only works for AVG/SUM pool types"), so it is unsliced.
    """
    ufunc = np.maximum if maximum else np.add
    axis = 1 if dim == 0 else 0 if dim == 1 else None

    def scaled(s: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.asarray(ufunc.reduce(v, axis=axis) * s, dtype=F32)

    s = np.asarray(scale, dtype=F32)
    red = scaled(s, x) if maximum else fpu_product(scaled, s, x, fidelity)
    out = acc.copy()
    if dim == 0:
        out[:, 0] = ufunc(out[:, 0], red)
    elif dim == 1:
        out[0, :] = ufunc(out[0, :], red)
    else:
        out[0, 0] = ufunc(out[0, 0], red)
    return out


@kernel
def broadcast(
    x: np.ndarray,
    dims: Sequence[int],
    shape: Sequence[int],
    *,
    tile: Sequence[int] = DEFAULT_TILE,
) -> np.ndarray:
    """``ttl.block.broadcast(x, dims, shape)``: intra-tile then tile-level replication."""
    in_shape = block_shape_of(x, tile, "block.broadcast")
    out_shape = broadcast_result_shape("block.broadcast", in_shape, dims, tuple(shape))
    ndim = len(in_shape)
    bdims = _dims_set(dims, ndim)
    split = _split(x, tile)
    seed = split[..., : 1 if ndim - 2 in bdims else None, :, : 1 if ndim - 1 in bdims else None]
    out = np.empty(value_shape(out_shape, tile), dtype=F32)
    _split(out, tile)[...] = seed  # numpy broadcasting replicates rows/columns/tiles
    return out


@kernel
def transpose(x: np.ndarray, *, tile: Sequence[int] = DEFAULT_TILE) -> np.ndarray:
    """``ttl.block.transpose(x)``: a 2-D block ``(M, N)`` becomes ``(N, M)``.

    The tile grid is transposed and every tile is transposed, which is the plain
    transpose of the logical 2-D array.  Only square tiles keep their tile shape, so
    other tiles are rejected.
    """
    in_shape = block_shape_of(x, tile, "block.transpose")
    if len(in_shape) != 2:
        raise OpShapeError(
            f"block.transpose: supported only for two-dimensional blocks, got shape {in_shape}"
        )
    if tile[0] != tile[1]:
        raise OpShapeError(
            f"block.transpose: needs square tiles, got {tile[0]}x{tile[1]}",
            hint="transpose blocks of 32x32 (or 16x16) tiles",
        )
    return np.ascontiguousarray(x.T)


@kernel
def fill(
    value: float,
    shape: Sequence[int],
    layout: str = "tile",
    dtype: str = "bfloat16",
    tile: Sequence[int] = DEFAULT_TILE,
) -> np.ndarray:
    """``ttl.block.fill(value, shape, layout, dtype, tile)``: a block of ``shape`` filled
    with ``value``.

    ``shape`` counts tiles of ``tile`` (elements for ``layout="row_major"``, which is
    1x1 tiles).  ``dtype`` is the format the block is stored in; rounding to it happens
    on store, so the value here is exact float32.
    """
    shape = tuple(shape)
    if len(shape) < 2:
        raise OpShapeError(
            f"block.fill: shape {shape} has {len(shape)} dimension(s); tiled blocks need at least 2"
        )
    return np.full(value_shape(shape, (1, 1) if layout == "row_major" else tile), value, dtype=F32)


def _regrid(x: np.ndarray, tile: Sequence[int], out_shape: tuple[int, ...]) -> np.ndarray:
    tiles = to_tiles(x, tile)
    return from_tiles(tiles.reshape(*out_shape, *tiles.shape[-2:]))


@kernel
def squeeze(
    x: np.ndarray, dims: Sequence[int], *, tile: Sequence[int] = DEFAULT_TILE
) -> np.ndarray:
    """``ttl.block.squeeze(x, dims)``: drop tile-grid dims of extent 1 (tiles unchanged)."""
    in_shape = block_shape_of(x, tile, "block.squeeze")
    return _regrid(x, tile, squeeze_result_shape("block.squeeze", in_shape, dims))


@kernel
def unsqueeze(
    x: np.ndarray, dims: Sequence[int], *, tile: Sequence[int] = DEFAULT_TILE
) -> np.ndarray:
    """``ttl.block.unsqueeze(x, dims)``: insert tile-grid dims of extent 1 at ``dims``
    (positions in the resulting shape)."""
    in_shape = block_shape_of(x, tile, "block.unsqueeze")
    return _regrid(x, tile, unsqueeze_result_shape("block.unsqueeze", in_shape, dims))


@kernel
def matmul(a: np.ndarray, b: np.ndarray, *, transpose_rhs: bool = False) -> np.ndarray:
    """``a @ b`` / ``ttl.matmul(a, b, transpose_rhs=)`` on the logical 2-D arrays.

    ``[..., M, K] @ [..., K, N] -> [..., M, N]`` in elements (tile by tile this is the
    sum over k of tile products); leading batch dims broadcast as in numpy.  With
    ``transpose_rhs`` the right operand ``[..., N, K]`` is transposed first (into a
    contiguous array: the kernel API's ``matmul_tiles`` applies this op to tiles, bit for
    bit as the native runtime's sgemm on its transposed copy).
    """
    # The transposed rhs is made contiguous: BLAS sums a transposed operand in another order,
    # and the tile matmul of the native runtime (the same sgemm) multiplies contiguous tiles.
    rhs = np.ascontiguousarray(np.swapaxes(b, -1, -2)) if transpose_rhs else b
    if a.ndim < 2 or rhs.ndim < 2 or a.shape[-1] != rhs.shape[-2]:
        raise OpShapeError(
            f"operator.matmul: block values {a.shape} @ {rhs.shape}"
            + (" (rhs transposed)" if transpose_rhs else "")
            + " do not conform: the left operand's columns must equal the right operand's rows"
        )
    try:
        return np.matmul(a, rhs)
    except ValueError:
        raise OpShapeError(
            f"operator.matmul: batch dimensions of {a.shape} and {rhs.shape} do not broadcast"
        ) from None
