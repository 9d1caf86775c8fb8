"""The engine's native driver: native kernel runs as fibers of the runtime library.

One :class:`Driver` per engine (``driver_for(engine)``).  For a launch it creates the
runtime's engine over the launch's shared run table and ready ring, one runtime run
per native kernel run (its core, arguments, compute configuration and entry point),
and then answers the engine's :class:`~tilewright.device.engine.NativeDriver` calls:
``resume`` runs native fibers back to back in C++, ``serve`` executes a request a
native kernel made (:mod:`.requests`), ``error`` turns a failed run's record into the
exception Python raises, ``describe_wait`` explains a blocked native run in a deadlock
report, ``interrupt`` stops a fiber that never hands back (the watchdog's livelock).

Threads: the runtime runs native code in one thread at a time (runtime/interrupt.cpp)
and Python calls it with the GIL released, so launches of several threads (each on its
own device) interleave their native code safely while their Python keeps running.
What external calls hand to native code (tensor accessors, contract observers) is kept
per driver (:class:`~.accessors.CallTables`), that is per engine and launch.

Python kernels that call native code (``ttl.call_extern_func``) run it as a *hosted*
run on the same runtime engine (:meth:`Driver.hosted`): it blocks, wakes and reports
exactly like a native kernel, and its Python kernel waits in the engine meanwhile.
"""

from __future__ import annotations

import ctypes
import itertools
import signal
import threading
import weakref
from typing import TYPE_CHECKING

from tilewright.device.api_messages import ERROR_CLASSES, MESSAGES, render_placeholders
from tilewright.device.engine import NativeDriver
from tilewright.device.kernel_api.compute import dst_tiles
from tilewright.device.noc import chips_with_tag
from tilewright.device.shared import DeviceInfo, RunSpec
from tilewright.errors import (
    KernelError,
    NativeCrashError,
    SourceLoc,
    TilewrightError,
)
from tilewright.native import faults, requests
from tilewright.native.accessors import CallTables
from tilewright.native.crash_slot import CRASH, NATIVE_KERNELS
from tilewright.native.requests import describe_native_wait
from tilewright.native.runtime import Runtime, library

if TYPE_CHECKING:
    from tilewright.device.engine import Engine, KernelRun

__all__ = ["Driver", "driver_for", "device_info", "Status"]


class Status:
    """Fiber states reported by the runtime (twrt.h ``Status``)."""

    RUNNING = 0
    BLOCKED = 1
    DONE = 2
    REQUEST = 3
    FAILED = 4


_CODES = {c.name: c.code for c in ERROR_CLASSES}
ERR_DEADLOCK, ERR_CPP = _CODES["DEADLOCK"], _CODES["CPP"]
ERR_FAULT, ERR_INTERRUPT, ERR_EXIT = _CODES["FAULT"], _CODES["INTERRUPT"], _CODES["EXIT"]
ERR_ASSERT, ERR_L1 = _CODES["ASSERT"], _CODES["L1"]
"""Error classes of a failed run that build their own report (device/api_messages.py)."""

_ERROR_CLASSES: dict[int, type[TilewrightError]] = {c.code: c.exception for c in ERROR_CLASSES}
_MESSAGES = list(MESSAGES.values())  # by id - 1 (native/headers.py message_ids)


_SERIALS = itertools.count(1)


def device_info(device) -> DeviceInfo:
    """The device's ``DeviceInfo`` for native code (filled on first use)."""
    info: DeviceInfo = device.shared.info
    if info.l1_size:
        return info
    # The identity window remembers which device it shows by serial: a closed device's
    # DeviceInfo address (and memfd number) can be reused by the next device.
    info.serial = next(_SERIALS)
    info.chip = device.chip
    info.l1_size = device.l1_size
    info.l1_slot = device.l1.slot_size
    info.l1_base = device.l1.base
    info.l1_fd = device.l1.fd
    info.l1_alignment = device.l1_alignment
    info.dram_alignment = device.dram_alignment
    info.num_dram = device.num_dram_channels
    info.dram_size = device.dram.size
    info.dram_noc_y = device.dram_noc_coord(0)[1]
    info.sem_base = device.semaphore_address(0)
    for i in range(64 * 64):
        info.noc_map[i] = -1
    for core in device.cores:
        info.noc_map[core.noc_y * 64 + core.noc_x] = core.index
    for bank in range(device.num_dram_channels):
        x, y = device.dram_noc_coord(bank)
        info.noc_map[y * 64 + x] = -2 - bank
    return info


