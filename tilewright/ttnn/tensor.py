"""ttnn.Tensor: logical and padded shape, dtype, layout, host or device storage.

One representation for both storages: the tensor's *pages* in the on-device byte
format (tilized TILED_NFACES tiles for TILE layout, rows for ROW_MAJOR).  Host
storage keeps the page bytes in memory; device storage keeps them in a device
``Buffer`` (interleaved or sharded).  Moving between the two is a buffer write or
read; ``to_torch`` decodes, untilizes and crops to the logical shape.

Inside a running kernel, ``tensor[...]`` gives a :class:`TensorSlice` (a region in
page units) that TT-Lang's ``ttl.copy`` reads and writes; on the host it slices
like ``ttnn.slice``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from tilewright.device.buffer import Buffer
from tilewright.device.formats import (
    TILE_32x32,
    TileShape,
    data_type_name,
    decode_elements,
    decode_tiles,
    element_size,
    encode_elements,
    encode_tiles,
    is_block_float,
    pad_to_tiles,
    tilize,
    untilize,
)
from tilewright.errors import DeviceError, user_location
from tilewright.ttnn.types import (
    DataType,
    Layout,
    MemoryConfig,
    Shape,
    StorageType,
    Tile,
    data_format_of,
)

__all__ = [
    "Tensor",
    "TensorSlice",
    "encode_pages",
    "decode_pages",
    "SLICE_RULE",
    "slice_rank_message",
    "slice_step_message",
    "slice_range_message",
    "slice_index_message",
]


def _tile_shape(tile) -> TileShape:
    if tile is None:
        return TILE_32x32
    if isinstance(tile, TileShape):
        return tile
    if isinstance(tile, Tile):
        return tile.shape
    return TileShape(int(tile[0]), int(tile[1]))


def _padded_shape(shape: tuple[int, ...], layout: Layout, tile: TileShape) -> tuple[int, ...]:
    if layout == Layout.ROW_MAJOR:
        return tuple(shape)
    *batch, h, w = shape
    th, tw = tile.height, tile.width
    return (*batch, -(-h // th) * th, -(-w // tw) * tw)


def encode_pages(
    values: np.ndarray,
    dtype: DataType,
    layout: Layout,
    tile: TileShape,
    pad_value: float = 0.0,
    dram_alignment: int = 32,
) -> np.ndarray:
    """Logical values → page bytes, uint8 of shape (num_pages, page_size)."""
    fmt = data_format_of(dtype)
    if layout == Layout.TILE:
        if values.ndim < 2:
            raise DeviceError("TILE layout needs a tensor of rank 2 or more")
        padded = (
            pad_to_tiles(values, tile, pad_value)
            if values.shape != _padded_shape(values.shape, layout, tile)
            else values
        )
        *batch, hp, wp = padded.shape
        tiles = tilize(padded.reshape(math.prod(batch), hp, wp), tile)
        tiles = tiles.reshape(-1, tile.height * tile.width)
        data = encode_tiles(tiles, fmt, tile, dram_alignment=dram_alignment)
        return data.reshape(tiles.shape[0], -1)
    if is_block_float(fmt):
        raise DeviceError(
            f"{data_type_name(dtype)} needs TILE layout (block-float formats are tiled)"
        )
    if values.ndim < 1:
        values = values.reshape(1)
    w = values.shape[-1]
    rows = values.reshape(-1, w)
    data = encode_elements(rows.reshape(-1), fmt)
    return data.reshape(rows.shape[0], -1)


def decode_pages(
    pages: np.ndarray,
    dtype: DataType,
    layout: Layout,
    tile: TileShape,
    shape: tuple[int, ...],
    padded: tuple[int, ...],
    dram_alignment: int = 32,
) -> np.ndarray:
    """Page bytes → logical values (float32 for float types, integers otherwise)."""
    fmt = data_format_of(dtype)
    if layout == Layout.TILE:
        *batch, hp, wp = padded
        tiles = decode_tiles(pages, fmt, tile, dram_alignment=dram_alignment)
        b = math.prod(batch)
        grid = tiles.reshape(b, hp // tile.height, wp // tile.width, -1)
        full = untilize(grid, tile).reshape(padded)
        index = tuple(slice(0, s) for s in shape)
        return np.ascontiguousarray(full[index])
    count = math.prod(shape) if shape else 1
    return decode_elements(pages.reshape(-1), fmt, count).reshape(shape)


SLICE_RULE = "tensor-slice"
"""The rule id of kernel-side tensor slices (registered with the TT-Lang copy rules,
``lang.rules.copy``; the compiled engine checks run-time bounds with these messages)."""


def slice_rank_message(ndim: int, unit: str, grid: tuple, got: int) -> str:
    return (
        f"tensor slice needs one index per dimension: the tensor has {ndim} dimensions "
        f"({unit}: {grid}), got {got}"
    )


def slice_step_message(d: int, step: object) -> str:
    return f"tensor slice dimension {d}: step must be 1, got {step}"


def slice_range_message(d: int, start: object, stop: object, n: int, unit: str) -> str:
    """``start`` / ``stop``: the numbers, or the placeholders of a run-time check."""
    return f"tensor slice dimension {d}: {start}:{stop} is outside 0:{n} ({unit})"


def slice_index_message(d: int, index: object, n: int) -> str:
    return f"tensor slice dimension {d}: index {index} is outside 0:{n}"


def _slice_error(message: str) -> DeviceError:
    return DeviceError(message, loc=user_location(), rule=SLICE_RULE)


class TensorSlice:
    """A region of a tensor in page units (tiles for TILE layout, elements for ROW_MAJOR).

    ``index`` holds one ``slice`` per tensor dimension (after normalisation);
    ``squeezed`` marks dimensions given as a scalar index.
    """

    __slots__ = ("tensor", "index", "squeezed")

    def __init__(self, tensor: Tensor, index: tuple[slice, ...], squeezed: tuple[bool, ...]):
        self.tensor = tensor
        self.index = index
        self.squeezed = squeezed

    @property
    def shape(self) -> tuple[int, ...]:
        """Extent in page units, squeezed dimensions dropped."""
        return tuple(s.stop - s.start for s, q in zip(self.index, self.squeezed) if not q)

    @property
    def full_shape(self) -> tuple[int, ...]:
        return tuple(s.stop - s.start for s in self.index)

    def __repr__(self) -> str:
        parts = [
            str(s.start) if q else f"{s.start}:{s.stop}" for s, q in zip(self.index, self.squeezed)
        ]
        return f"TensorSlice[{', '.join(parts)}]"


class Tensor:
    """A ttnn tensor on the host or on a device."""

    def __init__(
        self,
        pages: np.ndarray | None,
        shape,
        dtype: DataType,
        layout: Layout,
        tile: TileShape = TILE_32x32,
        *,
        buffer: Buffer | None = None,
        memory_config: MemoryConfig | None = None,
    ) -> None:
        self.shape = Shape(shape)
        self.dtype = DataType(dtype)
        self.layout = Layout(layout)
        self._tile = tile
        self.padded_shape = Shape(_padded_shape(tuple(self.shape), self.layout, tile))
        self._pages = pages
        self._buffer = buffer
        self._memory_config = memory_config
        self._deallocated = False

    # -- properties ------------------------------------------------------------------------

    @property
    def tile(self) -> Tile:
        return Tile((self._tile.height, self._tile.width), self._tile.transpose_tile)

    @property
    def tile_shape(self) -> TileShape:
        return self._tile

    @property
    def data_format(self):
        return data_format_of(self.dtype)

    @property
    def buffer(self) -> Buffer:
        if self._buffer is None:
            raise DeviceError(
                "the tensor is on the host; it has no device buffer", loc=user_location()
            )
        self._check_alive()
        return self._buffer

    def storage_type(self) -> StorageType:
        return StorageType.DEVICE if self._buffer is not None else StorageType.HOST

    def is_allocated(self) -> bool:
        return not self._deallocated

    def device(self):
        return self._buffer.device if self._buffer is not None else None

    def memory_config(self) -> MemoryConfig | None:
        return self._memory_config

    def is_sharded(self) -> bool:
        return self._memory_config is not None and self._memory_config.is_sharded()

    def buffer_address(self) -> int:
        return self.buffer.address

    def volume(self) -> int:
        return self.shape.volume()

    def page_grid(self) -> tuple[int, ...]:
        """The page grid: for TILE, padded_shape with the last two dims in tiles."""
        if self.layout == Layout.TILE:
            *batch, h, w = self.padded_shape
            return (*batch, h // self._tile.height, w // self._tile.width)
        return tuple(self.padded_shape)

    @property
    def page_size(self) -> int:
        return self.buffer.page_size if self._buffer is not None else self._stored_pages().shape[1]

    def _stored_pages(self) -> np.ndarray:
        """The page bytes of a host tensor (a device tensor keeps them in its buffer)."""
        if self._pages is None:
            raise DeviceError("the tensor has neither host pages nor a device buffer")
        return self._pages

    # -- data ------------------------------------------------------------------------------

    def host_pages(self) -> np.ndarray:
        """The page bytes (read back from the device when needed)."""
        self._check_alive()
        if self._buffer is not None:
            pages = self._buffer.read()
            return pages.reshape(-1, self.row_bytes()) if self.layout == Layout.ROW_MAJOR else pages
        return self._stored_pages()

    def row_bytes(self) -> int:
        """Bytes of one row of the 2D view (the host page of a ROW_MAJOR tensor)."""
        return (self.shape[-1] if self.shape else 1) * element_size(data_format_of(self.dtype))

    def replace_pages(self, pages: np.ndarray) -> None:
        """Overwrite the tensor's page bytes (host storage, or a write into the device buffer)."""
        self._check_alive()
        if self._buffer is not None:
            self._buffer.write(pages.reshape(-1, self._buffer.page_size))
            return
        stored = self._stored_pages()
        if pages.shape != stored.shape:
            raise DeviceError(f"replace_pages: {pages.shape} does not match {stored.shape}")
        self._pages = pages

    def to_numpy(self) -> np.ndarray:
        align = self._buffer.device.dram_alignment if self._buffer is not None else 32
        return decode_pages(
            self.host_pages(),
            self.dtype,
            self.layout,
            self._tile,
            tuple(self.shape),
            tuple(self.padded_shape),
            align,
        )

    def cpu(self) -> Tensor:
        """A host copy of the tensor."""
        if self._buffer is None:
            return self
        return Tensor(self.host_pages().copy(), self.shape, self.dtype, self.layout, self._tile)

    def deallocate(self) -> None:
        if self._buffer is not None:
            self._buffer.deallocate()
        self._deallocated = True

    def _check_alive(self) -> None:
        if self._deallocated:
            raise DeviceError("the tensor was deallocated", loc=user_location())

    # -- indexing ----------------------------------------------------------------------------

    def slice_pages(self, key) -> TensorSlice:
        """Normalise a kernel-side index (page units) into a TensorSlice."""
        if not isinstance(key, tuple):
            key = (key,)
        grid = self.page_grid()
        unit = "tiles" if self.layout == Layout.TILE else "elements"
        if len(key) != len(grid):
            raise _slice_error(slice_rank_message(len(grid), unit, tuple(grid), len(key)))
        index, squeezed = [], []
        for d, (k, n) in enumerate(zip(key, grid)):
            if isinstance(k, slice):
                if k.step not in (None, 1):
                    raise _slice_error(slice_step_message(d, k.step))
                start = 0 if k.start is None else int(k.start)
                stop = n if k.stop is None else int(k.stop)
                if not 0 <= start < stop <= n:
                    raise _slice_error(slice_range_message(d, start, stop, n, unit))
                index.append(slice(start, stop))
                squeezed.append(False)
            elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
                i = int(k)
                if not 0 <= i < n:
                    raise _slice_error(slice_index_message(d, i, n))
                index.append(slice(i, i + 1))
                squeezed.append(True)
            else:
                raise _slice_error(
                    f"tensor slice dimension {d}: expected an int or a slice, got {type(k).__name__}"
                )
        return TensorSlice(self, tuple(index), tuple(squeezed))

    def __repr__(self) -> str:
        where = "host" if self._buffer is None else f"device {self._buffer.device.device_id}"
        return (
            f"ttnn.Tensor(shape={list(self.shape)}, dtype={self.dtype.name}, "
            f"layout={self.layout.name}, {where})"
        )

    if TYPE_CHECKING:  # installed from the tables of ttnn.operations.methods (they build tensors)

        def to_torch(self, dtype: Any = None, **kwargs: Any) -> Any: ...
        def to(self, device: Any, memory_config: MemoryConfig | None = None) -> Tensor: ...
        def to_layout(self, layout: Layout, dtype: DataType | None = None, **kw: Any) -> Tensor: ...
        def reshape(self, *shape: Any) -> Tensor: ...
        def __getitem__(self, key: Any) -> Any: ...
        def __add__(self, other: Any) -> Tensor: ...
        def __radd__(self, other: Any) -> Tensor: ...
        def __sub__(self, other: Any) -> Tensor: ...
        def __rsub__(self, other: Any) -> Tensor: ...
        def __mul__(self, other: Any) -> Tensor: ...
        def __rmul__(self, other: Any) -> Tensor: ...
        def __truediv__(self, other: Any) -> Tensor: ...
        def __rtruediv__(self, other: Any) -> Tensor: ...
        def __matmul__(self, other: Any) -> Tensor: ...
        def __neg__(self) -> Tensor: ...
