"""Block-shape rules of the op registry and the tile <-> block-value helpers.

A *block shape* counts tiles (or elements for row-major blocks, which behave as
1x1 tiles): ``(..., R, C)``.  A *block value* is the float32 array of the block's
logical elements, ``(..., R*th, C*tw)`` for tile ``(th, tw)``; tile ``(i, j)`` holds
rows ``[i*th, (i+1)*th)`` and columns ``[j*tw, (j+1)*tw)``; leading axes are batch
(tile-grid) dims.  This module owns

* ``block_shape_of`` / ``value_shape`` / ``to_tiles`` / ``from_tiles``: moving
  between the two views (vectorised reshapes, no loops);
* one shape rule per :class:`~.spec.OpKind` (the ``_RULES`` table), used both by
  :func:`result_shape` (the engine and the ``ttl`` layer call it when an expression
  is built) and by the tiled implementations, so the rule is written once.

Spec sources (TT-Lang specification v0.20, Appendix B): elementwise operands have one
shape (``Block.store``: "The shape of expr must exactly match the shape of the
destination block ... use ttl.block.broadcast for valid expansion"; the simulator's
``_apply_binary_op`` raises "Shape mismatch in binary op"); reduction/broadcast
"Input expression must have the same number of dimensions as shape"; transpose
"Supported only for two-dimensional blocks"; squeeze "Removed shape dimension must
be 1"; unsqueeze "Position values in dims refer to a position in the resulting shape".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .op_errors import OpParamError, OpShapeError
from .spec import DEFAULT_TILE, OpKind, OpSpec

__all__ = [
    "MIN_TILED_RANK",
    "Shape",
    "block_shape_of",
    "broadcast_result_shape",
    "from_tiles",
    "matmul_result_shape",
    "normalize_dims",
    "reduce_result_shape",
    "result_shape",
    "squeeze_result_shape",
    "to_tiles",
    "unsqueeze_result_shape",
    "value_shape",
]

Shape = tuple[int, ...]
MIN_TILED_RANK = 2
"""A tiled block has at least two dimensions (spec, "Dataflow buffer")."""

_BROADCAST_HINT = (
    "elementwise operands must have the same block shape; expand a block that has 1 in "
    "a dimension with ttl.block.broadcast(x, dims=[...], shape=...)"
)


# --- block value <-> tiles ------------------------------------------------------------------


def block_shape_of(value: np.ndarray, tile: Sequence[int] = DEFAULT_TILE, op: str = "") -> Shape:
    """Block shape in tiles of a block value (``(..., R*th, C*tw)`` -> ``(..., R, C)``).

    Raises:
        OpShapeError: the value has fewer than 2 axes or its last two extents are not
            multiples of the tile.
    """
    th, tw = tile
    if value.ndim < MIN_TILED_RANK:
        raise OpShapeError(
            f"{op or 'block op'}: a block value needs at least 2 axes, got {value.shape}"
        )
    rows, cols = value.shape[-2:]
    if rows % th or cols % tw:
        raise OpShapeError(
            f"{op or 'block op'}: block value of shape {value.shape} is not a whole number of "
            f"{th}x{tw} tiles"
        )
    return (*value.shape[:-2], rows // th, cols // tw)


def value_shape(block_shape: Sequence[int], tile: Sequence[int] = DEFAULT_TILE) -> Shape:
    """Shape of the block value of a block shape: ``(..., R, C)`` -> ``(..., R*th, C*tw)``."""
    th, tw = tile
    *batch, rows, cols = block_shape
    return (*batch, rows * th, cols * tw)


def to_tiles(value: np.ndarray, tile: Sequence[int] = DEFAULT_TILE) -> np.ndarray:
    """``(..., R*th, C*tw)`` -> ``(..., R, C, th, tw)``: tile ``(i, j)`` is ``[..., i, j]``.

    A view when possible (a reshape plus an axis swap).
    """
    th, tw = tile
    *batch, rows, cols = value.shape
    split = value.reshape(*batch, rows // th, th, cols // tw, tw)
    return np.swapaxes(split, -3, -2)


def from_tiles(tiles: np.ndarray) -> np.ndarray:
    """Inverse of :func:`to_tiles`: ``(..., R, C, th, tw)`` -> ``(..., R*th, C*tw)`` (a copy)."""
    *batch, rows, cols, th, tw = tiles.shape
    return np.swapaxes(tiles, -3, -2).reshape(*batch, rows * th, cols * tw)


# --- dims ------------------------------------------------------------------------------------


def normalize_dims(
    op: str, dims: Sequence[int], ndim: int, *, what: str = "dimension"
) -> tuple[int, ...]:
    """Sorted, de-duplicated non-negative dims (``-1`` is the innermost); spec indexing.

    Raises:
        OpShapeError: an empty list or an index outside ``[-ndim, ndim)``.
    """
    if len(dims) == 0:
        raise OpShapeError(f"{op}: dims must name at least one {what}, got []")
    for d in dims:
        if not -ndim <= d < ndim:
            raise OpShapeError(
                f"{op}: {what} {d} is out of range for a block with {ndim} dimensions "
                f"(valid: {-ndim}..{ndim - 1})"
            )
    return tuple(sorted({d % ndim for d in dims}))


def _check_rank(op: str, shape: Shape, what: str = "block") -> None:
    if len(shape) < MIN_TILED_RANK:
        raise OpShapeError(
            f"{op}: {what} shape {shape} has {len(shape)} dimension(s); tiled blocks need at least "
            f"{MIN_TILED_RANK}",
            hint="use ttl.block.unsqueeze to add a dimension of 1",
        )


# --- rules -----------------------------------------------------------------------------------


def reduce_result_shape(
    op: str, in_shape: Shape, dims: Sequence[int], shape: Shape | None
) -> Shape:
    """``reduce_sum``/``reduce_max``: ``in_shape`` with 1 in ``dims``; must equal ``shape``.

    ``shape=None`` (the deprecated form without ``shape``) infers it.
    """
    _check_rank(op, in_shape, "operand")
    norm = normalize_dims(op, dims, len(in_shape))
    expected = tuple(1 if i in norm else s for i, s in enumerate(in_shape))
    if shape is not None and tuple(shape) != expected:
        raise OpShapeError(
            f"{op}: reducing a block of shape {in_shape} over dims {list(dims)} gives shape "
            f"{expected}, but shape={tuple(shape)} was given",
            hint="shape must equal the operand's shape with 1 in every reduced dimension",
        )
    return expected


def broadcast_result_shape(op: str, in_shape: Shape, dims: Sequence[int], shape: Shape) -> Shape:
    """``broadcast``: same rank as ``shape``; 1 in ``dims``; other dims equal to ``shape``'s."""
    shape = tuple(shape)
    _check_rank(op, in_shape, "operand")
    if len(shape) != len(in_shape):
        raise OpShapeError(
            f"{op}: shape={shape} has {len(shape)} dimensions but the operand block {in_shape} "
            f"has {len(in_shape)}",
            hint="the operand and shape must have the same number of dimensions",
        )
    norm = normalize_dims(op, dims, len(in_shape))
    for i in norm:
        if in_shape[i] != 1:
            raise OpShapeError(
                f"{op}: cannot broadcast dimension {i} of a block of shape {in_shape}: its extent "
                f"is {in_shape[i]}, must be 1",
                hint="only dimensions of extent 1 can be broadcast",
            )
    for i, (have, want) in enumerate(zip(in_shape, shape)):
        if i not in norm and have != want:
            raise OpShapeError(
                f"{op}: dimension {i} is not broadcast, so shape={shape} must keep the operand's "
                f"extent {have} there (operand shape {in_shape})",
            )
    return shape


