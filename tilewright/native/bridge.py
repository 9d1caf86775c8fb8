"""Native code called by Python kernels (``ttl.call_extern_func``) on the native runtime.

A generated call site is a shared object with ``tw_entry(argv, result)`` (built by
:mod:`.build`, linked against the runtime library).  :func:`prepare` readies it for
the running kernel and :func:`invoke` runs it as a *hosted* run of the runtime
(:meth:`tilewright.native.driver.Driver.hosted`): the C++ runs on a fiber, so every
kernel-API call it makes stays in C++; when a call must wait, the fiber hands back,
the Python kernel blocks in the engine like any kernel, and :func:`invoke` resumes
the fiber once the kernel is woken.  Requests (contract observation, DPRINT, ...)
are served here, on the kernel's own stack.

The Python-facing interface is the one ``tilewright.compiler.extern`` has always used:
``load``, ``prepare``, ``invoke``, ``new_handle`` and ``CRASH`` (``--isolate``).
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING

from tilewright.device.engine import ACTIVE, current_run
from tilewright.errors import KernelError, NativeBuildError
from tilewright.native import requests
from tilewright.native.crash_slot import CRASH, CrashContext
from tilewright.native.driver import NATIVE_WAIT, Status, driver_for, run_error
from tilewright.native.runtime import library

if TYPE_CHECKING:
    from tilewright.device.engine import KernelRun

__all__ = [
    "NativeLibrary",
    "NativeCall",
    "load",
    "invoke",
    "prepare",
    "new_handle",
    "host_address",
    "CrashContext",
    "CRASH",
]


class NativeLibrary:
    """A loaded shared object with its generated entry point ``tw_entry``."""

    __slots__ = ("path", "lib", "entry", "last_error")

    def __init__(self, path: str) -> None:
        library()  # kernel objects link against the runtime: load it first
        self.path = path
        try:
            self.lib = ctypes.CDLL(path)
        except OSError as exc:
            raise NativeBuildError(f"cannot load the native object {path}: {exc}") from None
        try:
            entry = self.lib.tw_entry
            last_error = self.lib.tw_last_error
        except AttributeError as exc:
            raise NativeBuildError(f"{path} has no Tilewright entry point: {exc}") from None
        self.entry = ctypes.cast(entry, ctypes.c_void_p).value or 0
        last_error.restype = ctypes.c_char_p
        self.last_error = last_error


_LOADED: dict[str, NativeLibrary] = {}


def load(path: str) -> NativeLibrary:
    """Load (once per process) a shared object built by ``build_shared_object``."""
    lib = _LOADED.get(path)
    if lib is None:
        lib = _LOADED[path] = NativeLibrary(path)
    return lib


class NativeCall:
    """A native entry point prepared for one kernel run: reused by every call it makes.

    ``observer(kind, cb, n)`` sees every circular-buffer protocol action before it
    happens; ``token`` = (site id, node x, node y) names the call in crash reports.
    """

    __slots__ = ("run", "entry", "observer", "token", "title")

    def __init__(
        self, run: KernelRun, entry: int, observer, token, title: str | None = None
    ) -> None:
        self.run = run
        self.entry = entry
        self.observer = observer
        self.token = token
        self.title = title


def prepare(lib: NativeLibrary, *, observer=None, token=None, title=None) -> NativeCall:
    """Prepare ``lib``'s entry point for calls from the running kernel (see :func:`invoke`);
    ``title`` names the call in fault reports."""
    return NativeCall(current_run(), lib.entry, observer, token, title)


def new_handle(obj) -> int:
    """Register a tensor accessor for the running kernel's external calls; its handle
    (valid for this launch: the engine's driver forgets its tables when it ends)."""
    engine, run = ACTIVE.engine, ACTIVE.run
    if engine is None or run is None:
        raise KernelError("tensor accessors are handed to native code inside kernels")
    return driver_for(engine).tables.register(run.index, obj)


def host_address(local: int) -> int:
    """A local L1 address as native code sees it: the same number (L1 is identity-mapped)."""
    return local


def invoke(call: NativeCall, argv, result) -> int:
    """Run a prepared entry point (``argv`` / ``result``: ctypes int64 array / reference).

    Returns the entry's status: 0 normal, 2 a C++ exception escaped (message:
    ``NativeLibrary.last_error()``).  A failing kernel-API call raises its error here;
    a kernel aborted while blocked inside native code leaves the fiber behind.
    """
    run = call.run
    engine = ACTIVE.engine
    if engine is None or run is None or ACTIVE.run is not run:
        raise KernelError("native code is called from inside its kernel")
    driver = driver_for(engine)
    rt = driver.rt
    tables = driver.tables
    handle = driver.hosted(run, call.observer is not None)
    if call.observer is not None:
        tables.observers[run.index] = call.observer
    if rt.run_start(handle, call.entry, argv, result) != 0:
        raise KernelError(f"{run.label}: cannot allocate a native stack")
    st = run.state
    crash = CRASH.slot is not None
    try:
        while True:
            st.clock = run.clock
            st.blocked = run.stats_blocked
            st.ops = 0
            engine.sync_to_native()
            if crash:
                CRASH.enter(call.token)
            status = rt.call(handle)
            if crash:
                CRASH.leave()
            engine.sync_from_native()
            run.clock = st.clock
            run.stats_blocked = st.blocked
            run.stats_ops += st.ops
            if status == Status.DONE:
                return rt.run_rc(handle)
            if status == Status.REQUEST:
                requests.serve(rt, handle, run, tables)
            elif status == Status.BLOCKED:
                engine.block(None, NATIVE_WAIT, run)
            else:
                raise run_error(rt, handle, run, call.title)
    finally:
        tables.observers.pop(run.index, None)
