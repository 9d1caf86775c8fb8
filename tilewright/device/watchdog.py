"""The no-progress watchdog: interrupts a kernel that runs too long without yielding.

Kernels are greenlets: a Python kernel in an endless loop (``while True: pass``, a
busy-wait on a value that only another kernel can change) never returns to the
scheduler, so nothing inside the engine can notice.  One daemon thread per process
watches every running launch.  Progress is a *scheduler step* (a switch into a kernel,
which follows a DFB / circular-buffer / transfer / semaphore wait or a poll, see
:meth:`Engine.progress`); when a
launch's progress has not moved for ``EngineOptions.watchdog`` seconds, the watchdog
raises :class:`WatchdogInterrupt` asynchronously in the engine's thread
(``PyThreadState_SetAsyncExc``), and the engine turns it into a livelock report
(node, kernel, user line, last synchronisation) like a deadlock report.

Why a thread and an asynchronous exception rather than a signal: ``SIGALRM`` only
reaches the main thread and would take the user's own handler, while devices may run
in any thread.  Nothing is added to the hot path (the progress
value is derived from the wait and poll counts the engine keeps anyway); the price is a
wake-up of this thread a few times per watchdog period while a launch runs, and
nothing at all between launches.

Native code: an asynchronous exception is delivered only when the thread next executes
Python bytecode, so a C++ kernel that never returns is reached through
:attr:`Watch.interrupters`: the engine registers one that asks its native driver to
stop the fiber the thread is running (the runtime signals the thread and resumes the
fiber at its failure stub, as for a fault).  When an interrupter stopped native code,
no Python interruption is sent: the stopped run itself becomes the livelock report,
with the C++ line it was at.  While the engine's thread waits for a child process
(``subprocess``: the JIT build of a C++ kernel), imports a module, or waits for
another thread's native code, the watchdog treats the time as progress.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["WatchdogInterrupt", "Watch", "Watched", "WATCHDOG"]

_MIN_PERIOD = 0.02
_MAX_PERIOD = 0.5
_SAMPLES_PER_LIMIT = 5


class Watched(Protocol):
    """What the watchdog needs of an engine: a value that changes at every scheduler step."""

    def progress(self) -> object: ...


class WatchdogInterrupt(BaseException):
    """Raised inside a kernel by the watchdog (a BaseException: ``except Exception`` in a
    kernel does not swallow it).  The engine never lets it escape a launch."""


def _raise_in_thread(thread_id: int, exc: type[BaseException] | None) -> int:
    """Schedule ``exc`` in thread ``thread_id`` (None cancels a pending one)."""
    obj = ctypes.py_object(exc) if exc is not None else ctypes.py_object()
    return ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), obj)


#: Host work a kernel may do for long without being stuck: waiting for a child process
#: (the JIT build of a C++ kernel) and importing a module (torch's first import takes
#: seconds).  Matched by the module name of any frame on the thread's stack.
_HOST_WORK_MODULES = frozenset(
    {"subprocess", "importlib._bootstrap", "importlib._bootstrap_external"}
)


def _doing_host_work(thread_id: int) -> bool:
    """True while the thread waits for a child process or imports a module."""
    frame = sys._current_frames().get(thread_id)
    while frame is not None:
        if frame.f_globals.get("__name__") in _HOST_WORK_MODULES:
            return True
        frame = frame.f_back
    return False


class Watch:
    """One launch under watch (created by :meth:`Watchdog.watch`)."""

    __slots__ = (
        "engine",
        "limit",
        "thread_id",
        "seen",
        "since",
        "fired",
        "fired_at",
        "active",
        "interrupters",
    )

    def __init__(self, engine: Watched, limit: float) -> None:
        self.engine = engine
        self.limit = limit
        self.thread_id = threading.get_ident()
        self.seen: object = None
        self.since = time.monotonic()
        self.fired = False
        self.fired_at = 0.0
        self.active = True
        self.interrupters: list[Callable[[int], bool]] = []
        """Interruption of kernels running native code (called with the thread id; True
        if it stopped native code, which then reports the livelock itself)."""

    @property
    def stalled_for(self) -> float:
        """Seconds since the launch last made a scheduler step (as of the firing)."""
        return self.fired_at - self.since


class Watchdog:
    """The process's watchdog thread and the launches it watches."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._watches: list[Watch] = []
        self._thread: threading.Thread | None = None

    def watch(self, engine: Watched, limit: float) -> Watch:
        """Start watching a launch of ``engine`` running in the calling thread."""
        w = Watch(engine, limit)
        with self._lock:
            self._watches.append(w)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._loop, name="tilewright-watchdog", daemon=True
                )
                self._thread.start()
            self._changed.notify()
        return w

    def unwatch(self, w: Watch) -> None:
        """Stop watching; cancels an interruption that was sent but not yet delivered."""
        with self._lock:
            if not w.active:
                return
            w.active = False
            self._watches.remove(w)
            if w.fired:
                _raise_in_thread(w.thread_id, None)

    def _period(self) -> float | None:
        if not self._watches:
            return None
        shortest = min(w.limit for w in self._watches)
        return max(_MIN_PERIOD, min(_MAX_PERIOD, shortest / _SAMPLES_PER_LIMIT))

    def _loop(self) -> None:
        with self._lock:
            while True:
                self._changed.wait(self._period())
                now = time.monotonic()
                for w in self._watches:
                    self._check(w, now)

    def _check(self, w: Watch, now: float) -> None:
        progress = w.engine.progress()
        if progress != w.seen:
            w.seen, w.since = progress, now
            return
        if now - w.since < w.limit or (w.fired and now - w.fired_at < w.limit):
            return
        if _doing_host_work(w.thread_id):
            w.since = now
            return
        w.fired, w.fired_at = True, now
        stopped = False
        for interrupt in w.interrupters:
            stopped = bool(interrupt(w.thread_id)) or stopped
        if not stopped:
            _raise_in_thread(w.thread_id, WatchdogInterrupt)


WATCHDOG = Watchdog()
"""The process-wide watchdog (its thread starts with the first watched launch)."""
