"""ttnn tensor creation: ``rand``, ``randn``, ``full``, ``zeros``, ``ones``, ``empty`` and
their ``*_like`` forms, on one device or (with a mesh device) replicated on every chip.

Constant tensors (``full``, ``zeros``, ``ones``, ``empty``) never hold their elements
as a float32 array: each distinct page (one row; or the interior, edge and corner
tiles) is encoded once and repeated, so a device tensor costs its device bytes.  A
shape with a zero dimension is refused at the user's line (``convert.check_not_empty``).
"""

from __future__ import annotations

import math
import os
import resource
import sys

import numpy as np

from tilewright.device.device import Device
from tilewright.device.ops import OpParamError, OpShapeError
from tilewright.errors import DeviceError, OutOfMemoryError
from tilewright.ttnn.convert import (
    _prepare,
    check_not_empty,
    dtype_arg,
    layout_arg,
    place_on_device,
)
from tilewright.ttnn.distributed import from_torch
from tilewright.ttnn.located import at_user_call
from tilewright.ttnn.mesh_tensor import MeshTensor, is_mesh_device
from tilewright.ttnn.tensor import Tensor, TileShape, _tile_shape, encode_pages
from tilewright.ttnn.types import DRAM_MEMORY_CONFIG, DataType, Layout, is_float

__all__ = [
    "rand",
    "randn",
    "full",
    "zeros",
    "ones",
    "empty",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand_like",
]


def _make(values: np.ndarray, dtype, layout, device, memory_config, tile=None) -> Tensor:
    dtype = dtype_arg("ttnn", dtype)
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
    check_not_empty(op, out)
    return out


_HOST_BYTES = 4  # a float32 value per element on the host before encoding
_DRAW_BYTES = 12  # rand / randn: float64 samples and their float32 copy


def _host_memory() -> int:
    """What one more host array may take: the machine's available memory, or less under
    an address-space limit (``ulimit -v``: the limit less what the process maps now)."""
    try:
        room = int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        room = 1 << 40
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft != resource.RLIM_INFINITY:
        try:
            with open("/proc/self/statm") as f:
                mapped = int(f.read().split()[0]) * int(os.sysconf("SC_PAGE_SIZE"))
        except (OSError, ValueError, IndexError):  # pragma: no cover - no procfs
            mapped = 0
        room = min(room, int(soft) - mapped)
    return room


def check_size(
    op: str,
    dims: tuple[int, ...],
    layout: Layout,
    device,
    memory_config,
    per_element: int = _HOST_BYTES,
) -> None:
    """Refuse, before any host allocation, a tensor that cannot exist: larger than the
    memory it is to live in (the device's DRAM or L1, at one byte or more per element),
    or than the host can hold while making it (``per_element`` bytes per element)."""
    tiled = layout == Layout.TILE and len(dims) >= 2
    padded = (*dims[:-2], -(-dims[-2] // 32) * 32, -(-dims[-1] // 32) * 32) if tiled else dims
    need = math.prod(padded) * per_element
    chip = (list(device.devices)[0] if is_mesh_device(device) else device) if device else None
    if isinstance(chip, Device):
        cap = chip.capacity
        l1 = getattr(getattr(memory_config, "buffer_type", None), "name", "") == "L1"
        where, room = (
            ("L1", cap.usable_l1 * chip.grid_x * chip.grid_y)
            if l1
            else ("DRAM", cap.usable_dram_per_channel * cap.num_dram_channels)
        )
        if math.prod(padded) > room:  # at least one byte per element on the device
            raise OutOfMemoryError(
                f"{op}: shape {list(dims)} has {math.prod(dims)} elements; the device's {where} "
                f"holds {room} B",
                hint="split the tensor, or use a smaller shape",
            )
    if need > _host_memory():
        raise OutOfMemoryError(
            f"{op}: shape {list(dims)} needs {need} B on the host; this machine has "
            f"{_host_memory()} B",
            hint="use a smaller shape",
        )


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
    dtype = dtype_arg(op, dtype if dtype is not None else DataType.BFLOAT16)
    layout = layout_arg(op, layout if layout is not None else Layout.ROW_MAJOR)
    dims = _shape(op, shape)
    check_size(op, dims, layout, device, memory_config)
    tshape = _tile_shape(tile)
    chips = list(device.devices) if is_mesh_device(device) else [device]
    align = chips[0].dram_alignment if isinstance(chips[0], Device) else 32
    pages = _constant_pages(dims, value, dtype, layout, tshape, align)
    if device is None:
        storage = pages if pages.flags.writeable else pages.copy()  # not a broadcast view
        return Tensor(storage, dims, dtype, layout, tshape)
    # The broadcast view goes straight to the device buffers (no host copy of the tensor).
    host = Tensor(pages, dims, dtype, layout, tshape)
    config = memory_config or DRAM_MEMORY_CONFIG
    if is_mesh_device(device):  # replicated: the same pages on every chip
        return MeshTensor([place_on_device(host, chip, config) for chip in chips], device)
    return place_on_device(host, device, config)


_STREAM: list[np.random.Generator] = []
"""Tilewright's own stream for unseeded draws when torch is not loaded (fixed seed: runs
repeat), made at its first draw: ``numpy.random`` takes a while to import and most programs
never draw without torch (issue 22: start-up)."""


def _stream() -> np.random.Generator:
    if not _STREAM:
        _STREAM.append(np.random.default_rng(0x5EED))
    return _STREAM[0]


def _draw(kind: str, shape: tuple[int, ...], seed: int | None) -> np.ndarray:
    """Float32 samples, ``kind`` "uniform" ([0, 1)) or "normal".

    A nonzero ``seed`` gives the same values on every call (numpy's PCG64 of the seed).
    Without one (``None`` or ttnn's ``0``) every call draws new values: from torch's global
    generator when torch is loaded -- so ``torch.manual_seed`` makes a program's tensors
    reproducible, as in tt-lang's simulator -- else from Tilewright's own stream.
    """
    if seed:
        rng = np.random.default_rng(seed)
        out = rng.uniform(size=shape) if kind == "uniform" else rng.standard_normal(size=shape)
        return out.astype(np.float32)
    torch = sys.modules.get("torch")
    if torch is not None:
        fn = torch.rand if kind == "uniform" else torch.randn
        return fn(shape, dtype=torch.float32).numpy()
    stream = _stream()
    out = stream.uniform(size=shape) if kind == "uniform" else stream.standard_normal(size=shape)
    return out.astype(np.float32)


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
    seed: int | None = 0,
    tile=None,
) -> Tensor:
    """Uniform values in [low, high).  ``seed`` as ttnn: 0 (the default) or None draws new
    values on every call, any other seed the same values every time (see ``_draw``; the
    values are not bit-equal to ttnn's device RNG)."""
    dims = _shape("ttnn.rand", shape)
    check_size(
        "ttnn.rand", dims, layout_arg("ttnn.rand", layout), device, memory_config, _DRAW_BYTES
    )
    u = _draw("uniform", dims, seed)
    values = (np.float32(low) + np.float32(high - low) * u).astype(np.float32)
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
    """Standard normal values; ``seed`` as in :func:`rand`."""
    dims = _shape("ttnn.randn", shape)
    check_size(
        "ttnn.randn", dims, layout_arg("ttnn.randn", layout), device, memory_config, _DRAW_BYTES
    )
    values = _draw("normal", dims, seed)
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
    ref: Tensor, dtype=None, layout=None, device=None, memory_config=None, seed: int | None = 0
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
