"""Host tensors passed to an operation: staged on its device, results written back.

tt-lang's simulator has no host/device split (every tensor is a torch tensor), so
programs written against it pass ``ttnn.from_torch(...)`` results without
``device=`` straight to an operation.  Tilewright accepts them the same way: each
host tensor argument is copied to the operation's device (the device of the other
tensor arguments, or the one open device) in its own layout and data type, the
operation runs on the copies, and afterwards the copies' contents are written back
into the host tensors and the copies are freed -- so an output passed as a host
tensor holds the result, as in the simulator.  On hardware ttnn would reject such a
call (``docs/compatibility.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tilewright.errors import InterfaceError, SourceLoc
from tilewright.ttnn import chips
from tilewright.ttnn.convert import to_device
from tilewright.ttnn.tensor import Tensor

__all__ = ["stage"]


def _nothing() -> None:
    return None


def stage(
    op_name: str, params: Sequence[str], args: Sequence[object], loc: SourceLoc | None
) -> tuple[tuple[object, ...], Callable[[], None]]:
    """``(args with host tensors on the device, write_back)``; ``write_back()`` after the run."""
    hosts = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.device() is None]
    if not hosts:
        return tuple(args), _nothing
    device = next(
        (a.device() for a in args if isinstance(a, Tensor) and a.device() is not None), None
    )
    if device is None:
        device = _the_open_device(op_name, params[hosts[0]], loc)

    staged = list(args)
    for i in hosts:
        host = args[i]
        assert isinstance(host, Tensor)
        staged[i] = to_device(host, device)

    def write_back() -> None:
        for i in hosts:
            host, copy = args[i], staged[i]
            assert isinstance(host, Tensor) and isinstance(copy, Tensor)
            host.replace_pages(copy.host_pages().copy().reshape(host.host_pages().shape))
            copy.deallocate()

    return tuple(staged), write_back


def _the_open_device(op_name: str, param: str, loc: SourceLoc | None):
    devices = chips.open_devices()
    if len(devices) == 1:
        return devices[0]
    what = "no device is open" if not devices else f"{len(devices)} devices are open"
    raise InterfaceError(
        f"operation '{op_name}': runtime argument '{param}' is a host tensor and no other tensor "
        f"names the device to run on, but {what}",
        loc=loc,
        hint="open one device with ttnn.open_device(device_id=0), or create the tensors with "
        "ttnn.from_torch(..., device=device)",
    )
