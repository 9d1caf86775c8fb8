"""What native kernels ask Python for: the few kernel-API services only Python has.

A native kernel hands control back with a *request* (a name and up to 16 integer
arguments, ``tw::call`` / ``twrt_request`` in C++); the engine runs the handler here
with the kernel's run as ``ACTIVE.run`` and resumes the fiber with the result.  No
Python code runs on a fiber stack.  Handlers:

* ``observe`` -- a CB protocol action of an external call, shown to the call's
  contract monitor before it happens;
* ``dprint`` -- one DPRINT statement, printed with tt-metal's dprint-server prefix;
* ``map_dram`` -- map a DRAM channel on first touch;
* ``accessor_describe`` -- the TensorAccessor of a tensor passed to an external call;
* ``pack_int_error`` -- the FormatError of a value an integer format cannot hold;
* ``sfpu_round`` -- numpy's round on a DST tile (its corner cases are numpy's);
* ``zone`` -- a device-profiler marker (``tools/profiler/kernel_profiler.hpp``): a zone's
  start clock, then its span on the trace, or an instant event.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

import numpy as np

from tilewright.device.formats.dataformat import as_data_format
from tilewright.device.formats.plain import to_integer
from tilewright.errors import KernelError
from tilewright.native.accessors import CallTables, describe

__all__ = ["serve", "HANDLERS"]

_KINDS = ("reserve", "push", "wait", "pop")

_RISC = {"brisc": "BR", "ncrisc": "NC"}


def _observe(run, args, tables: CallTables) -> int:
    observer = tables.observers.get(run.index)
    if observer is not None:
        observer(_KINDS[args[0]], int(args[1]), int(args[2]))
    return 0


def _dprint(run, args, _tables: CallTables) -> int:
    text = ctypes.string_at(args[0]).decode("utf-8", "replace")
    chip = getattr(run.core.device, "chip", 0)
    where = f"{chip}:({run.core.logical.x}, {run.core.logical.y})"
    if run.slot in _RISC:
        riscs = [_RISC[run.slot]]
    elif run.slot.startswith("trisc"):
        riscs = [f"TR{i}" for i in range(3) if args[1] >> i & 1]
    else:
        riscs = [run.slot.upper()]
    lines = text.splitlines() or [""]
    for risc in riscs:
        for line in lines:
            sys.stdout.write(f"{where}:{risc}: {line}\n")
    return 0


def _map_dram(run, args, _tables: CallTables) -> int:
    device = run.core.device
    bank = int(args[0])
    view = device.dram.channel(bank)
    device.shared.info.dram[bank] = view.ctypes.data
    return 0


def _accessor_describe(run, args, tables: CallTables) -> int:
    handle, out = int(args[0]), int(args[1])
    accessor = tables.accessor(run.index, handle)
    if accessor is None:
        raise KernelError(
            f"native code used tensor-accessor handle {handle}, which is not valid here: accessors live "
            "only for the external call that created or received them"
        )
    describe(accessor, out)
    return 0


def _pack_int_error(run, args, _tables: CallTables) -> int:
    fmt = as_data_format(int(args[0]))
    value = np.array([int(args[2]) & 0xFFFFFFFF], dtype=np.uint32).view(np.float32)
    try:
        to_integer(value, fmt)
    except Exception as exc:  # noqa: BLE001 - re-raised with the element's real index
        message = getattr(exc, "message", str(exc)).replace(
            "flat index 0", f"flat index {int(args[1])}"
        )
        raise type(exc)(message) from None
    raise KernelError(f"a value packed into {fmt.name} could not be stored")


def _sfpu_round(run, args, _tables: CallTables) -> int:
    tile = np.ctypeslib.as_array(
        ctypes.cast(int(args[0]), ctypes.POINTER(ctypes.c_float)), shape=(1024,)
    )
    decimals = int(args[1]) & 0xFFFFFFFF
    decimals = decimals - (1 << 32) if decimals >= 1 << 31 else decimals
    with np.errstate(all="ignore"):
        tile[:] = np.round(tile, decimals)
    return 0


_ZONE_BEGIN, _ZONE_END, _ZONE_DATA, _ZONE_EVENT = range(4)


def _zone(run, args, _tables: CallTables) -> int:
    """``DeviceZoneScopedN`` and friends: (phase, name pointer, start clock or value)."""
    phase = int(args[0])
    if phase == _ZONE_BEGIN:
        return int(run.clock)
    tracer = run.engine.tracer
    if tracer is None:
        return 0
    if phase == _ZONE_EVENT:
        tracer.instant(run, f"event {int(args[2])}")
        return 0
    name = ctypes.string_at(int(args[1])).decode("utf-8", "replace")
    if phase == _ZONE_END:
        tracer.span(run, f"zone {name}", int(args[2]), run.clock)
    else:
        tracer.instant(run, f"zone {name}", {"data": int(args[2])})
    return 0


HANDLERS: dict[bytes, Callable] = {
    b"observe": _observe,
    b"dprint": _dprint,
    b"map_dram": _map_dram,
    b"accessor_describe": _accessor_describe,
    b"pack_int_error": _pack_int_error,
    b"sfpu_round": _sfpu_round,
    b"zone": _zone,
}


def serve(rt, handle: int, run, tables: CallTables) -> None:
    """Run the pending request of runtime run ``handle`` (kernel run ``run``; ``tables``:
    what the engine's external calls handed to native code)."""
    argc = ctypes.c_int32()
    args = (ctypes.c_int64 * 16)()
    name = rt.run_request(handle, ctypes.byref(argc), args)
    fn = HANDLERS.get(name or b"")
    if fn is None:
        raise KernelError(
            f"native code asked for {name.decode() if name else '?'!r}, which Tilewright's native "
            "runtime does not provide"
        )
    rt.run_reply(handle, int(fn(run, list(args[: argc.value]), tables) or 0))
