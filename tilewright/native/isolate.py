"""Process isolation for native code: ``tilewright run --isolate prog.py``.

An external C++ function that segfaults or aborts takes its process with it.  With
``--isolate`` the simulation runs in a child process (``python -m tilewright run``
with the same options) and the parent reports a crash instead of dying:

* the child announces each external call site once, on a pipe
  (``S <id> <file> <line> <col> <title>``), when the site is first bound;
* before entering native code it stores ``(site id, node x, node y)`` in a small
  shared-memory slot (three int32 stores, no system call), clears it when native
  code returns or calls back into Python, and restores it when the callback returns;
* while the native kernels of a launch run, the slot says so (``crash_slot``);
* if the child dies from a signal, the parent reads the slot and raises a
  :class:`~tilewright.errors.NativeCrashError` located at the call site that was
  running (or says the crash happened outside external code);
* if the child *exits* while native code runs (an exit system call, or a library's
  exit that the in-process interception of ``exit``/``abort`` cannot see), that is a
  crash report too, naming the call;
* the child dies with its parent (``PR_SET_PDEATHSIG``): killing the parent never
  leaves a simulation spinning, orphaned;
* Ctrl-C reaches both (one process group): the parent waits for the child's own
  report (where every kernel was) and then ends; a child that does not stop within
  ``CTRL_C_GRACE`` seconds is killed.

The child's output, exit status and Tilewright diagnostics pass through unchanged.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import signal
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from typing import ClassVar, TextIO

from tilewright.errors import NativeCrashError, SourceLoc, format_error
from tilewright.lazy import lazy_import
from tilewright.native.crash_slot import CRASH, NATIVE_KERNELS

# POSIX only: imported in the forked child, where a missing module means no core limit.
resource = lazy_import("resource")

__all__ = ["run_isolated", "attach_child", "announce", "crash_error", "exit_error"]

_SLOT_BYTES = 16
_PR_SET_PDEATHSIG = 1
CTRL_C_GRACE = 30.0
"""Seconds the parent waits after Ctrl-C for the child to report and stop."""
FORWARD_AFTER = 0.5
"""Seconds after which an interrupt the child did not get itself is passed on to it."""


class _Child:
    """The child side: the announcement pipe and the shared slot (None when not isolated)."""

    channel: ClassVar[TextIO | None] = None
    announced: ClassVar[set[int]] = set()
    mapping: ClassVar[mmap.mmap | None] = None


def attach_child(spec: str) -> None:
    """Called in the child (``--isolate-channel W,F``): open the pipe and map the slot."""
    try:
        write_fd, slot_fd = (int(x) for x in spec.split(","))
        os.fstat(write_fd), os.fstat(slot_fd)
    except (ValueError, OSError):
        raise ValueError(
            f"{spec!r} is not the pipe and slot of an isolated run (an internal option of "
            "`tilewright run --isolate`)"
        ) from None
    _Child.channel = os.fdopen(write_fd, "w", buffering=1, encoding="utf-8")
    mapping = _Child.mapping = mmap.mmap(slot_fd, _SLOT_BYTES)
    CRASH.slot = (ctypes.c_int32 * 4).from_buffer(mapping)


def announce(site) -> None:
    """Tell the parent about a call site (once per site; a no-op unless isolated)."""
    channel = _Child.channel
    if channel is None or site.id in _Child.announced:
        return
    _Child.announced.add(site.id)
    loc = site.loc
    col = "" if loc.col is None else str(loc.col)
    fields = [str(site.id), loc.file, str(loc.line), col, site.title]
    channel.write("S\t" + "\t".join(f.replace("\t", " ").replace("\n", " ") for f in fields) + "\n")


def _child_setup(parent: int):
    """What the child does between fork and exec: no core dump, and die with the parent."""

    def setup() -> None:  # pragma: no cover - runs in the child before exec
        try:
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ImportError, ValueError, OSError):  # no resource module / limit refused:
            pass  # a core dump only costs disk space, the crash is still reported
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # not Linux: no parent-death signal
            return
        if os.getppid() != parent:  # the parent died before the prctl
            os._exit(1)

    return setup


def crash_error(returncode: int, sites: dict, slot: tuple[int, int, int]) -> NativeCrashError:
    """The report for a child that died from signal ``-returncode``."""
    signum = -returncode
    try:
        name = signal.Signals(signum).name
        desc = signal.strsignal(signum) or name
    except ValueError:
        name = desc = f"signal {signum}"
    site_id, x, y = slot
    if site_id == NATIVE_KERNELS:
        return NativeCrashError(
            f"the isolated simulation process died with {name} ({desc}) while native kernels ran "
            f"(resumed on core ({x}, {y}))",
            hint="a C++ kernel (or code it calls) faulted in a way the process could not survive",
        )
    info = sites.get(site_id)
    if site_id and info is not None:
        file, line, col, title = info
        loc = SourceLoc(file, line, col)
        return NativeCrashError(
            f"{title} crashed with {name} ({desc}) on node ({x}, {y}); the isolated simulation process "
            "was stopped",
            loc=loc,
            hint="the external function (or code it calls) faulted; check pointer arithmetic and bounds. "
            "To see the native stack run without --isolate under a debugger: "
            "gdb --args python -m tilewright run PROGRAM",
        )
    return NativeCrashError(
        f"the isolated simulation process died with {name} ({desc}) outside external C++ code",
        hint="this is a crash of the simulation itself; please report it with the program",
    )


def exit_error(status: int, sites: dict, slot: tuple[int, int, int]) -> NativeCrashError | None:
    """The report for a child that *exited* with ``status`` while native code ran (None:
    it exited normally, outside native code)."""
    site_id, x, y = slot
    if site_id == 0:
        return None
    hint = (
        "native code ended the process (an exit system call, or a library's exit Tilewright "
        "cannot intercept); report failures with an error value or a C++ exception"
    )
    if site_id == NATIVE_KERNELS:
        return NativeCrashError(
            f"the isolated simulation process exited with status {status} while native kernels "
            f"ran (resumed on core ({x}, {y}))",
            hint=hint,
        )
    info = sites.get(site_id)
    if info is None:
        return NativeCrashError(
            f"the isolated simulation process exited with status {status} inside external C++ code",
            hint=hint,
        )
    file, line, col, title = info
    return NativeCrashError(
        f"{title} ended the isolated simulation process with exit status {status} on node "
        f"({x}, {y})",
        loc=SourceLoc(file, line, col),
        hint=hint,
    )


def _read_sites(pipe, sites: dict) -> None:
    """Read the child's call-site announcements (``announce``) until its end."""
    for line in pipe:
        parts = line.rstrip("\n").split("\t")
        if len(parts) == 6 and parts[0] == "S":
            _, sid, file, lno, col, title = parts
            sites[int(sid)] = (file, int(lno), int(col) if col else None, title)


