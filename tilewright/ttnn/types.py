"""ttnn's value types: data types, layouts, shapes, tiles, memory configurations.

Names and enum values follow ttnn (tt-metal digest §2.1, §3.4, §6).  Memory and
core types are the device layer's own, re-exported here under their ttnn names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from tilewright.device.buffer import (
    BufferType,
    ShardOrientation,
    ShardSpec,
    TensorMemoryLayout,
)
from tilewright.device.coords import CoreCoord, CoreRange, CoreRangeSet
from tilewright.device.formats import (
    FLOAT_FORMATS,
    TTNN_TO_DATA_FORMAT,
    DataFormat,
    TileShape,
    TtnnDataType,
    data_type_named,
)
from tilewright.device.named_enum import NamedIntEnum
from tilewright.errors import DeviceError, user_location

__all__ = [
    "DataType",
    "bfloat16",
    "float32",
    "bfloat8_b",
    "bfloat4_b",
    "int32",
    "uint32",
    "uint16",
    "uint8",
    "Layout",
    "ROW_MAJOR_LAYOUT",
    "TILE_LAYOUT",
    "TILE_SIZE",
    "Shape",
    "Tile",
    "MemoryConfig",
    "DRAM_MEMORY_CONFIG",
    "L1_MEMORY_CONFIG",
    "L1_SMALL_MEMORY_CONFIG",
    "ShardStrategy",
    "CoreGrid",
    "BufferType",
    "TensorMemoryLayout",
    "ShardOrientation",
    "ShardSpec",
    "CoreCoord",
    "CoreRange",
    "CoreRangeSet",
    "StorageType",
    "as_data_type",
    "as_layout",
    "data_format_of",
    "is_float",
]


class DataType(NamedIntEnum):
    """ttnn ``DataType`` (values stable across versions)."""

    BFLOAT16 = TtnnDataType.BFLOAT16
    FLOAT32 = TtnnDataType.FLOAT32
    UINT32 = TtnnDataType.UINT32
    BFLOAT8_B = TtnnDataType.BFLOAT8_B
    BFLOAT4_B = TtnnDataType.BFLOAT4_B
    UINT8 = TtnnDataType.UINT8
    UINT16 = TtnnDataType.UINT16
    INT32 = TtnnDataType.INT32


bfloat16 = DataType.BFLOAT16
float32 = DataType.FLOAT32
bfloat8_b = DataType.BFLOAT8_B
bfloat4_b = DataType.BFLOAT4_B
int32 = DataType.INT32
uint32 = DataType.UINT32
uint16 = DataType.UINT16
uint8 = DataType.UINT8


def as_data_type(dtype: object) -> DataType:
    """A ttnn ``DataType`` from a ttnn data type, its name (``"bfloat16"``, ``"bf16"``) or a
    torch / numpy dtype (``torch.float32``; float16 is stored as bfloat16, as
    ``ttnn.from_torch`` does) -- tt-lang's simulator takes torch dtypes where ttnn takes its own."""
    if isinstance(dtype, DataType):
        return dtype
    if isinstance(dtype, (TtnnDataType, int)) and not isinstance(dtype, bool):
        try:
            return DataType(int(dtype))
        except ValueError:
            pass
    else:
        name = dtype if isinstance(dtype, str) else str(dtype).rsplit(".", 1)[-1]
        found = TtnnDataType.BFLOAT16 if name == "float16" else data_type_named(name)
        if found is not None:
            return DataType(found)
    raise DeviceError(
        f"dtype {dtype!r} is not a ttnn data type (bfloat16, float32, bfloat8_b, bfloat4_b, "
        "int32, uint32, uint16, uint8, or the torch dtype of one)"
    )


