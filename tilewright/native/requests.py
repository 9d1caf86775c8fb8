"""What native kernels ask Python for: the few kernel-API services only Python has.

A native kernel hands control back with a *request* (a name and up to 16 integer
arguments, ``tw::call`` / ``twrt_request`` in C++); the engine runs the handler here
with the kernel's run as ``ACTIVE.run`` and resumes the fiber with the result.  No
Python code runs on a fiber stack.  Handlers:

* ``observe`` -- a CB protocol action of an external call, shown to the call's
  contract monitor before it happens;
* ``extern_call`` -- a compiled kernel's external call begins (its kernel's
  ``extern_call`` hook returns the call's contract observer), ends, or let a C++
  exception escape (the hook checks the contract and raises);
* ``dprint`` -- one DPRINT statement, printed with tt-metal's dprint-server prefix; a
  TT-Lang ``print`` compiled to DPRINT (its stream starts with ``TTLANG_PRINT()``, mode
  argument 1) is printed once, as the interpreter prints it: ``[<place> <kernel>] text``;
* ``map_dram`` -- map a DRAM channel on first touch;
* ``accessor_describe`` -- the TensorAccessor of a tensor passed to an external call;
* ``pack_int_error`` -- the FormatError of a value an integer format cannot hold;
* ``sfpu_round`` -- numpy's round on a DST tile (its corner cases are numpy's);
* ``sfpu_typecast`` -- ``typecast_tile<IN, OUT>`` on a DST tile (the registry's typecast);
* ``zone`` -- a device-profiler marker (``tools/profiler/kernel_profiler.hpp``): a zone's
  start clock, then its span on the trace, or an instant event;
* ``trace_block`` / ``trace_wait`` / ``trace_span`` -- ``tilewright run --trace`` only (the
  runtime asks only while the engine header's ``trace`` flag is set): a native run blocks
  (its wait described now, as the interpreter's ``Engine.block`` does), a woken run's
  ``wait`` span (recorded by the waker, as ``Engine.make_ready`` does), and a span of
  compiled code (``copy``, ``signpost``: the KIR ``trace.span`` op).
"""

from __future__ import annotations

import ctypes
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from tilewright.device.formats.dataformat import as_data_format
from tilewright.device.formats.plain import to_integer
from tilewright.device.ops.tile_ops import typecast_tile_values
from tilewright.device.print_hook import line_prefix
from tilewright.device.shared import WaitKind
from tilewright.errors import KernelError, SourceLoc
from tilewright.native.accessors import CallTables, describe

if TYPE_CHECKING:
    from tilewright.device.engine import KernelRun

__all__ = ["serve", "HANDLERS", "describe_native_wait", "span_args"]

_KINDS = ("reserve", "push", "wait", "pop")

_RISC = {"brisc": "BR", "ncrisc": "NC"}


def _observe(run, args, tables: CallTables) -> int:
    observer = tables.observers.get(run.index)
    if observer is not None:
        observer(_KINDS[args[0]], int(args[1]), int(args[2]))
    return 0


def _extern_call(run, args, tables: CallTables) -> int:
    """(phase, contract note, value): phase 0 before the call, 1 after it, 2 when a C++
    exception escaped it (value: the address of its text)."""
    hook = getattr(run.fn, "extern_call", None)
    if hook is None:
        raise KernelError(
            f"native kernel {run.name} announced an external call, but it is not a compiled "
            "TT-Lang kernel (only those have contract notes)"
        )
    phase, contract, value = int(args[0]), int(args[1]), int(args[2])
    tables.observers.pop(run.index, None)
    text = ctypes.string_at(value).decode("utf-8", "replace") if phase == 2 else None
    observer = hook(run, phase, contract, value, text)
    if observer is not None:
        tables.observers[run.index] = observer
    return 0


def _dprint(run, args, _tables: CallTables) -> int:
    text = ctypes.string_at(args[0]).decode("utf-8", "replace")
    if args[2] == 1:
        # a compiled TT-Lang print: its text ends with ENDL's newline, as print's end
        sys.stdout.write(f"{line_prefix(run)} {text}")
        return 0
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


def _sfpu_typecast(run, args, _tables: CallTables) -> int:
    tile = np.ctypeslib.as_array(
        ctypes.cast(int(args[0]), ctypes.POINTER(ctypes.c_float)), shape=(1024,)
    )
    tile[:] = typecast_tile_values(tile, int(args[1]), int(args[2]))
    return 0