def _wait_after_ctrl_c(proc: subprocess.Popen, forward: int) -> int:
    """Ctrl-C from a terminal reaches the child too: let it print its report, then end.  A
    signal sent to the parent alone (``kill -INT``, or SIGTERM, which the parent turns into
    an interrupt) does not: after a moment it is passed on as ``forward``, so the child
    reports where its kernels were instead of being killed after the grace period."""
    try:
        try:
            return proc.wait(timeout=FORWARD_AFTER)
        except subprocess.TimeoutExpired:
            proc.send_signal(forward)
        return proc.wait(timeout=CTRL_C_GRACE)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        proc.kill()
        proc.wait()
        print(
            "KeyboardInterrupt: the isolated simulation process did not stop; it was killed",
            file=sys.stderr,
        )
        return 130


def run_isolated(
    program: str,
    args: list[str],
    forwarded: list[str],
    interrupt_signal: Callable[[], int] = lambda: signal.SIGINT,
) -> int:
    """Run ``tilewright run [forwarded] program args`` in a child; report a native crash.
    ``interrupt_signal``: what an interrupt of the parent is passed on to the child as."""
    read_fd, write_fd = os.pipe()
    slot_file = tempfile.TemporaryFile()
    slot_file.truncate(_SLOT_BYTES)
    slot_fd = slot_file.fileno()
    cmd = [
        sys.executable,
        "-m",
        "tilewright",
        "run",
        "--isolate-channel",
        f"{write_fd},{slot_fd}",
        *forwarded,
        program,
        *args,
    ]
    try:
        proc = subprocess.Popen(
            cmd, pass_fds=(write_fd, slot_fd), preexec_fn=_child_setup(os.getpid())
        )
    finally:
        os.close(write_fd)
    sites: dict[int, tuple[str, int, int | None, str]] = {}
    pipe = os.fdopen(read_fd, "r", encoding="utf-8", errors="replace")
    try:
        _read_sites(pipe, sites)
        returncode = proc.wait()
    except KeyboardInterrupt:
        slot_file.close()
        # The child runs on until it reports: keep its channel read (a closed one would
        # fail its next announcement with a broken pipe instead of its report).
        drain = threading.Thread(target=_read_sites, args=(pipe, {}), daemon=True)
        drain.start()
        status = _wait_after_ctrl_c(proc, interrupt_signal())
        drain.join(1.0)  # at the child's end the pipe reads end-of-file
        if not drain.is_alive():
            pipe.close()
        return status
    pipe.close()
    slot_file.seek(0)
    site_id, x, y, _ = struct.unpack("<4i", slot_file.read(_SLOT_BYTES).ljust(_SLOT_BYTES, b"\0"))
    slot_file.close()
    if returncode >= 0:
        error = exit_error(returncode, sites, (site_id, x, y))
        if error is None:
            return returncode
    else:
        error = crash_error(returncode, sites, (site_id, x, y))
    sys.stdout.flush()
    print(format_error(error), file=sys.stderr)
    return 1
