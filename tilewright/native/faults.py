"""Reports of native faults: a SIGSEGV / SIGBUS / SIGFPE / SIGILL inside a native kernel.

The runtime's signal handler stops the faulting fiber and records the signal, the
faulting address and the program counter (runtime/window.cpp).  :func:`fault_error`
turns that into a :class:`~tilewright.errors.NativeCrashError` naming the kernel, the
core, what the address is (outside L1, the firmware region, not an L1 address at all)
and the C++ source line: ``addr2line`` on the kernel object when it is available, else
the last kernel-API call the kernel made.
"""

from __future__ import annotations

import ctypes
import shutil
import signal
import subprocess

from tilewright.device.memory import NATIVE_WINDOW_BASE
from tilewright.device.watchdog import WatchdogInterrupt
from tilewright.errors import NativeCrashError, SourceLoc, internal_file

__all__ = ["fault_error", "interrupt_error", "exit_error", "source_line"]


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


def _dladdr(pc: int) -> tuple[str, int] | None:
    try:
        libc = ctypes.CDLL(None)
        dladdr = libc.dladdr
    except (OSError, AttributeError):
        return None
    info = _DlInfo()
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    if not dladdr(ctypes.c_void_p(pc), ctypes.byref(info)) or not info.dli_fname:
        return None
    return info.dli_fname.decode(), pc - (info.dli_fbase or 0)


