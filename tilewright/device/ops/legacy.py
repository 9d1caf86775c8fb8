"""Legacy spellings of block ops (reference A.12): one tested table plus adapters.

``LEGACY_ALIASES`` maps an old qualified spelling to the registry op it now is:

* pure renames -- same arguments, new namespace (spec v0.17 moved ``transpose``,
  ``where``, ``mask``, ``mask_posinf``, ``squeeze`` and ``unsqueeze`` from
  ``ttl.math`` to ``ttl.block``): ``adapter`` is None and the op's ``impl`` is called
  as is (``registry.get_op`` resolves these spellings);
* old signatures (the tt-lang 1.1.1 wheel / simulator) -- an ``adapter`` takes the
  old argument list and returns what the newest form returns.  Blocks are not this
  package's concern, so where the old form took an *output block* only to learn the
  result shape, the adapter takes that block's shape (in tiles) instead.

``math.reduce_sum`` / ``math.reduce_max`` keep their spelling but had another
signature, ``reduce_sum(x, scaler, dims=)`` (simulator:
``reduce_sum(block, scaler, _output_hint=None, dims=None)``).  The ``ttl`` layer picks
the adapter when the second positional argument is a block or a number (the scaler)
instead of a dims list, or when ``scaler=`` is passed.  The scaler multiplies the
result: the simulator's ``_reduce_impl`` multiplies every result tile elementwise by
the scaler block's first tile (a number acts as a tile filled with it), so the zeros
outside column 0 / row 0 stay zeros.  The spec removed the scaler ("scale by
multiplying") -- ``reduce_sum(x, s, dims=d)`` equals ``reduce_sum(x, dims=d, shape=...) * s``
for a constant scaler.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .op_errors import OpShapeError
from .shapes import block_shape_of, from_tiles, to_tiles
from .spec import DEFAULT_TILE
from .tiled import broadcast, fill, reduce_max, reduce_sum, transpose

__all__ = [
    "LEGACY_ALIASES",
    "LegacyAlias",
    "legacy_broadcast",
    "legacy_fill",
    "legacy_reduce_max",
    "legacy_reduce_sum",
    "legacy_transpose",
]

Scaler = float | int | np.ndarray


@dataclass(frozen=True, slots=True)
class LegacyAlias:
    """One legacy spelling.

    Attributes:
        legacy: the old qualified spelling (``"math.where"`` is ``ttl.math.where``).
        op: the registry op it resolves to.
        signature: the old call form, for docs and messages.
        since: the spec version (or release) that replaced it.
        adapter: function taking the old argument list (output blocks as shapes),
            returning the newest form's result; None for a pure rename.
    """

    legacy: str
    op: str
    signature: str
    since: str
    adapter: Callable[..., np.ndarray] | None = None

    @property
    def is_rename(self) -> bool:
        """Same arguments under a new name (no adapter needed)."""
        return self.adapter is None


def legacy_broadcast(
    x: np.ndarray,
    out_shape: Sequence[int],
    dims: Sequence[int],
    *,
    tile: Sequence[int] = DEFAULT_TILE,
) -> np.ndarray:
    """``ttl.math.broadcast(x, out_blk, dims=[..])`` (1.1.1) ==
    ``ttl.block.broadcast(x, dims=[..], shape=out_blk.shape)``."""
    return broadcast(x, dims, tuple(out_shape), tile=tile)


def legacy_fill(
    out_shape: Sequence[int], value: float, *, tile: Sequence[int] = DEFAULT_TILE
) -> np.ndarray:
    """``ttl.math.fill(out_blk, value)`` == ``ttl.block.fill(value, shape=out_blk.shape)``."""
    return fill(value, tuple(out_shape), tile=tile)


def legacy_transpose(
    x: np.ndarray,
    out_shape: Sequence[int] | None = None,
    *,
    tile: Sequence[int] = DEFAULT_TILE,
) -> np.ndarray:
    """``ttl.math.transpose(x, out_blk=None)`` == ``ttl.block.transpose(x)``; the optional
    output block (a shape hint) must be the transposed shape."""
    result = transpose(x, tile=tile)
    _check_out_shape("math.transpose", result, out_shape, tile)
    return result


def _check_out_shape(
    op: str, result: np.ndarray, out_shape: Sequence[int] | None, tile: Sequence[int]
) -> None:
    if out_shape is None:
        return
    got = block_shape_of(result, tile, op)
    if tuple(out_shape) != got:
        raise OpShapeError(
            f"{op}: the result has block shape {got} but the output block has shape "
            f"{tuple(out_shape)}"
        )


def _scale(result: np.ndarray, scaler: Scaler, tile: Sequence[int]) -> np.ndarray:
    if not isinstance(scaler, np.ndarray):
        return result * np.float32(scaler)
    th, tw = tile
    first_tile = scaler.reshape(-1, *scaler.shape[-2:])[0, :th, :tw].astype(np.float32)
    return from_tiles(to_tiles(result, tile) * first_tile)


def legacy_reduce_sum(
    x: np.ndarray,
    scaler: Scaler,
    dims: Sequence[int],
    out_shape: Sequence[int] | None = None,
    *,
    tile: Sequence[int] = DEFAULT_TILE,
) -> np.ndarray:
    """``ttl.math.reduce_sum(x, scaler, dims=)`` (1.1.1): the newest ``reduce_sum``
    times the scaler (module docstring); ``out_shape`` is the optional output block's
    shape and must be the reduced shape."""
    result = _scale(reduce_sum(x, dims, None, tile=tile), scaler, tile)
    _check_out_shape("math.reduce_sum", result, out_shape, tile)
    return result


def legacy_reduce_max(
    x: np.ndarray,
    scaler: Scaler,
    dims: Sequence[int],
    out_shape: Sequence[int] | None = None,
    *,
    tile: Sequence[int] = DEFAULT_TILE,
) -> np.ndarray:
    """``ttl.math.reduce_max(x, scaler, dims=)`` (1.1.1): see :func:`legacy_reduce_sum`."""
    result = _scale(reduce_max(x, dims, None, tile=tile), scaler, tile)
    _check_out_shape("math.reduce_max", result, out_shape, tile)
    return result


_ENTRIES: tuple[LegacyAlias, ...] = (
    LegacyAlias("math.where", "where", "ttl.math.where(cond, t, f)", "0.17"),
    LegacyAlias("math.mask", "mask", "ttl.math.mask(x, mask)", "0.17"),
    LegacyAlias("math.mask_posinf", "mask_posinf", "ttl.math.mask_posinf(x, mask)", "0.17"),
    LegacyAlias("math.squeeze", "squeeze", "ttl.math.squeeze(x, dims)", "0.17"),
    LegacyAlias("math.unsqueeze", "unsqueeze", "ttl.math.unsqueeze(x, dims)", "0.17"),
    LegacyAlias(
        "math.transpose", "transpose", "ttl.math.transpose(x, out_blk=None)", "0.17",
        legacy_transpose,
    ),
    LegacyAlias(
        "math.broadcast", "broadcast", "ttl.math.broadcast(x, out_blk, dims=[..])", "0.17",
        legacy_broadcast,
    ),
    LegacyAlias("math.fill", "fill", "ttl.math.fill(out_blk, value)", "0.17", legacy_fill),
    LegacyAlias(
        "math.reduce_sum", "reduce_sum", "ttl.math.reduce_sum(x, scaler, out_blk=None, dims=[..])",
        "1.1.1 -> newest", legacy_reduce_sum,
    ),
    LegacyAlias(
        "math.reduce_max", "reduce_max", "ttl.math.reduce_max(x, scaler, out_blk=None, dims=[..])",
        "1.1.1 -> newest", legacy_reduce_max,
    ),
)  # fmt: skip

LEGACY_ALIASES: dict[str, LegacyAlias] = {entry.legacy: entry for entry in _ENTRIES}
"""Legacy qualified spelling -> :class:`LegacyAlias` (reference A.12)."""