def as_layout(layout: object) -> Layout:
    """A ttnn ``Layout`` (``ttnn.TILE_LAYOUT``, ``ttnn.ROW_MAJOR_LAYOUT``, or its value)."""
    try:
        return Layout(int(layout))  # type: ignore[call-overload]
    except (ValueError, TypeError):
        raise DeviceError(
            f"layout {layout!r} is not a ttnn layout (ttnn.TILE_LAYOUT, ttnn.ROW_MAJOR_LAYOUT)"
        ) from None


def data_format_of(dtype: DataType) -> DataFormat:
    """The device format a ttnn data type is stored in."""
    return TTNN_TO_DATA_FORMAT[TtnnDataType(int(dtype))]


def is_float(dtype: DataType) -> bool:
    """A float data type (bfloat16, float32, bfloat8_b, bfloat4_b): its values decode to float32."""
    return data_format_of(dtype) in FLOAT_FORMATS


class Layout(NamedIntEnum):
    ROW_MAJOR = 0
    TILE = 1


ROW_MAJOR_LAYOUT = Layout.ROW_MAJOR
TILE_LAYOUT = Layout.TILE
TILE_SIZE = 32


class StorageType(Enum):
    HOST = "HOST"
    DEVICE = "DEVICE"


class Shape(tuple):
    """ttnn.Shape: a tuple of ints with ``rank``; compares equal to lists and tuples."""

    def __new__(cls, dims=()):
        return super().__new__(cls, (int(d) for d in dims))

    @property
    def rank(self) -> int:
        return len(self)

    def volume(self) -> int:
        return math.prod(self)

    def __eq__(self, other) -> bool:
        if isinstance(other, (list, tuple)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __ne__(self, other) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = tuple.__hash__

    def __repr__(self) -> str:
        return f"Shape([{', '.join(map(str, self))}])"


@dataclass(frozen=True, slots=True)
class Tile:
    """ttnn.Tile((h, w), transpose_tile=False)."""

    tile_shape: tuple[int, int] = (32, 32)
    transpose_tile: bool = False

    def __init__(self, tile_shape=(32, 32), transpose_tile: bool = False):
        object.__setattr__(self, "tile_shape", (int(tile_shape[0]), int(tile_shape[1])))
        object.__setattr__(self, "transpose_tile", bool(transpose_tile))

    @property
    def shape(self) -> TileShape:
        return TileShape(self.tile_shape[0], self.tile_shape[1], transpose_tile=self.transpose_tile)


@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """Where a tensor lives: ``MemoryConfig(memory_layout, buffer_type, shard_spec)``."""

    memory_layout: TensorMemoryLayout = TensorMemoryLayout.INTERLEAVED
    buffer_type: BufferType = BufferType.DRAM
    shard_spec: ShardSpec | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "memory_layout", TensorMemoryLayout(self.memory_layout))
        object.__setattr__(self, "buffer_type", BufferType(self.buffer_type))
        if self.is_sharded() and self.shard_spec is None:
            raise DeviceError(
                f"a {self.memory_layout.name} memory config needs a shard_spec",
                loc=user_location(),
            )

    def is_sharded(self) -> bool:
        return self.memory_layout != TensorMemoryLayout.INTERLEAVED

    def __repr__(self) -> str:
        extra = f", shard_spec={self.shard_spec}" if self.shard_spec is not None else ""
        return (
            f"MemoryConfig(memory_layout={self.memory_layout.name}, "
            f"buffer_type={self.buffer_type.name}{extra})"
        )


DRAM_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.DRAM)
L1_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.L1)
L1_SMALL_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.L1_SMALL)


class ShardStrategy(Enum):
    HEIGHT = "HEIGHT"
    WIDTH = "WIDTH"
    BLOCK = "BLOCK"


@dataclass(frozen=True, slots=True)
class CoreGrid:
    """ttnn.CoreGrid(y=rows, x=columns)."""

    y: int
    x: int

    @property
    def num_cores(self) -> int:
        return self.x * self.y

    def to_core_range_set(self) -> CoreRangeSet:
        return CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(self.x - 1, self.y - 1))])
