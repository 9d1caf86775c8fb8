"""``ttnn.reports``: what a device offers and which buffers it holds (ttnn's memory reports).

ttnn's ``reports`` module (``ttnn._ttnn.reports``, tt-metal ``ttnn/reports.hpp``) answers
two questions about an open device, and compilers ask them before every operation --
tt-lang's compiler sizes its circular-buffer budget from ``get_device_info(device).cb_limit``
minus the L1 buffer bytes ``get_buffer_pages(device)`` lists on the busiest core:

* :func:`get_device_info` -- the grid, L1 size and banks, and ``cb_limit``, the bytes from the
  first address circular buffers may use to the end of the region they share with L1
  buffers.  On Tilewright's device that region is ``[l1_unreserved_base, l1_size -
  l1_small_size)`` (``device.device`` docstring): the same figure Tilewright's own compiler
  starts its budget from (``compiler/dfb_alloc.l1_budget``);
* :func:`get_buffers` / :func:`get_buffer_pages` -- every allocated buffer (all memories) and
  every page of every L1 buffer: device, core, bank, page address and size.

Tilewright has no storage-only cores: every L1 bank is one worker core's L1.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tilewright.device.buffer import BufferType, TensorMemoryLayout
from tilewright.device.device import Device
from tilewright.device.mesh import MeshDevice
from tilewright.errors import DeviceError
from tilewright.ttnn import chips

__all__ = [
    "DeviceInfo",
    "BufferInfo",
    "BufferPageInfo",
    "get_device_info",
    "get_buffers",
    "get_buffer_pages",
]


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    """ttnn ``reports.DeviceInfo``: one chip's grid and L1 (all sizes in bytes)."""

    num_y_cores: int
    num_x_cores: int
    num_y_compute_cores: int
    num_x_compute_cores: int
    worker_l1_size: int
    l1_num_banks: int
    l1_bank_size: int
    address_at_first_l1_bank: int
    address_at_first_l1_cb_buffer: int
    num_banks_per_storage_core: int
    num_compute_cores: int
    num_storage_cores: int
    total_l1_memory: int
    total_l1_for_tensors: int
    total_l1_for_interleaved_buffers: int
    total_l1_for_sharded_buffers: int
    cb_limit: int


@dataclass(frozen=True, slots=True)
class BufferInfo:
    """ttnn ``reports.BufferInfo``: one allocated buffer."""

    device_id: int
    address: int
    max_size_per_bank: int
    buffer_type: BufferType


@dataclass(frozen=True, slots=True)
class BufferPageInfo:
    """ttnn ``reports.BufferPageInfo``: one page of an L1 buffer and the core holding it."""

    device_id: int
    address: int
    core_y: int
    core_x: int
    bank_id: int
    page_index: int
    page_address: int
    page_size: int
    buffer_type: BufferType


def _chips(devices) -> list:
    """The chips a report covers: one device, a mesh device, several, or (None) all open."""
    if devices is None:
        devices = chips.open_devices()
    items: Iterable = [devices] if isinstance(devices, (Device, MeshDevice)) else devices
    out: list = []
    for item in items:
        if isinstance(item, MeshDevice):
            out.extend(item.get_devices())
        elif isinstance(item, Device):
            out.append(item)
        else:
            raise DeviceError(
                f"ttnn.reports: {item!r} is not a device (give ttnn.open_device(...) or "
                "ttnn.open_mesh_device(...), or a list of them)"
            )
    return out


def get_device_info(device) -> DeviceInfo:
    """The grid and L1 of ``device`` (a mesh device: of its first chip; all chips of a mesh
    have the same worker L1)."""
    chips = _chips(device)
    if len(chips) == 0:
        raise DeviceError("ttnn.reports.get_device_info: no device")
    dev = chips[0]
    cores = dev.grid_x * dev.grid_y
    bank_size = dev.l1_allocator.capacity
    return DeviceInfo(
        num_y_cores=dev.grid_y,
        num_x_cores=dev.grid_x,
        num_y_compute_cores=dev.grid_y,
        num_x_compute_cores=dev.grid_x,
        worker_l1_size=dev.l1_size,
        l1_num_banks=dev.num_l1_banks,
        l1_bank_size=bank_size,
        address_at_first_l1_bank=dev.l1_allocator.base,
        address_at_first_l1_cb_buffer=dev.l1_unreserved_base,
        num_banks_per_storage_core=dev.l1_size // bank_size if bank_size else 0,
        num_compute_cores=cores,
        num_storage_cores=0,
        total_l1_memory=cores * dev.l1_size,
        total_l1_for_tensors=cores * bank_size,
        total_l1_for_interleaved_buffers=cores * bank_size,
        total_l1_for_sharded_buffers=cores * bank_size,
        cb_limit=dev.l1_buffer_end - dev.l1_unreserved_base,
    )


def _live(chips) -> Iterable:
    for dev in chips:
        for buf in list(dev.buffers.values()):
            if buf.allocated:
                yield dev, buf


def get_buffers(devices=None) -> list[BufferInfo]:
    """Every allocated buffer of ``devices`` (default: every open device)."""
    out = []
    for dev, buf in _live(_chips(devices)):
        per_bank = -(-buf.num_pages // buf.num_banks) * buf.page_size
        if buf.layout != TensorMemoryLayout.INTERLEAVED:
            sr, sc = buf.shard.shard_shape_in_pages
            per_bank = sr * sc * buf.page_size
        out.append(BufferInfo(dev.device_id, buf.address, per_bank, buf.buffer_type))
    return out


def get_buffer_pages(devices=None) -> list[BufferPageInfo]:
    """Every page of every L1 buffer of ``devices`` (default: every open device)."""
    out = []
    for dev, buf in _live(_chips(devices)):
        if buf.buffer_type not in (BufferType.L1, BufferType.L1_SMALL):
            continue
        for page in range(buf.num_pages):
            core, addr = buf.page_location(page)
            out.append(
                BufferPageInfo(
                    device_id=dev.device_id,
                    address=buf.address,
                    core_y=core.logical.y,
                    core_x=core.logical.x,
                    bank_id=core.index,
                    page_index=page,
                    page_address=addr,
                    page_size=buf.page_size,
                    buffer_type=buf.buffer_type,
                )
            )
    return out