def squeeze_result_shape(op: str, in_shape: Shape, dims: Sequence[int]) -> Shape:
    """``squeeze``: remove ``dims`` (each of extent 1); positions refer to ``in_shape``."""
    norm = normalize_dims(op, dims, len(in_shape))
    for i in norm:
        if in_shape[i] != 1:
            raise OpShapeError(
                f"{op}: cannot squeeze dimension {i} of a block of shape {in_shape}: its extent is "
                f"{in_shape[i]}, must be 1"
            )
    result = tuple(s for i, s in enumerate(in_shape) if i not in norm)
    _check_rank(op, result, "result")
    return result


def unsqueeze_result_shape(op: str, in_shape: Shape, dims: Sequence[int]) -> Shape:
    """``unsqueeze``: insert 1s at ``dims``, positions in the *resulting* shape."""
    ndim = len(in_shape) + len(dims)
    norm = normalize_dims(op, dims, ndim, what="position")
    if len(norm) != len(dims):
        raise OpShapeError(f"{op}: dims {list(dims)} name the same position twice")
    rest = iter(in_shape)
    return tuple(1 if i in norm else next(rest) for i in range(ndim))


def matmul_result_shape(op: str, lhs: Shape, rhs: Shape, transpose_rhs: bool = False) -> Shape:
    """``[..., M, K] @ [..., K, N] -> [..., M, N]``; batch dims broadcast like numpy."""
    _check_rank(op, lhs, "left operand")
    _check_rank(op, rhs, "right operand")
    if transpose_rhs:
        rhs = (*rhs[:-2], rhs[-1], rhs[-2])
    if lhs[-1] != rhs[-2]:
        raise OpShapeError(
            f"{op}: inner dimensions differ: {lhs} @ {rhs}"
            + (" (rhs transposed)" if transpose_rhs else "")
            + f"; the left operand has K={lhs[-1]} tiles, the right K={rhs[-2]}",
        )
    try:
        batch = np.broadcast_shapes(lhs[:-2], rhs[:-2])
    except ValueError:
        raise OpShapeError(
            f"{op}: batch dimensions {lhs[:-2]} and {rhs[:-2]} do not broadcast"
        ) from None
    return (*batch, lhs[-2], rhs[-1])