def source_line(pc: int) -> SourceLoc | None:
    """The C++ file and line of a program counter in a kernel object (addr2line), if known."""
    found = _dladdr(pc)
    tool = shutil.which("addr2line")
    if found is None or tool is None:
        return None
    path, offset = found
    try:
        out = subprocess.run(
            [tool, "-e", path, "-i", hex(offset)],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    # -i lists the inline chain innermost first: the first frame outside Tilewright's own
    # headers is the user's line (a kernel-API call inlined into the user's loop is not).
    for line in out.splitlines():
        file, _, lno = line.rpartition(":")
        lno = lno.split()[0] if lno else ""
        if file and file != "??" and lno.isdigit() and int(lno) > 0 and not internal_file(file):
            return SourceLoc(file, int(lno))
    return None


def _what(addr: int, l1_size: int, guard: tuple[int, int] = (0, 0)) -> str:
    lo, size = guard
    if lo and lo <= addr < lo + size:
        return (
            "the guard page below the kernel's 1 MiB stack: a stack overflow (deep recursion "
            "or large local arrays)"
        )
    if addr < NATIVE_WINDOW_BASE:
        return (
            f"below {NATIVE_WINDOW_BASE:#x}: a null pointer, or L1's firmware region, which native "
            "code cannot use"
        )
    if addr < l1_size:
        return "inside L1 but not mapped for this core"
    if addr < 1 << 32:
        return f"beyond the {l1_size} B of L1 (L1 addresses are 0..{l1_size - 1:#x})"
    return "not an L1 address (a host pointer or a corrupted value)"


def _fault_record(rt, handle: int) -> tuple[int, int, int, SourceLoc | None]:
    """(signal or reason, address, program counter, last kernel-API call) of a stopped run."""
    signo, addr, pc = ctypes.c_int32(), ctypes.c_uint64(), ctypes.c_uint64()
    last_file, last_line = ctypes.c_char_p(), ctypes.c_int32()
    rt.run_fault(
        handle,
        ctypes.byref(signo),
        ctypes.byref(addr),
        ctypes.byref(pc),
        ctypes.byref(last_file),
        ctypes.byref(last_line),
    )
    last = None
    if last_file.value:
        last = SourceLoc(last_file.value.decode("utf-8", "replace"), last_line.value)
    return signo.value, addr.value, pc.value, last


_CTRL_C = 2  # InterruptReason INT_CTRL_C (runtime/twrt.h); 1 is the watchdog


def interrupt_error(rt, handle: int, run, title: str | None = None) -> BaseException:
    """The interruption of a native run stopped from outside: a ``WatchdogInterrupt`` (the
    engine reports a livelock) or a ``KeyboardInterrupt`` (Ctrl-C), with ``where`` = the
    C++ line the fiber was at (addr2line; else its last kernel-API call) and
    ``native`` = True.  ``title`` names the external call a hosted run was making."""
    reason, _addr, pc, last = _fault_record(rt, handle)
    line = source_line(pc)
    after = ""
    if line is None and last is not None:
        line, after = last, "after the kernel-API call at "
    exc: BaseException = KeyboardInterrupt() if reason == _CTRL_C else WatchdogInterrupt()
    exc.where = line  # type: ignore[attr-defined]
    exc.native = True  # type: ignore[attr-defined]
    node = f"({run.core.logical.x}, {run.core.logical.y})"
    what = title if title is not None else f"native kernel {run.name}"
    if line is None:
        at = " (no line known)"
    else:
        at = f" {after}{line}" if after else f" at {line}"
    exc.add_note(f"{what} on core {node} was stopped in native code{at}")
    return exc


_EXIT_CALLS = (
    "exit({status})",
    "_exit({status})",
    "_Exit({status})",
    "quick_exit({status})",
    "abort()",
)
"""What a kernel called, by the runtime's ExitKind (runtime/exits.cpp)."""


def exit_error(rt, handle: int, run, title: str | None = None) -> NativeCrashError:
    """A native run that called exit(), _exit(), _Exit(), quick_exit() or abort(): the
    run ends with this error at the call site; the process keeps running."""
    status, kind, pc, last = _fault_record(rt, handle)
    call = _EXIT_CALLS[kind if 0 <= kind < len(_EXIT_CALLS) else 0].format(status=status)
    line = source_line(pc)
    after = ""
    if line is None and last is not None:
        line, after = last, " (after the kernel-API call at that line)"
    node = f"({run.core.logical.x}, {run.core.logical.y})"
    who = title if title is not None else f"native kernel {run.name}"
    rule = "native-abort" if kind == len(_EXIT_CALLS) - 1 else "native-exit"
    hint = (
        "native code runs inside the simulation: report a failure with an error value or a "
        "C++ exception instead of ending the process"
    )
    message = f"{who} on core {node} called {call}{after}; the run was stopped"
    if title is not None:  # an external call: located at the Python call, the C++ line named
        where = f" at {line}" if line is not None else ""
        return NativeCrashError(
            f"{who} on core {node} called {call}{where}{after}; the run was stopped",
            rule=rule,
            hint=hint,
        )
    return NativeCrashError(message, loc=line, rule=rule, hint=hint)


def fault_error(rt, handle: int, run, title: str | None = None) -> NativeCrashError:
    """The error of a native run that faulted (``title``: the external call it was running)."""
    signo, addr, pc, last = _fault_record(rt, handle)
    try:
        name = signal.Signals(signo).name
        desc = signal.strsignal(signo) or name
    except ValueError:
        name = desc = f"signal {signo}"
    l1_size = run.core.device.l1_size
    line = source_line(pc)
    after = ""
    if line is None and last is not None:
        line, after = last, "after the kernel-API call at "
    if signo == signal.SIGABRT:  # raise(): no address (abort() from a library, std::terminate)
        fault = f"{name} ({desc}): abort() called by a library, or std::terminate"
    else:
        guard_size = ctypes.c_uint64()
        guard = (int(rt.run_guard(handle, ctypes.byref(guard_size))), guard_size.value)
        fault = f"{name} ({desc}) at address {addr:#x}, {_what(addr, l1_size, guard)}"
    node = f"({run.core.logical.x}, {run.core.logical.y})"
    hint = (
        "L1 addresses (runtime arguments, get_write_ptr, get_semaphore) are pointers only on the "
        "core that owns them; check pointer arithmetic and bounds"
    )
    if title is not None:  # an external call: located at the Python call, the C++ line named
        where = f" ({after}{line})" if line is not None else ""
        return NativeCrashError(
            f"{title} crashed with {fault} on node {node}{where}", rule="native-fault", hint=hint
        )
    where = f" ({after.rstrip()})" if after else ""
    return NativeCrashError(
        f"native kernel {run.name} on core {node} faulted with {fault}{where}",
        loc=line,
        rule="native-fault",
        hint=hint,
    )