class _Native:
    """A native run's runtime handle and what keeps its memory alive."""

    __slots__ = ("handle", "keep")

    def __init__(self, handle: int, keep: tuple) -> None:
        self.handle = handle
        self.keep = keep


class Driver(NativeDriver):
    """Runs the native kernels of one engine's launches."""

    def __init__(self, engine: Engine) -> None:
        self._engine_ref = weakref.ref(engine)
        self.rt: Runtime = library()
        self.cengine: int | None = None
        self.runs: dict[int, _Native] = {}  # run index -> runtime run (native and hosted)
        self.engine: Engine | None = None
        self.tables = CallTables()
        self.handles: ctypes.Array[ctypes.c_void_p] = _NO_HANDLES  # run index -> runtime run
        self.keep: object = ()  # the run descriptions of the attached launch

    # -- the engine protocol -----------------------------------------------------------------

    def attach(self, engine: Engine, runs: list[KernelRun], cache: dict | None = None) -> None:
        """Create the runtime's engine and one runtime run per native run, in one call per
        device (``twrt_runs_new``).  ``cache``: kept between launches of one launch plan
        (device/launch.py), so a warm launch reuses the run descriptions."""
        self.engine = engine
        self.cengine = self.rt.engine_new(ctypes.byref(engine.header))
        # Ctrl-C stops native code only where Python would raise KeyboardInterrupt.
        default = signal.getsignal(signal.SIGINT) is signal.default_int_handler
        main = threading.main_thread().ident or 0
        self.rt.sigint_arm(int(default), main)
        if not runs:
            return
        groups = cache.get("groups") if cache is not None else None
        if groups is None or cache is None or cache.get("n") != len(runs):
            groups = _run_specs(runs)
            if cache is not None:
                cache["groups"], cache["n"] = groups, len(runs)
        handles = (ctypes.c_void_p * len(engine.runs))()
        self.handles = handles
        self.keep = groups
        for info, specs, members, _ in groups:
            rc = self.rt.runs_new(self.cengine, ctypes.byref(info), specs, len(members), handles)
            if rc != 0:
                raise KernelError(f"{members[-1 - rc].label}: cannot allocate a native stack")

    def _handle(self, index: int) -> int:
        """The runtime run of run ``index`` (hosted, or made by ``twrt_runs_new``)."""
        native = self.runs.get(index)
        if native is not None:
            return native.handle
        handle = self.handles[index] if index < len(self.handles) else None
        if not handle:  # pragma: no cover - every native run of the launch has one
            raise KernelError(f"run {index} has no native run in this launch")
        return handle

    def _new_run(self, run: KernelRun, entry: int, *, native: bool) -> _Native:
        ctx = run.kernel_context()
        device = ctx.device
        info = device_info(device)
        handle = self.rt.run_new(
            self.cengine, run.index, ctypes.byref(info), run.core.index, int(native)
        )
        cta = (ctypes.c_uint32 * max(1, len(ctx.compile_args)))(*ctx.compile_args)
        self.rt.run_args(
            handle,
            ctx.rta_addr,
            len(ctx.args),
            ctx.crta_addr,
            len(ctx.common_args),
            ctypes.cast(cta, ctypes.c_void_p),
            len(ctx.compile_args),
            int(ctx.noc),
        )
        cfg = ctx.compute
        if cfg is not None:
            _dst_physical(run, device)
            self.rt.run_compute(
                handle,
                int(cfg.fp32_dest_acc_en),
                int(cfg.dst_full_sync_en),
                int(cfg.math_approx_mode),
                int(cfg.math_fidelity),
                dst_tiles(device.capacity.dst_physical_tiles, cfg),  # the one DST rule
                int(device.capacity.dst_physical_tiles),
            )
        argv = (ctypes.c_int64 * 1)()
        result = ctypes.c_int64(0)
        if native:
            if self.rt.run_start(handle, entry, argv, ctypes.byref(result)) != 0:
                raise KernelError(f"{run.label}: cannot allocate a native stack")
        return _Native(handle, (cta, argv, result))

    def resume(self, index: int) -> tuple[int, int]:
        if CRASH.slot is None:
            packed = self.rt.resume(self.cengine, index)
        else:  # isolated: tell the parent native kernels are running
            engine = self.engine
            run = engine.runs[index] if engine is not None else None
            core = run.core.logical if run is not None else None
            # a compiled kernel resumed inside an external call: the parent names the call
            inside = getattr(run.fn, "extern_call_token", None) if run is not None else None
            token = inside(run) if inside is not None else None
            if token is None and core is not None:
                token = (NATIVE_KERNELS, core.x, core.y)
            CRASH.enter(token)
            packed = self.rt.resume(self.cengine, index)
            CRASH.leave()
        return packed >> 32, packed & 0xFFFFFFFF

    def serve(self, index: int) -> None:
        engine = self.engine
        if engine is None:  # pragma: no cover - serve follows attach
            raise KernelError("a native request outside a launch")
        requests.serve(self.rt, self._handle(index), engine.runs[index], self.tables)

    def error(self, index: int) -> BaseException:
        engine = self.engine
        if engine is None:  # pragma: no cover
            return KernelError("a native kernel failed outside a launch")
        run = engine.runs[index]
        # A compiled kernel that failed inside an external call reports it as a Python
        # kernel's hosted call does: named by the call, at the call's line.
        current = getattr(run.fn, "current_extern_call", None)
        call = current(run) if current is not None else None
        if call is None:
            return run_error(self.rt, self._handle(index), run)
        title, loc = call
        exc = run_error(self.rt, self._handle(index), run, title)
        if isinstance(exc, TilewrightError) and exc.loc is None:
            exc.loc = loc
        return exc

    def describe_wait(self, run: KernelRun) -> tuple[str, SourceLoc | None]:
        return describe_native_wait(run)

    def interrupt(self, thread_id: int) -> bool:
        """Stop the fiber thread ``thread_id`` is running (the watchdog's livelock)."""
        return bool(self.rt.interrupt(thread_id, 1))

    def detach(self) -> None:
        self.tables.clear()
        for native in self.runs.values():
            self.rt.run_free(native.handle)
        self.runs.clear()
        if self.cengine is not None:
            self.rt.runs_free(self.cengine)
            self.rt.engine_free(self.cengine)
            self.cengine = None
        self.handles = _NO_HANDLES
        self.keep = ()
        # The driver stays the engine's (``driver_for``) for its next launches: a launch
        # plan's native runs name it (device/launch.py).
        self.engine = None

    # -- hosted runs (native code called by a Python kernel) ------------------------------------

    def hosted(self, run: KernelRun, observe: bool) -> int:
        """The runtime run for native code called by Python run ``run``."""
        native = self.runs.get(run.index)
        if native is None:
            native = self.runs[run.index] = self._new_run(run, 0, native=False)
        self.rt.run_observe(native.handle, int(observe))
        return native.handle