_ZONE_BEGIN, _ZONE_END, _ZONE_DATA, _ZONE_EVENT = range(4)


def _clock(run) -> int:
    """The run's clock now: a native run's lives in its shared state while it runs."""
    return int(run.state.clock) if run.native is not None else int(run.clock)


def _zone(run, args, _tables: CallTables) -> int:
    """``DeviceZoneScopedN`` and friends: (phase, name pointer, start clock or value)."""
    phase = int(args[0])
    if phase == _ZONE_BEGIN:
        return _clock(run)
    tracer = run.engine.tracer
    if tracer is None:
        return 0
    if phase == _ZONE_EVENT:
        tracer.instant(run, f"event {int(args[2])}")
        return 0
    name = ctypes.string_at(int(args[1])).decode("utf-8", "replace")
    if phase == _ZONE_END:
        tracer.span(run, f"zone {name}", int(args[2]), _clock(run))
    else:
        tracer.instant(run, f"zone {name}", {"data": int(args[2])})
    return 0


def _trace_block(run, _args, _tables: CallTables) -> int:
    if run.engine.tracer is not None:
        run.wait_desc = describe_native_wait(run)[0]
    return 0


def _trace_wait(run, args, _tables: CallTables) -> int:
    """(woken run index, its wait's start, the waker's clock)."""
    tracer = run.engine.tracer
    if tracer is not None:
        woken = run.engine.runs[int(args[0])]
        tracer.span(woken, "wait", int(args[1]), int(args[2]), {"on": woken.wait_desc})
    return 0


def span_args(key: str, text: str) -> dict | None:
    """A compiled span's arguments: ``{key: text}``; none for key ""; key ``*``: the text
    is the JSON object of the arguments (several, or numbers)."""
    if key == "*":
        return json.loads(text)
    return {key: text} if key else None


def _trace_span(run, args, _tables: CallTables) -> int:
    """(name, start clock, argument key, argument text): a span from start to now."""
    tracer = run.engine.tracer
    if tracer is not None:
        name = ctypes.string_at(int(args[0])).decode("utf-8", "replace")
        key = ctypes.string_at(int(args[2])).decode("utf-8", "replace")
        text = ctypes.string_at(int(args[3])).decode("utf-8", "replace")
        tracer.span(run, name, int(args[1]), _clock(run), span_args(key, text))
    return 0


_WAIT_VERBS = {WaitKind.CB_RESERVE: "reserve", WaitKind.CB_WAIT: "wait"}


def describe_native_wait(run: KernelRun) -> tuple[str, SourceLoc | None]:
    """What a blocked native run waits for, and the C++ line that waits."""
    st = run.state
    kind = st.wait_kind
    loc = None
    if st.src_file:
        loc = SourceLoc(ctypes.string_at(st.src_file).decode("utf-8", "replace"), st.src_line)
    # A language layer may describe its kernel's waits in its own words (TT-Lang: DFBs).
    describe = getattr(run.fn, "describe_wait", None)
    if describe is not None:
        text = describe(run, int(kind), int(st.wait_obj), int(st.wait_a), loc)
        if text is not None:
            return text, loc
    if kind in _WAIT_VERBS:
        cb = run.core.cbs[st.wait_obj]
        if cb is None:
            return f"circular buffer {st.wait_obj} (not configured)", loc
        return cb.describe_wait((_WAIT_VERBS[kind], st.wait_a)), loc
    if kind in (WaitKind.SEM_EQ, WaitKind.SEM_GE):
        current = int(run.core.l1_words(st.wait_obj)[0])
        rel = "==" if kind == WaitKind.SEM_EQ else ">="
        return (
            f"noc_semaphore_wait at L1 {st.wait_obj:#x}: waits for value {rel} {st.wait_a}, "
            f"value is {current}",
            loc,
        )
    return "waiting", loc


HANDLERS: dict[bytes, Callable] = {
    b"observe": _observe,
    b"extern_call": _extern_call,
    b"dprint": _dprint,
    b"map_dram": _map_dram,
    b"accessor_describe": _accessor_describe,
    b"pack_int_error": _pack_int_error,
    b"sfpu_round": _sfpu_round,
    b"sfpu_typecast": _sfpu_typecast,
    b"zone": _zone,
    b"trace_block": _trace_block,
    b"trace_wait": _trace_wait,
    b"trace_span": _trace_span,
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
