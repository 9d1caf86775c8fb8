"""ttnn device management: open_device, close_device, manage_device, synchronize_device.

``open_device`` builds a virtual :class:`tilewright.device.Device` from a system
descriptor: by default the n150 board preset (device 0) or a chip of the default
multi-chip system (``device_id > 0``, see :mod:`tilewright.ttnn.mesh_device`), or a board
preset by name, or any ``SystemDesc`` / ``SystemDescRoot`` / ``.ttsys``/``.mlir``/``.json``
path.  Chips opened alone or in mesh devices share one registry: a chip is open once.
"""

from __future__ import annotations

import contextlib

from tilewright.device import session
from tilewright.device.device import DEFAULT_L1_SMALL_SIZE, Device
from tilewright.device.engine import EngineOptions
from tilewright.device.mesh import MeshDevice
from tilewright.errors import DeviceError
from tilewright.ttnn.chips import OPEN_LOCK, holder_of, register, unregister
from tilewright.ttnn.located import at_user_call
from tilewright.ttnn.mesh_device import (
    GetNumAvailableDevices,
    check_visible,
    close_mesh_device,
    get_num_devices,
    resolve_system,
)

__all__ = [
    "open_device",
    "close_device",
    "manage_device",
    "synchronize_device",
    "DEFAULT_L1_SMALL_SIZE",
    "GetNumAvailableDevices",
    "get_num_devices",
]


@at_user_call
def open_device(
    *,
    device_id: int = 0,
    l1_small_size: int = DEFAULT_L1_SMALL_SIZE,
    trace_region_size: int = 0,
    dispatch_core_config=None,
    worker_l1_size=None,
    system_desc=None,
    board: str | None = None,
    options: EngineOptions | None = None,
    **_ignored,
) -> Device:
    """Open virtual device ``device_id`` (a chip position of the system descriptor)."""
    with OPEN_LOCK:  # two threads opening the same chip: exactly one succeeds
        return _open(device_id, l1_small_size, system_desc, board, options)


def _open(device_id, l1_small_size, system_desc, board, options) -> Device:
    if not isinstance(device_id, int) or isinstance(device_id, bool):
        raise DeviceError(f"device_id must be an int (a chip of the system), got {device_id!r}")
    held = holder_of(device_id)
    if held is not None:
        raise DeviceError(f"device {device_id} is already open ({held}); close it first")
    system = resolve_system(system_desc, board, multi_chip=device_id > 0)
    if device_id > 0 and system_desc is None and board is None:
        check_visible(system, [device_id])  # --num-devices
    sd = system.system_desc
    n = len(sd.chip_desc_indices)
    if not 0 <= device_id < n:
        raise DeviceError(f"device_id {device_id} does not exist: the system has {n} chip(s)")

    dev = Device(
        sd,
        chip=device_id,
        device_id=device_id,
        l1_small_size=l1_small_size,
        options=options or session.engine_options(),
    )
    register(dev, "opened with open_device")
    return dev


@at_user_call
def close_device(device) -> None:
    """Close a device (a mesh device too, as ``ttnn.close_device`` does)."""
    if not isinstance(device, (Device, MeshDevice)):
        raise DeviceError(
            f"ttnn.close_device takes a device (ttnn.open_device(...)), got {type(device).__name__}"
        )
    if isinstance(device, MeshDevice) or device.mesh is not None:
        # A chip of a mesh closes with its mesh (what the runner's clean-up relies on).
        mesh = device if isinstance(device, MeshDevice) else device.mesh
        assert isinstance(mesh, MeshDevice)
        close_mesh_device(mesh)
        return
    device.close()
    unregister(device)


@contextlib.contextmanager
def manage_device(device_id: int = 0, **kwargs):
    device = open_device(device_id=device_id, **kwargs)
    try:
        yield device
    finally:
        close_device(device)


@at_user_call
def synchronize_device(device: Device, queue_id=None, sub_device_ids=None) -> None:
    device.command_queue.finish()