_NO_HANDLES = (ctypes.c_void_p * 0)()

_RunGroup = tuple  # (DeviceInfo, RunSpec array, the runs, their compile-arg arrays)


def _dst_physical(run: KernelRun, device) -> int:
    """The device's DST size in tiles, which the native runtime can hold (at most 32)."""
    physical = int(device.capacity.dst_physical_tiles)
    if physical > 32:  # Run::dst_dirty has 32 bits
        raise KernelError(
            f"{run.label}: the native runtime holds at most 32 DST tiles; the system "
            f"descriptor has {physical}"
        )
    return physical


def _run_specs(runs: list[KernelRun]) -> list[_RunGroup]:
    """The runtime's description of each native run, grouped by device (a mesh launch
    runs every chip's kernels on one engine; each device has its own ``DeviceInfo``)."""
    by_device: dict[int, list[KernelRun]] = {}
    for run in runs:
        by_device.setdefault(id(run.kernel_context().device), []).append(run)
    groups = []
    for members in by_device.values():
        info = device_info(members[0].kernel_context().device)
        specs = (RunSpec * len(members))()
        ctas = []
        for spec, run in zip(specs, members):
            ctx = run.kernel_context()
            compile_args = ctx.compile_args
            cta = (ctypes.c_uint32 * max(1, len(compile_args)))(*compile_args)
            ctas.append(cta)
            spec.index = run.index
            spec.core = run.core.index
            spec.rta_addr = ctx.rta_addr
            spec.n_rta = len(ctx.args)
            spec.crta_addr = ctx.crta_addr
            spec.n_crta = len(ctx.common_args)
            spec.cta = ctypes.addressof(cta)
            spec.n_cta = len(compile_args)
            spec.noc = int(ctx.noc)
            cfg = ctx.compute
            if cfg is not None:
                physical = _dst_physical(run, ctx.device)
                spec.compute = 1
                spec.fp32_dest_acc = int(cfg.fp32_dest_acc_en)
                spec.dst_full_sync = int(cfg.dst_full_sync_en)
                spec.approx = int(cfg.math_approx_mode)
                spec.fidelity = int(cfg.math_fidelity)
                spec.dst_tiles = dst_tiles(physical, cfg)  # the one DST rule
                spec.dst_physical = physical
            spec.entry = getattr(run.native, "entry")  # noqa: B009 - kernels.NativeRun
        groups.append((info, specs, members, ctas))
    return groups


_DRIVERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def driver_for(engine: Engine) -> Driver:
    """The engine's native driver, attached to its running launch if needed."""
    driver = _DRIVERS.get(engine)
    if driver is None:
        driver = _DRIVERS[engine] = Driver(engine)
    if engine.running and engine.driver is None:
        engine.driver = driver
        driver.attach(engine, [])
    return driver


# -- errors and waits ----------------------------------------------------------------------------


def _cb_name(run: KernelRun, index: int) -> str:
    cbs = getattr(run.core, "cbs", None) or []
    cb = cbs[index] if 0 <= index < len(cbs) else None
    return cb.name if cb is not None else f"cb {index}"


def _names(text: str, run: KernelRun, cb: int) -> str:
    """The placeholders of a C++ message, named as the Python kernel API names them."""
    if cb >= 0:
        text = text.replace("{cb}", _cb_name(run, cb))
    num_chips = len(run.core.device.system_desc.chip_desc_indices)
    return render_placeholders(
        text,
        cb=lambda i: _cb_name(run, i),
        chip=lambda tag: chips_with_tag(tag, num_chips),
        kernel=run.name,
    )


def run_error(rt: Runtime, handle: int, run: KernelRun, title: str | None = None) -> BaseException:
    """The exception of a native run that failed (its error record, in Python's words);
    ``title`` names the external call a hosted run was making."""
    cls, cb, line = ctypes.c_int32(), ctypes.c_int32(), ctypes.c_int32()
    file = ctypes.c_char_p()
    raw = rt.run_error(
        handle, ctypes.byref(cls), ctypes.byref(cb), ctypes.byref(file), ctypes.byref(line)
    )
    text = (raw or b"").decode("utf-8", "replace")
    loc = SourceLoc(file.value.decode(), line.value) if file.value else None
    kind = cls.value
    if kind == ERR_FAULT:
        return faults.fault_error(rt, handle, run, title)
    if kind == ERR_INTERRUPT:
        return faults.interrupt_error(rt, handle, run, title)
    if kind == ERR_EXIT:
        return faults.exit_error(rt, handle, run, title)
    if kind in (ERR_ASSERT, ERR_L1):
        who = title if title is not None else f"native kernel {run.name}"
        node = f"({run.core.logical.x}, {run.core.logical.y})"
        if kind == ERR_ASSERT:
            return NativeCrashError(
                f"{who} on core {node}: {text}",
                loc=loc,
                rule="native-abort",
                hint="a failed assert() ends the kernel here, not the process",
            )
        return NativeCrashError(
            f"{who}: {text}",
            loc=loc,
            rule="l1-bounds",
            hint="an L1 address names memory of the core it is used on; check the address "
            "arithmetic and the circular buffer's page count",
        )
    text = _names(text, run, cb.value)
    if kind == ERR_DEADLOCK:
        text = f"deadlock: {run.label} {text}: {describe_native_wait(run)[0]}"
    if kind == ERR_CPP:
        text = f"a C++ exception escaped native kernel {run.name}: {text}"
    message = int(rt.run_error_message(handle))
    msg = _MESSAGES[message - 1] if 0 < message <= len(_MESSAGES) else None
    error = _ERROR_CLASSES.get(kind, KernelError)
    if msg is not None:  # a kernel-API diagnostic: its rule and hint, as Python raises it
        return error(text, loc=loc, rule=msg.rule, hint=msg.hint)
    return error(text, loc=loc)


class NativeWait:
    """The wait of a Python kernel blocked inside native code (an external call)."""

    __slots__ = ()

    def describe_wait(self, run) -> str:
        text, loc = describe_native_wait(run)
        return f"{text} (in native code at {loc})" if loc is not None else text


NATIVE_WAIT = NativeWait()
