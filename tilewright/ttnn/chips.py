"""The open-chip registry: which chips are open now, and how (alone or in a mesh).

A chip is open once: ``open_device`` and ``open_mesh_device`` both register the chips
they open here and refuse a chip that is already held.  Kept apart from both so that
neither module imports the other for it.  Openers hold ``OPEN_LOCK`` from the check to
the registration, so two threads opening the same chip cannot both succeed.
"""

from __future__ import annotations

import threading

from tilewright.device.device import Device

__all__ = ["OPEN_LOCK", "holder_of", "register", "unregister", "open_devices"]

OPEN_LOCK = threading.RLock()
"""Held by ``open_device`` / ``open_mesh_device`` from checking a chip to registering it."""

_OPEN: dict[int, tuple[Device, str]] = {}  # device id -> (open chip, how it was opened)


def holder_of(device_id: int) -> str | None:
    """How chip ``device_id`` is open now ("opened with open_device", ...), or None."""
    held = _OPEN.get(device_id)
    return held[1] if held is not None and not held[0].closed else None


def register(device: Device, how: str) -> None:
    _OPEN[device.device_id] = (device, how)


def unregister(device: Device) -> None:
    held = _OPEN.get(device.device_id)
    if held is not None and held[0] is device:
        del _OPEN[device.device_id]


def open_devices() -> list[Device]:
    """Chips opened (alone or in a mesh) and not closed yet."""
    return [d for d, _how in _OPEN.values() if not d.closed]
