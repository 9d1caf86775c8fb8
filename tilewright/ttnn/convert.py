"""Moving data into and out of ttnn tensors: from_torch, to_torch, layouts, devices, creation.

Host values are numpy arrays (torch tensors are converted without copies where
possible; a bf16 torch tensor widens exactly to float32, so its bits are kept).
Float → bfloat16 rounds to nearest even, block floats use tt-metal's host packer
(``tilewright.device.formats``).  Device placement allocates an interleaved or
sharded ``Buffer`` from the memory config and writes the pages.

Tensors have at least one element: a shape with a zero dimension is refused with the
user's file and line (a device buffer of no pages cannot be allocated).  Every public
function here points its errors at the user's call (:mod:`located`).  The creation
functions are in :mod:`creation`, the mesh-aware entry points in :mod:`distributed`.
"""

from __future__ import annotations

import math

import numpy as np

from tilewright.device.buffer import Buffer, BufferType, ShardSpecBuffer
from tilewright.device.device import Device
from tilewright.device.formats import DATA_TYPE_NAMES, TtnnDataType, data_type_name, element_size
from tilewright.device.ops import OpParamError, OpShapeError
from tilewright.errors import DeviceError, user_location
from tilewright.lazy import torch
from tilewright.ttnn import readback
from tilewright.ttnn.located import at_user_call
from tilewright.ttnn.mesh_tensor import MeshTensor
from tilewright.ttnn.tensor import Tensor, _tile_shape, encode_pages
from tilewright.ttnn.types import (
    DRAM_MEMORY_CONFIG,
    DataType,
    Layout,
    MemoryConfig,
    as_data_type,
    as_layout,
    data_format_of,
    is_float,
)

__all__ = [
    "from_torch",
    "host_values",
    "dtype_arg",
    "layout_arg",
    "check_not_empty",
    "values_to_torch",
    "to_numpy",
    "to_device",
    "from_device",
    "to_layout",
    "to_memory_config",
    "typecast",
    "deallocate",
    "place_on_device",
    "host_slice",
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
    return torch  # an optional dependency: imported on first use


def host_values(data) -> tuple[np.ndarray, DataType]:
    """(numpy values, the ttnn dtype they default to)."""
    if isinstance(data, np.ndarray) or np.isscalar(data):
        arr = np.asarray(data)
        if arr.size == 0:
            raise DeviceError(f"an array of shape {arr.shape} holds no values")
        if arr.dtype.name == "bfloat16":  # ml_dtypes
            return arr.astype(np.float32), DataType.BFLOAT16
        if arr.dtype not in _NUMPY_TO_TTNN:
            raise DeviceError(f"numpy dtype {arr.dtype} has no ttnn data type")
        return arr, _NUMPY_TO_TTNN[arr.dtype]
    torch = _torch()
    if not isinstance(data, torch.Tensor):
        raise DeviceError(f"expected a torch tensor or numpy array, got {type(data).__name__}")
    if data.numel() == 0:
        raise DeviceError(f"a tensor of shape {tuple(data.shape)} holds no values")
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
            raise DeviceError(f"non-integer values cannot be stored as {data_type_name(dtype)}")
        return values.astype(np.int64)
    return values


def dtype_arg(op: str, dtype) -> DataType:
    """``dtype`` as a ttnn DataType (``types.as_data_type``: ttnn types, names, torch dtypes);
    an OpParamError naming ``op`` otherwise."""
    try:
        return as_data_type(dtype)
    except DeviceError as exc:
        raise OpParamError(f"{op}: dtype must be a ttnn.DataType: {exc.message}") from None


def layout_arg(op: str, layout) -> Layout:
    """``layout`` as a ttnn Layout; an OpParamError naming ``op`` otherwise."""
    try:
        return as_layout(layout)
    except DeviceError:
        raise OpParamError(
            f"{op}: layout must be ttnn.ROW_MAJOR_LAYOUT or ttnn.TILE_LAYOUT, got {layout!r}"
        ) from None


def check_not_empty(op: str, shape: tuple[int, ...]) -> None:
    """Refuse a shape with no elements (a device buffer of no pages cannot be allocated)."""
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
    cq_id=None,
    **_ignored,
) -> Tensor:
    """Make a single-device ttnn tensor from a torch tensor or numpy array.

    ``ttnn.from_torch`` is :func:`tilewright.ttnn.distributed.from_torch`, which sends mesh
    mappers and mesh devices to the mesh path and everything else here.
    """
    values, default = host_values(tensor)
    check_not_empty("ttnn.from_torch", values.shape)
    dtype = dtype_arg("ttnn.from_torch", dtype) if dtype is not None else default
    if device is not None and not hasattr(device, "dram_alignment"):
        raise DeviceError(
            f"device must be a ttnn device (ttnn.open_device(...)), got {type(device).__name__}"
        )
    layout = layout_arg("ttnn.from_torch", layout) if layout is not None else Layout.ROW_MAJOR
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


