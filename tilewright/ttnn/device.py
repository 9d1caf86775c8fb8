"""ttnn device management: open_device, close_device, manage_device, synchronize_device.

``open_device`` builds a virtual :class:`tilewright.device.Device` from a system
descriptor: by default the n150 board preset, or a board preset by name, or any
``SystemDesc`` / ``SystemDescRoot`` / ``.ttsys``/``.mlir``/``.json`` path.
"""

from __future__ import annotations

import contextlib
import os
import threading

from tilewright.device.device import DEFAULT_L1_SMALL_SIZE, Device
from tilewright.device.engine import EngineOptions
from tilewright.errors import DeviceError, SystemDescError
from tilewright.ttnn.located import at_user_call

__all__ = [
    "open_device",
    "close_device",
    "manage_device",
    "synchronize_device",
    "DEFAULT_L1_SMALL_SIZE",
    "GetNumAvailableDevices",
    "get_num_devices",
]

_OPEN: dict[int, Device] = {}
_OPEN_LOCK = threading.Lock()


def _system_desc(system_desc, board):
    from tilewright import target
    from tilewright.device import session

    if system_desc is None and board is None:
        system_desc, board = session.OPTIONS.system_desc, session.OPTIONS.board
    if system_desc is not None:
        if isinstance(system_desc, (str, os.PathLike)):
            from tilewright.device.requirements import check_runnable

            path = os.fspath(system_desc)
            system_desc = target.read_system_desc(path)
            try:  # the device checks again; here the error can name the file
                check_runnable(system_desc)
            except SystemDescError as err:
                err.add_note(f"in system descriptor {path}")
                raise
        return getattr(system_desc, "system_desc", system_desc)
    name = board or "n150"
    return target.board_preset(name).system_desc


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
    with _OPEN_LOCK:  # two threads opening the same chip: exactly one succeeds
        return _open(device_id, l1_small_size, system_desc, board, options)


def _open(device_id, l1_small_size, system_desc, board, options) -> Device:
    if device_id in _OPEN and not _OPEN[device_id].closed:
        raise DeviceError(f"device {device_id} is already open; close it first")
    sd = _system_desc(system_desc, board)
    n = len(sd.chip_desc_indices)
    if not 0 <= device_id < n:
        raise DeviceError(f"device_id {device_id} does not exist: the system has {n} chip(s)")
    from tilewright.device import session

    dev = Device(
        sd,
        chip=device_id,
        device_id=device_id,
        l1_small_size=l1_small_size,
        options=options or session.engine_options(),
    )
    _OPEN[device_id] = dev
    return dev


def open_devices() -> list[Device]:
    """Devices opened by ``open_device`` and not closed yet."""
    return [d for d in _OPEN.values() if not d.closed]


@at_user_call
def close_device(device: Device) -> None:
    device.close()
    if _OPEN.get(device.device_id) is device:
        del _OPEN[device.device_id]


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


@at_user_call
def GetNumAvailableDevices(system_desc=None, board=None) -> int:  # noqa: N802
    return len(_system_desc(system_desc, board).chip_desc_indices)


get_num_devices = GetNumAvailableDevices
