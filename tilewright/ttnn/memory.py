"""Sharded memory configurations and work splitting (ttnn/ttnn/core.py helpers).

``create_sharded_memory_config(shape, core_grid, strategy, orientation=None,
use_height_and_width_as_shard_shape=False)`` follows ttnn: the tensor is seen as
``[prod(dims[:-1]), W]``; HEIGHT → (H / ncores, W), WIDTH → (H, W / ncores),
BLOCK ROW_MAJOR → (H / grid.y, W / grid.x), COL_MAJOR → (H / grid.x, W / grid.y);
with the flag, ``shape[-2:]`` *is* the shard shape.  Shard dimensions are rounded
up to tile multiples as ttnn does for TILE tensors.
"""

from __future__ import annotations

import math

from tilewright.device.buffer import BufferType, ShardOrientation, ShardSpec, TensorMemoryLayout
from tilewright.device.coords import CoreCoord, CoreRange, CoreRangeSet
from tilewright.errors import DeviceError
from tilewright.ttnn.located import at_user_call
from tilewright.ttnn.tensor import Tensor
from tilewright.ttnn.types import CoreGrid, MemoryConfig, ShardStrategy

__all__ = [
    "create_sharded_memory_config",
    "num_cores_to_corerangeset",
    "split_work_to_cores",
    "is_sharded",
    "get_memory_config",
]

_LAYOUT = {
    ShardStrategy.HEIGHT: TensorMemoryLayout.HEIGHT_SHARDED,
    ShardStrategy.WIDTH: TensorMemoryLayout.WIDTH_SHARDED,
    ShardStrategy.BLOCK: TensorMemoryLayout.BLOCK_SHARDED,
}


