"""SIGTERM ends ``tilewright run`` as Ctrl-C does: a report of where each kernel was.

Python's default for SIGTERM is to die at once: no report, no ``--trace`` file, the
compilers of a build still running, an ``--isolate`` child left to its parent-death
signal.  While a program runs, :func:`sigterm_as_interrupt` routes SIGTERM into the
Ctrl-C path, which already stops Python kernels and native code and notes where every
kernel was (docs/robustness.md, *Livelocks, the watchdog and Ctrl-C*): the signal's
C-level handler writes to a wake-up pipe (``signal.set_wakeup_fd``; Python's own handler
would wait for the main thread's next bytecode, which a native kernel in a loop never
reaches); a helper thread reads it, kills the running compilers
(``native.toolchain.stop_compilers``) and sends the main thread SIGINT (when SIGINT has Python's
default handler; otherwise the Python-level handler raises the interrupt, which reaches
Python code only).  The run then ends as an
interrupted one, says "terminated (SIGTERM)" and exits with 143; the caller still writes
the trace.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from tilewright.lazy import lazy_import

# The native toolchain loads only if a SIGTERM arrives (the command line starts without it).
toolchain = lazy_import("tilewright.native.toolchain")

__all__ = ["sigterm_as_interrupt", "terminated", "TERMINATED_STATUS"]

TERMINATED_STATUS = 128 + signal.SIGTERM
_TERMINATED = threading.Event()
_RAISED = threading.Event()  # the Python-level handler raised its one interrupt


def terminated() -> bool:
    """Whether SIGTERM ended (is ending) the run."""
    return _TERMINATED.is_set()


def _ctrl_c_is_default() -> bool:
    return signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _on_sigterm(signum, frame) -> None:
    """The Python-level handler (main thread, at its next bytecode).  With Ctrl-C's default
    handler the helper thread's SIGINT does the work (it reaches native code too);
    otherwise (SIGINT ignored, as in a shell's background job, or the program's own
    handler) the interrupt is raised here, for Python code."""
    if not _ctrl_c_is_default() and not _RAISED.is_set():
        _TERMINATED.set()
        _RAISED.set()
        raise KeyboardInterrupt


def _watch(read_fd: int) -> None:
    while True:
        try:
            data = os.read(read_fd, 64)
        except OSError:
            return
        if not data:
            return
        if signal.SIGTERM in data and not _TERMINATED.is_set():
            _TERMINATED.set()
            toolchain.stop_compilers()
            if _ctrl_c_is_default():
                # To the main thread, not the process: a process-directed signal may land on
                # this thread (the kernel skips a thread whose SIGTERM is still pending), and
                # then the main thread's blocking read (an --isolate parent reading its
                # child's pipe) is never interrupted and the run hangs.
                main = threading.main_thread().ident
                assert main is not None  # the main thread is running: it is started
                signal.pthread_kill(main, signal.SIGINT)


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM as Ctrl-C while the block runs (the main thread only: elsewhere, as before)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _TERMINATED.clear()
    _RAISED.clear()
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    previous_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    watcher = threading.Thread(target=_watch, args=(read_fd,), daemon=True, name="tw-sigterm")
    watcher.start()
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.set_wakeup_fd(previous_fd)
        os.close(write_fd)  # the watcher reads end-of-file and ends
        watcher.join(1.0)
        os.close(read_fd)
