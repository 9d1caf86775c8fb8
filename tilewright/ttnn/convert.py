"""Moving data into and out of ttnn tensors: from_torch, to_torch, layouts, devices, creation.

Host values are numpy arrays (torch tensors are converted without copies where
possible; a bf16 torch tensor widens exactly to float32, so its bits are kept).
Float → bfloat16 rounds to nearest even, block floats use tt-metal's host packer
(``tilewright.device.formats``).  Device placement allocates an interleaved or
sharded ``Buffer`` from the memory config and writes the pages.

Constant tensors (``full``, ``zeros``, ``ones``, ``empty``) never hold their elements
as a float32 array: each distinct page (one row; or the interior, edge and corner
tiles) is encoded once and repeated, so a device tensor costs its device bytes.

Tensors have at least one element: a shape with a zero dimension is refused with the
user's file and line (a device buffer of no pages cannot be allocated).  Every public
function here points its errors at the user's call (:mod:`located`).
"""

from __future__ import annotations

import math

import numpy as np

from tilewright.device.buffer import Buffer, BufferType, ShardSpecBuffer
from tilewright.device.device import Device
from tilewright.device.formats import element_size
from tilewright.device.ops import OpParamError, OpShapeError
from tilewright.errors import DeviceError
from tilewright.ttnn.located import at_user_call
from tilewright.ttnn.tensor import Tensor, TileShape, _tile_shape, encode_pages
from tilewright.ttnn.types import (
    DRAM_MEMORY_CONFIG,
    DataType,
    Layout,
    MemoryConfig,
    data_format_of,
    is_float,
)

__all__ = [
    "from_torch",
    "to_torch",
    "from_numpy",
    "to_numpy",
    "to_device",
    "from_device",
    "to_layout",
    "to_memory_config",
    "typecast",
    "deallocate",
    "place_on_device",
    "host_slice",
    "rand",
    "randn",
    "zeros",
    "ones",
    "full",
    "empty",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand_like",
]

_NUMPY_TO_TTNN = {
    np.dtype(np.float32): DataType.FLOAT32,
    np.dtype(np.float64): DataType.FLOAT32,
    np.dtype(np.float16): DataType.BFLOAT16,
    np.dtype(np.int32): DataType.INT32,
    np.dtype(np.int64): DataType.INT32,
    np.dtype(np.int16): DataType.INT32,
    np.dtype(np.int8): DataType.INT32,
    np.dtype(np.uint8): DataType.UINT8,
    np.dtype(np.uint16): DataType.UINT16,
    np.dtype(np.uint32): DataType.UINT32,
    np.dtype(np.bool_): DataType.UINT8,
}


def _torch():
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - torch is an optional dependency
        raise DeviceError("this needs torch: pip install 'tilewright[torch]'") from exc
    return torch


def _host_values(data) -> tuple[np.ndarray, DataType]:
    """(numpy values, the ttnn dtype they default to)."""
    if isinstance(data, np.ndarray) or np.isscalar(data):
        arr = np.asarray(data)
        if arr.dtype.name == "bfloat16":  # ml_dtypes
            return arr.astype(np.float32), DataType.BFLOAT16
        if arr.dtype not in _NUMPY_TO_TTNN:
            raise DeviceError(f"numpy dtype {arr.dtype} has no ttnn data type")
        return arr, _NUMPY_TO_TTNN[arr.dtype]
    torch = _torch()
    if not isinstance(data, torch.Tensor):
        raise DeviceError(f"expected a torch tensor or numpy array, got {type(data).__name__}")
    t = data.detach().cpu()
    if t.dtype == torch.bfloat16:
        return t.to(torch.float32).numpy(), DataType.BFLOAT16
    if t.dtype == torch.float16:
        return t.to(torch.float32).numpy(), DataType.BFLOAT16
    arr = t.numpy()
    if arr.dtype not in _NUMPY_TO_TTNN:
        raise DeviceError(f"torch dtype {t.dtype} has no ttnn data type")
    return arr, _NUMPY_TO_TTNN[arr.dtype]


def _prepare(values: np.ndarray, dtype: DataType) -> np.ndarray:
    if is_float(dtype):
        return values.astype(np.float32, copy=False)
    if values.dtype.kind == "f":
        if not np.all(np.isfinite(values)) or np.any(values != np.round(values)):
            raise DeviceError(f"non-integer values cannot be stored as {dtype.name.lower()}")
        return values.astype(np.int64)
    return values