def _torch_dtype(dtype: DataType):
    """The torch dtype that holds every value of ``dtype`` exactly (the names table)."""
    return getattr(_torch(), DATA_TYPE_NAMES[TtnnDataType(int(dtype))].torch)


def values_to_torch(values: np.ndarray, tensor: Tensor, dtype=None, torch_rank=None):
    """``values`` (the logical values of ``tensor``) as a torch tensor of ``dtype``.

    bfloat8_b / bfloat4_b come back as float32, uint32 as int64 and uint16 as int32
    so that every value is exact.
    """
    torch = _torch()
    out = torch.from_numpy(np.ascontiguousarray(values).reshape(values.shape))
    target = dtype if dtype is not None else _torch_dtype(tensor.dtype)
    if not isinstance(target, torch.dtype):
        raise DeviceError(f"to_torch(dtype=...) takes a torch dtype, got {target!r}")
    out = out.to(target)
    if torch_rank is not None:
        while out.dim() > torch_rank and out.shape[0] == 1:
            out = out.squeeze(0)
    return out


def to_numpy(tensor: Tensor) -> np.ndarray:
    return readback.note(tensor.to_numpy())


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
    """A single-device copy of ``tensor`` on ``device`` (the mesh-aware ``ttnn.to_device``
    is :func:`tilewright.ttnn.distributed.to_device`)."""
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
    dtype = dtype_arg("ttnn", dtype) if dtype is not None else tensor.dtype
    layout = layout_arg("ttnn", layout) if layout is not None else tensor.layout
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
    layout = layout_arg("ttnn.to_layout", layout)
    if layout == tensor.layout and dtype in (None, tensor.dtype) and memory_config is None:
        return tensor
    if isinstance(tensor, MeshTensor):
        return tensor.map_shards(lambda t: to_layout(t, layout, dtype, memory_config, pad_value))
    return _rebuild(
        tensor, tensor.to_numpy(), dtype=dtype, layout=layout, memory_config=memory_config
    )


@at_user_call
def to_memory_config(
    tensor: Tensor, memory_config: MemoryConfig, dtype: DataType | None = None
) -> Tensor:
    if tensor.device() is None:
        raise DeviceError("to_memory_config needs a device tensor")
    if isinstance(tensor, MeshTensor):
        return tensor.map_shards(lambda t: to_memory_config(t, memory_config, dtype))
    return _rebuild(tensor, tensor.to_numpy(), dtype=dtype, memory_config=memory_config)


@at_user_call
def typecast(tensor: Tensor, dtype: DataType, **_ignored) -> Tensor:
    dtype = dtype_arg("ttnn.typecast", dtype)
    if isinstance(tensor, MeshTensor):
        return tensor.map_shards(lambda t: typecast(t, dtype))
    return _rebuild(tensor, tensor.to_numpy(), dtype=dtype)


@at_user_call
def deallocate(tensor: Tensor, force: bool = True) -> None:
    tensor.deallocate()


def host_slice(tensor: Tensor, key) -> Tensor:
    """Host-side ``tensor[key]`` in element units (ttnn.slice semantics)."""
    parts = key if isinstance(key, tuple) else (key,)
    for part in parts:
        if not (
            isinstance(part, slice)
            or part is Ellipsis
            or (isinstance(part, (int, np.integer)) and not isinstance(part, bool))
        ):
            raise OpParamError(
                f"tensor[...]: an index is an int, a slice or ..., got {type(part).__name__} "
                f"{part!r}",
                loc=user_location(),
            )
    try:
        values = tensor.to_numpy()[key]
    except IndexError as exc:
        raise OpParamError(f"tensor[...]: {exc}", loc=user_location()) from None
    if values.size == 0:
        raise OpShapeError(
            f"tensor[{key!r}] of a {list(tensor.shape)} tensor selects no elements; a ttnn "
            "tensor holds at least one",
            loc=user_location(),
        )
    if tensor.layout == Layout.TILE and values.ndim < 2:
        values = values.reshape((1,) * (2 - values.ndim) + values.shape)
    return _rebuild(tensor, np.ascontiguousarray(values))