def _elementwise(spec: OpSpec, shapes: Sequence[Shape], params: dict[str, Any]) -> Shape:
    blocks = [tuple(s) for s in shapes if len(s) > 0]
    if not blocks:
        raise OpShapeError(f"{spec.qualified_name}: at least one operand must be a block")
    if len(blocks) != len(shapes) and not spec.accepts_scalar:
        raise OpShapeError(
            f"{spec.qualified_name}: operands must be blocks, got a scalar",
            hint="scalar operands are accepted by the Python operators (+ - * / ...) only",
        )
    first = blocks[0]
    for other in blocks[1:]:
        if other != first:
            shown = " and ".join(str(tuple(s)) for s in shapes)
            raise OpShapeError(
                f"{spec.qualified_name}: operand block shapes {shown} differ", hint=_BROADCAST_HINT
            )
    return first


def _need(spec: OpSpec, params: dict[str, Any], name: str) -> Any:
    if name not in params:
        raise OpParamError(
            f"{spec.qualified_name} is missing required parameter '{name}'",
            hint=f"signature: {spec.signature()}",
        )
    return params[name]


def _unary(spec: OpSpec, shapes: Sequence[Shape], params: dict[str, Any]) -> Shape:
    if len(shapes[0]) == 0:
        raise OpShapeError(f"{spec.qualified_name}: the operand must be a block, got a scalar")
    return tuple(shapes[0])


def _reduce(spec: OpSpec, shapes: Sequence[Shape], params: dict[str, Any]) -> Shape:
    return reduce_result_shape(
        spec.qualified_name, tuple(shapes[0]), _need(spec, params, "dims"), params.get("shape")
    )


def _broadcast(spec: OpSpec, shapes: Sequence[Shape], params: dict[str, Any]) -> Shape:
    return broadcast_result_shape(
        spec.qualified_name,
        tuple(shapes[0]),
        _need(spec, params, "dims"),
        _need(spec, params, "shape"),
    )


def _transpose(spec: OpSpec, shapes: Sequence[Shape], params: dict[str, Any]) -> Shape:
    in_shape = tuple(shapes[0])
    if len(in_shape) != 2:
        raise OpShapeError(
            f"{spec.qualified_name}: supported only for two-dimensional blocks, "
            f"got shape {in_shape}"
        )
    return (in_shape[1], in_shape[0])


def _fill(spec: OpSpec, shapes: Sequence[Shape], params: dict[str, Any]) -> Shape:
    shape = tuple(_need(spec, params, "shape"))
    _check_rank(spec.qualified_name, shape, "fill")
    return shape


def _matmul(spec: OpSpec, shapes: Sequence[Shape], params: dict[str, Any]) -> Shape:
    return matmul_result_shape(
        spec.qualified_name,
        tuple(shapes[0]),
        tuple(shapes[1]),
        bool(params.get("transpose_rhs", False)),
    )


def _shape_op(spec: OpSpec, shapes: Sequence[Shape], params: dict[str, Any]) -> Shape:
    rule = squeeze_result_shape if spec.name == "squeeze" else unsqueeze_result_shape
    return rule(spec.qualified_name, tuple(shapes[0]), _need(spec, params, "dims"))


_RULES: dict[OpKind, Callable[[OpSpec, Sequence[Shape], dict[str, Any]], Shape]] = {
    OpKind.UNARY: _unary,
    OpKind.BINARY: _elementwise,
    OpKind.TERNARY: _elementwise,
    OpKind.REDUCE: _reduce,
    OpKind.BROADCAST: _broadcast,
    OpKind.TRANSPOSE: _transpose,
    OpKind.FILL: _fill,
    OpKind.MATMUL: _matmul,
    OpKind.SHAPE: _shape_op,
    OpKind.TYPECAST: _unary,
}


def result_shape(spec: OpSpec, *operand_shapes: Sequence[int], **params: Any) -> Shape:
    """Block shape (in tiles) of ``spec`` applied to operands of the given block shapes.

    Args:
        spec: the op.
        *operand_shapes: one block shape per operand (``()`` for a Python scalar operand
            of an op with ``accepts_scalar``).
        **params: the op's parameters (as from ``bind_params``); only those that
            affect the shape are read (``dims``, ``shape``, ``transpose_rhs``).

    Raises:
        OpShapeError: the shapes break the op's rule; the message names the op, the
            expected and the actual shapes.
    """
    if len(operand_shapes) != spec.arity:
        raise OpShapeError(
            f"{spec.qualified_name} takes {spec.arity} block operand(s), got {len(operand_shapes)}"
        )
    return _RULES[spec.kind](spec, [tuple(s) for s in operand_shapes], params)