def _round_up(v: int, a: int) -> int:
    return -(-v // a) * a


@at_user_call
def create_sharded_memory_config(
    shape,
    core_grid,
    strategy: ShardStrategy,
    orientation: ShardOrientation | None = None,
    halo: bool = False,
    use_height_and_width_as_shard_shape: bool = False,
    tile_size: int = 32,
) -> MemoryConfig:
    """A sharded L1 MemoryConfig for a tensor of ``shape`` over ``core_grid``."""
    strategy = ShardStrategy(strategy)
    orientation = (
        ShardOrientation(orientation) if orientation is not None else ShardOrientation.ROW_MAJOR
    )
    if isinstance(core_grid, CoreGrid):
        grid = core_grid.to_core_range_set()
        gx, gy = core_grid.x, core_grid.y
    elif isinstance(core_grid, CoreRangeSet):
        if not use_height_and_width_as_shard_shape:
            raise DeviceError(
                "a CoreRangeSet core_grid needs use_height_and_width_as_shard_shape=True"
            )
        grid = core_grid
        box = grid.bounding_box()
        gx, gy = box.grid_size().x, box.grid_size().y
    else:
        raise DeviceError(
            f"core_grid must be a ttnn.CoreGrid or CoreRangeSet, got {type(core_grid).__name__}"
        )
    shape = tuple(int(s) for s in shape)
    if use_height_and_width_as_shard_shape:
        shard = (shape[-2], shape[-1])
    else:
        h = math.prod(shape[:-1]) if len(shape) > 1 else 1
        w = shape[-1]
        ncores = grid.num_cores()
        if strategy == ShardStrategy.HEIGHT:
            shard = (math.ceil(h / ncores), w)
        elif strategy == ShardStrategy.WIDTH:
            shard = (h, math.ceil(w / ncores))
        elif orientation == ShardOrientation.ROW_MAJOR:
            shard = (math.ceil(h / gy), math.ceil(w / gx))
        else:
            shard = (math.ceil(h / gx), math.ceil(w / gy))
        shard = (_round_up(shard[0], tile_size), _round_up(shard[1], tile_size))
    return MemoryConfig(_LAYOUT[strategy], BufferType.L1, ShardSpec(grid, shard, orientation))


@at_user_call
def num_cores_to_corerangeset(
    target_num_cores: int, grid_size: CoreCoord, row_wise: bool = False
) -> CoreRangeSet:
    """The first ``target_num_cores`` cores of a grid as a CoreRangeSet (ttnn semantics)."""
    gx, gy = grid_size.x, grid_size.y
    if not 0 < target_num_cores <= gx * gy:
        raise DeviceError(f"{target_num_cores} cores do not fit in a {gx}x{gy} grid")
    ranges = []
    if row_wise:
        full_rows, rem = divmod(target_num_cores, gx)
        if full_rows:
            ranges.append(CoreRange(CoreCoord(0, 0), CoreCoord(gx - 1, full_rows - 1)))
        if rem:
            ranges.append(CoreRange(CoreCoord(0, full_rows), CoreCoord(rem - 1, full_rows)))
    else:
        full_cols, rem = divmod(target_num_cores, gy)
        if full_cols:
            ranges.append(CoreRange(CoreCoord(0, 0), CoreCoord(full_cols - 1, gy - 1)))
        if rem:
            ranges.append(CoreRange(CoreCoord(full_cols, 0), CoreCoord(full_cols, rem - 1)))
    return CoreRangeSet(ranges)


@at_user_call
def split_work_to_cores(grid, units: int, row_wise: bool = False):
    """(num_cores, all_cores, group_1, group_2, units_per_core_g1, units_per_core_g2).

    Group 1 cores take one unit more than group 2 cores when the work does not
    divide evenly (ttnn ``split_work_to_cores``).
    """
    if isinstance(grid, CoreRangeSet):
        return _split_over_set(grid, units, row_wise)
    if isinstance(grid, CoreGrid):
        grid_size = CoreCoord(grid.x, grid.y)
    elif isinstance(grid, CoreCoord):
        grid_size = grid
    else:
        raise DeviceError(
            "split_work_to_cores takes a CoreCoord grid size, a ttnn.CoreGrid or a CoreRangeSet"
        )
    total = grid_size.x * grid_size.y
    if units <= 0:
        empty = CoreRangeSet([])
        return 0, empty, empty, empty, 0, 0
    num_cores = min(units, total)
    per, rem = divmod(units, num_cores)
    all_cores = num_cores_to_corerangeset(num_cores, grid_size, row_wise)
    if rem == 0:
        return num_cores, all_cores, all_cores, CoreRangeSet([]), per, 0
    cores = all_cores.cores(row_wise=row_wise)
    g1 = _coords_to_set(cores[:rem])
    g2 = _coords_to_set(cores[rem:])
    return num_cores, all_cores, g1, g2, per + 1, per


def _split_over_set(cores: CoreRangeSet, units: int, row_wise: bool):
    """split_work_to_cores over the cores of a CoreRangeSet, in its own order."""
    coords = cores.cores(row_wise=row_wise)
    if units <= 0 or not coords:
        empty = CoreRangeSet([])
        return 0, empty, empty, empty, 0, 0
    num_cores = min(units, len(coords))
    per, rem = divmod(units, num_cores)
    used = coords[:num_cores]
    all_cores = _coords_to_set(used)
    if rem == 0:
        return num_cores, all_cores, all_cores, CoreRangeSet([]), per, 0
    return (
        num_cores,
        all_cores,
        _coords_to_set(used[:rem]),
        _coords_to_set(used[rem:]),
        per + 1,
        per,
    )


def _coords_to_set(coords) -> CoreRangeSet:
    return CoreRangeSet([CoreRange(c, c) for c in coords])


def _tensor_arg(tensor, what: str):
    if not isinstance(tensor, Tensor):
        raise DeviceError(f"ttnn.{what} takes a ttnn tensor, got {type(tensor).__name__}")
    return tensor


@at_user_call
def is_sharded(tensor) -> bool:
    """``ttnn.is_sharded(tensor)``: whether the tensor's memory config is sharded."""
    return _tensor_arg(tensor, "is_sharded").is_sharded()


@at_user_call
def get_memory_config(tensor) -> MemoryConfig | None:
    """``ttnn.get_memory_config(tensor)``: where the tensor lives (None for a host tensor)."""
    return _tensor_arg(tensor, "get_memory_config").memory_config()