def _dtype_arg(op: str, dtype) -> DataType:
    try:
        return DataType(dtype)
    except (ValueError, TypeError):
        raise OpParamError(f"{op}: dtype must be a ttnn.DataType, got {dtype!r}") from None


def _layout_arg(op: str, layout) -> Layout:
    try:
        return Layout(layout)
    except (ValueError, TypeError):
        raise OpParamError(
            f"{op}: layout must be ttnn.ROW_MAJOR_LAYOUT or ttnn.TILE_LAYOUT, got {layout!r}"
        ) from None


def _check_not_empty(op: str, shape: tuple[int, ...]) -> None:
    if 0 in shape:
        raise OpShapeError(
            f"{op}: shape {list(shape)} has no elements; a ttnn tensor holds at least one "
            "(a device buffer of no pages cannot be allocated)",
            hint="skip the empty case in the program, or give every dimension a size >= 1",
        )


@at_user_call
def from_torch(
    tensor,
    dtype: DataType | None = None,
    *,
    spec=None,
    tile=None,
    pad_value=None,
    layout: Layout | None = None,
    device=None,
    memory_config: MemoryConfig | None = None,
    mesh_mapper=None,
    cq_id=None,
    **_ignored,
) -> Tensor:
    """Make a ttnn tensor from a torch tensor or numpy array (ttnn.from_torch)."""
    values, default = _host_values(tensor)
    _check_not_empty("ttnn.from_torch", values.shape)
    dtype = _dtype_arg("ttnn.from_torch", dtype) if dtype is not None else default
    layout = _layout_arg("ttnn.from_torch", layout) if layout is not None else Layout.ROW_MAJOR
    tshape = _tile_shape(tile)
    values = _prepare(values, dtype)
    pad = 0.0 if pad_value is None else pad_value
    pages = encode_pages(
        values, dtype, layout, tshape, pad, device.dram_alignment if device is not None else 32
    )
    host = Tensor(pages, values.shape, dtype, layout, tshape)
    if device is None:
        return host
    return place_on_device(host, device, memory_config or DRAM_MEMORY_CONFIG)


from_numpy = from_torch


def _torch_dtype(dtype: DataType):
    torch = _torch()
    return {
        DataType.BFLOAT16: torch.bfloat16,
        DataType.FLOAT32: torch.float32,
        DataType.BFLOAT8_B: torch.float32,
        DataType.BFLOAT4_B: torch.float32,
        DataType.INT32: torch.int32,
        DataType.UINT32: torch.int64,
        DataType.UINT16: torch.int32,
        DataType.UINT8: torch.uint8,
    }[dtype]


@at_user_call
def to_torch(
    tensor: Tensor, dtype=None, *, torch_rank=None, mesh_composer=None, device=None, cq_id=None
):
    """The tensor's logical values as a torch tensor (read back from the device if needed).

    bfloat8_b / bfloat4_b come back as float32, uint32 as int64 and uint16 as int32
    so that every value is exact.
    """
    torch = _torch()
    values = tensor.to_numpy()
    out = torch.from_numpy(np.ascontiguousarray(values).reshape(values.shape))
    target = dtype if dtype is not None else _torch_dtype(tensor.dtype)
    out = out.to(target)
    if torch_rank is not None:
        while out.dim() > torch_rank and out.shape[0] == 1:
            out = out.squeeze(0)
    return out


def to_numpy(tensor: Tensor) -> np.ndarray:
    return tensor.to_numpy()


def _shard_buffer_spec(
    host: Tensor, memory_config: MemoryConfig
) -> tuple[int, ShardSpecBuffer | None]:
    """(page size on the device, shard geometry) for placing ``host`` with ``memory_config``."""
    if not memory_config.is_sharded():
        page = host.host_pages().shape[1]
        return page, None
    spec = memory_config.shard_spec
    if spec is None:  # MemoryConfig requires one when sharded
        raise DeviceError(f"a {memory_config.memory_layout.name} memory config needs a shard_spec")
    rows2d = math.prod(host.padded_shape[:-1]) if len(host.padded_shape) > 1 else 1
    width = host.padded_shape[-1]
    if host.layout == Layout.TILE:
        t = host.tile_shape
        page_shape = (t.height, t.width)
        page = host.host_pages().shape[1]
    else:
        sharded_width = memory_config.memory_layout.name in ("WIDTH_SHARDED", "BLOCK_SHARDED")
        page_w = spec.shape[1] if sharded_width else width
        if width % page_w:
            raise DeviceError(f"shard width {page_w} does not divide the tensor width {width}")
        page_shape = (1, page_w)
        page = page_w * element_size(data_format_of(host.dtype))
    if rows2d % page_shape[0] or width % page_shape[1]:
        raise DeviceError(
            f"tensor {tuple(host.padded_shape)} is not a whole number of pages {page_shape}"
        )
    geometry = ShardSpecBuffer(spec, page_shape, (rows2d // page_shape[0], width // page_shape[1]))
    _ = geometry.shard_shape_in_pages  # raises if the shard shape is not whole pages
    return page, geometry


def place_on_device(host: Tensor, device, memory_config: MemoryConfig) -> Tensor:
    """Allocate a buffer for ``memory_config`` on ``device`` and write the host pages."""
    if not isinstance(device, Device):
        raise DeviceError(
            f"device must be an open ttnn device (ttnn.open_device(...)), got "
            f"{type(device).__name__}"
        )
    if device.closed:
        raise DeviceError(f"device {device.device_id} is closed")
    if not isinstance(memory_config, MemoryConfig):
        raise DeviceError(
            f"memory_config must be a ttnn.MemoryConfig, got {type(memory_config).__name__}"
        )
    if memory_config.buffer_type not in (BufferType.DRAM, BufferType.L1, BufferType.L1_SMALL):
        raise DeviceError(f"cannot place a tensor in {memory_config.buffer_type.name} memory")
    pages = host.host_pages()
    page_size, geometry = _shard_buffer_spec(host, memory_config)
    data = pages.reshape(-1, page_size)
    buf = Buffer(
        device,
        data.shape[0] * page_size,
        page_size,
        memory_config.buffer_type,
        memory_config.memory_layout,
        geometry,
    )
    buf.write(data)
    return Tensor(
        None,
        host.shape,
        host.dtype,
        host.layout,
        host.tile_shape,
        buffer=buf,
        memory_config=memory_config,
    )


@at_user_call
def to_device(
    tensor: Tensor, device, memory_config: MemoryConfig | None = None, **_ignored
) -> Tensor:
    if tensor.storage_type().name == "DEVICE":
        if tensor.device() is device and memory_config in (None, tensor.memory_config()):
            return tensor
        tensor = tensor.cpu()
    return place_on_device(tensor, device, memory_config or DRAM_MEMORY_CONFIG)


@at_user_call
def from_device(tensor: Tensor, **_ignored) -> Tensor:
    return tensor.cpu()


def _rebuild(
    tensor: Tensor, values: np.ndarray, *, dtype=None, layout=None, memory_config=None
) -> Tensor:
    dtype = _dtype_arg("ttnn", dtype) if dtype is not None else tensor.dtype
    layout = _layout_arg("ttnn", layout) if layout is not None else tensor.layout
    dev = tensor.device()
    pages = encode_pages(
        _prepare(values, dtype),
        dtype,
        layout,
        tensor.tile_shape,
        0.0,
        dev.dram_alignment if dev is not None else 32,
    )
    host = Tensor(pages, values.shape, dtype, layout, tensor.tile_shape)
    if dev is None:
        return host
    config = memory_config or tensor.memory_config()
    if config is None:  # a device tensor always has one
        raise DeviceError("memory_config must be a ttnn.MemoryConfig, got NoneType")
    return place_on_device(host, dev, config)


@at_user_call
def to_layout(
    tensor: Tensor,
    layout: Layout,
    dtype: DataType | None = None,
    memory_config: MemoryConfig | None = None,
    pad_value: float = 0.0,
    **_ignored,
) -> Tensor:
    layout = _layout_arg("ttnn.to_layout", layout)
    if layout == tensor.layout and dtype in (None, tensor.dtype) and memory_config is None:
        return tensor
    return _rebuild(
        tensor, tensor.to_numpy(), dtype=dtype, layout=layout, memory_config=memory_config
    )


@at_user_call
def to_memory_config(
    tensor: Tensor, memory_config: MemoryConfig, dtype: DataType | None = None
) -> Tensor:
    if tensor.device() is None:
        raise DeviceError("to_memory_config needs a device tensor")
    return _rebuild(tensor, tensor.to_numpy(), dtype=dtype, memory_config=memory_config)


@at_user_call
def typecast(tensor: Tensor, dtype: DataType, **_ignored) -> Tensor:
    return _rebuild(tensor, tensor.to_numpy(), dtype=_dtype_arg("ttnn.typecast", dtype))


@at_user_call
def deallocate(tensor: Tensor, force: bool = True) -> None:
    tensor.deallocate()


def host_slice(tensor: Tensor, key) -> Tensor:
    """Host-side ``tensor[key]`` in element units (ttnn.slice semantics)."""
    values = tensor.to_numpy()[key]
    if tensor.layout == Layout.TILE and values.ndim < 2:
        values = values.reshape((1,) * (2 - values.ndim) + values.shape)
    return _rebuild(tensor, np.ascontiguousarray(values))


# -- creation ----------------------------------------------------------------------------------


def _make(values: np.ndarray, dtype, layout, device, memory_config, tile=None) -> Tensor:
    dtype = _dtype_arg("ttnn", dtype)
    return from_torch(
        values, dtype=dtype, layout=layout, device=device, memory_config=memory_config, tile=tile
    )


def _shape(op: str, shape) -> tuple[int, ...]:
    """A tensor shape: non-negative ints, at least one element."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    try:
        items = list(dims)
    except TypeError:
        items = None
    if items is None or not all(
        isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in items
    ):
        raise OpParamError(f"{op}: shape must be a sequence of ints, got {shape!r}")
    out = tuple(int(d) for d in items)
    if any(d < 0 for d in out):
        raise OpShapeError(f"{op}: shape {list(out)} has a negative dimension")
    _check_not_empty(op, out)
    return out


def _constant_pages(
    shape: tuple[int, ...], value, dtype: DataType, layout: Layout, tile: TileShape, align: int
) -> np.ndarray:
    """The pages of a tensor whose elements all equal ``value``, without the elements.

    Each distinct page is encoded once: one row (ROW_MAJOR), or up to four tiles (interior,
    right edge, bottom edge, corner: edge tiles are partly padding).  The result is a
    read-only broadcast view when every page is the same.
    """
    np_type = np.float32 if is_float(dtype) else np.int64

    def encode(h: int, w: int) -> np.ndarray:
        values = _prepare(np.full((h, w), value, dtype=np_type), dtype)
        return encode_pages(values, dtype, layout, tile, 0.0, align)

    if layout == Layout.ROW_MAJOR:
        width = shape[-1] if shape else 1
        rows = math.prod(shape[:-1]) if len(shape) > 1 else 1
        row = encode(1, width)
        return np.broadcast_to(row, (rows, row.shape[1]))
    if len(shape) < 2:
        raise DeviceError("TILE layout needs a tensor of rank 2 or more")
    *batch, h, w = shape
    th, tw = tile.height, tile.width
    edge_h, edge_w = h % th or th, w % tw or tw
    if edge_h == th and edge_w == tw:  # whole tiles: one page repeated
        tile_page = encode(th, tw)
        n = math.prod(batch) * (h // th) * (w // tw)
        return np.broadcast_to(tile_page, (n, tile_page.shape[1]))
    # kind = 2 * (last tile row, partial) + (last tile column, partial)
    unique = np.concatenate(
        [encode(th, tw), encode(th, edge_w), encode(edge_h, tw), encode(edge_h, edge_w)]
    )
    rows_t, cols_t = -(-h // th), -(-w // tw)
    row_kind = np.zeros(rows_t, dtype=np.intp)
    col_kind = np.zeros(cols_t, dtype=np.intp)
    row_kind[-1] = 2 if edge_h != th else 0
    col_kind[-1] = 1 if edge_w != tw else 0
    kinds = (row_kind[:, None] + col_kind[None, :]).reshape(-1)
    return unique[np.tile(kinds, math.prod(batch))]


def _constant(op: str, shape, value, dtype, layout, device, memory_config, tile) -> Tensor:
    dtype = _dtype_arg(op, dtype if dtype is not None else DataType.BFLOAT16)
    layout = _layout_arg(op, layout if layout is not None else Layout.ROW_MAJOR)
    dims = _shape(op, shape)
    tshape = _tile_shape(tile)
    align = device.dram_alignment if isinstance(device, Device) else 32
    pages = _constant_pages(dims, value, dtype, layout, tshape, align)
    if device is None:
        storage = pages if pages.flags.writeable else pages.copy()  # not a broadcast view
        return Tensor(storage, dims, dtype, layout, tshape)
    # The broadcast view goes straight to the device buffer (no host copy of the tensor).
    host = Tensor(pages, dims, dtype, layout, tshape)
    return place_on_device(host, device, memory_config or DRAM_MEMORY_CONFIG)


@at_user_call
def rand(
    shape,
    *,
    device=None,
    dtype=DataType.BFLOAT16,
    layout=Layout.TILE,
    memory_config=DRAM_MEMORY_CONFIG,
    low: float = 0.0,
    high: float = 1.0,
    seed: int = 0,
    tile=None,
) -> Tensor:
    """Uniform values in [low, high) (numpy's PCG64 with ``seed``; not bit-equal to ttnn's RNG)."""
    rng = np.random.default_rng(seed)
    values = rng.uniform(low, high, size=_shape("ttnn.rand", shape)).astype(np.float32)
    return _make(values, dtype, layout, device, memory_config, tile)


@at_user_call
def randn(
    shape,
    *,
    device=None,
    dtype=DataType.BFLOAT16,
    layout=Layout.TILE,
    memory_config=DRAM_MEMORY_CONFIG,
    seed: int | None = None,
    tile=None,
) -> Tensor:
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(size=_shape("ttnn.randn", shape)).astype(np.float32)
    return _make(values, dtype, layout, device, memory_config, tile)


@at_user_call
def full(
    shape,
    fill_value,
    dtype=DataType.BFLOAT16,
    layout=Layout.ROW_MAJOR,
    device=None,
    memory_config=None,
    tile=None,
) -> Tensor:
    return _constant("ttnn.full", shape, fill_value, dtype, layout, device, memory_config, tile)


@at_user_call
def zeros(
    shape,
    dtype=DataType.BFLOAT16,
    layout=Layout.ROW_MAJOR,
    device=None,
    memory_config=None,
    tile=None,
) -> Tensor:
    return _constant("ttnn.zeros", shape, 0, dtype, layout, device, memory_config, tile)


@at_user_call
def ones(
    shape,
    dtype=DataType.BFLOAT16,
    layout=Layout.ROW_MAJOR,
    device=None,
    memory_config=None,
    tile=None,
) -> Tensor:
    return _constant("ttnn.ones", shape, 1, dtype, layout, device, memory_config, tile)


@at_user_call
def empty(
    shape,
    dtype=DataType.BFLOAT16,
    layout=Layout.ROW_MAJOR,
    device=None,
    memory_config=DRAM_MEMORY_CONFIG,
    tile=None,
) -> Tensor:
    """An uninitialised tensor (zero-filled here, so runs stay deterministic)."""
    return _constant("ttnn.empty", shape, 0, dtype, layout, device, memory_config, tile)


def _like(
    ref: Tensor, dtype: object, layout: object, device: object, memory_config: object
) -> tuple[object, object, object, object]:
    """(dtype, layout, device, memory_config): the arguments given, else ``ref``'s."""
    return (
        dtype if dtype is not None else ref.dtype,
        layout if layout is not None else ref.layout,
        device if device is not None else ref.device(),
        memory_config if memory_config is not None else ref.memory_config(),
    )


@at_user_call
def zeros_like(ref: Tensor, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    return full(
        ref.shape, 0, *_like(ref, dtype, layout, device, memory_config), tile=ref.tile_shape
    )


@at_user_call
def ones_like(ref: Tensor, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    return full(
        ref.shape, 1, *_like(ref, dtype, layout, device, memory_config), tile=ref.tile_shape
    )


@at_user_call
def full_like(
    ref: Tensor, fill_value, dtype=None, layout=None, device=None, memory_config=None
) -> Tensor:
    return full(
        ref.shape,
        fill_value,
        *_like(ref, dtype, layout, device, memory_config),
        tile=ref.tile_shape,
    )


@at_user_call
def empty_like(ref: Tensor, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    return zeros_like(ref, dtype, layout, device, memory_config)


@at_user_call
def rand_like(
    ref: Tensor, dtype=None, layout=None, device=None, memory_config=None, seed: int = 0
) -> Tensor:
    d, lay, dev, mc = _like(ref, dtype, layout, device, memory_config)
    return rand(
        ref.shape,
        device=dev,
        dtype=d,
        layout=lay,
        memory_config=mc or DRAM_MEMORY_CONFIG,
        seed=seed,
        tile=ref.tile_shape,
    )
