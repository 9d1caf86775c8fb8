"""The engine: runs every kernel of every core as a greenlet, deterministically.

One ``Engine`` per device.  A launch hands it ``KernelRun`` records (core, kernel,
callable); the scheduler keeps a FIFO ready queue and switches into each kernel in
turn.  A kernel runs until it *blocks*: ``Engine.block(queue, what, detail)`` puts
the running kernel on the wait queue of the thing it waits for (a circular buffer,
a semaphore, a transfer) and switches back to the scheduler.  State changes call
``WaitQueue.wake()``, which moves exactly that queue's waiters to the back of the
ready queue (SimPy's resource pattern: no polling of blocked kernels).

When the ready queue is empty and kernels are still alive, nothing can ever
change: the engine raises :class:`~tilewright.errors.DeadlockError` listing every
blocked kernel with its place, its source line (from the suspended greenlet's
frame, resolved only now) and what it waits for, described by the waited-on
object itself.  A *livelock* is reported the same way (``rule == "livelock"``):
kernels that keep polling without any kernel making progress, or a kernel that
runs longer than ``EngineOptions.watchdog`` seconds without yielding
(:mod:`~tilewright.device.watchdog` interrupts it).  Ctrl-C during a launch keeps
its ``KeyboardInterrupt`` and gets the same report as a note.

Threads: the running engine and kernel (``ACTIVE``) are per OS thread, so devices
can run launches concurrently in different threads.  One device runs one launch at
a time; a second thread launching on a busy device gets a ``DeviceError``.

Time is logical and deterministic: every kernel carries a cycle ``clock`` that
the kernel API advances by modelled costs; a woken kernel's clock moves up to its
waker's.  Trace events and statistics use these clocks, so the same program gives
the same trace.
"""

from __future__ import annotations

import _thread
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Protocol

from greenlet import GreenletExit, greenlet

from tilewright.device.watchdog import WATCHDOG, WatchdogInterrupt
from tilewright.errors import (
    DeadlockError,
    DeviceError,
    KernelError,
    SourceLoc,
    TilewrightError,
    internal_frame,
)

if TYPE_CHECKING:
    from tilewright.device.device import Core
    from tilewright.device.launch import KernelContext
    from tilewright.device.trace import Tracer

__all__ = [
    "ACTIVE",
    "Engine",
    "EngineOptions",
    "KernelRun",
    "WaitQueue",
    "current_run",
    "current_engine",
    "user_location",
    "location_of_exception",
]


class _Active(_thread._local):
    """Per OS thread: the running engine and kernel, set at every switch.

    Kernel APIs read ``ACTIVE.run`` / ``ACTIVE.engine`` in O(1).  A ``_thread._local``
    subclass with class-level defaults is the cheapest per-thread record Python offers
    (a read costs 50-100 ns against 16-20 ns for the slotted process-wide record it
    replaced; benchmarks/bench_robustness.py).  The engine's own hot paths (``block``,
    ``wake``, ``poll_yield``) do not read it, and the scheduler stores the running kernel
    through the thread's ``__dict__`` (a plain dict store).
    """

    engine: Engine | None = None
    run: KernelRun | None = None
    print_hook: Callable[..., None] | None = None
    """This thread's kernel ``print`` (see :mod:`tilewright.device.print_hook`)."""


ACTIVE = _Active()

_OUTSIDE_KERNEL = "this kernel API can only be called from inside a running kernel"


def current_run() -> KernelRun:
    """The kernel that is running now; an error outside a kernel."""
    run = ACTIVE.run
    if run is None:
        raise KernelError(_OUTSIDE_KERNEL)
    return run


def current_engine() -> Engine:
    """The engine running the current launch; an error outside a kernel."""
    engine = ACTIVE.engine
    if engine is None:
        raise KernelError(_OUTSIDE_KERNEL)
    return engine


def user_location(frame: FrameType | None = None) -> SourceLoc | None:
    """The innermost frame of the user's program (outside Tilewright) as a SourceLoc."""
    f: FrameType | None = frame if frame is not None else sys._getframe(1)
    while f is not None:
        name = f.f_code.co_filename
        if not internal_frame(name) and not name.startswith("<"):
            return SourceLoc(name, f.f_lineno)
        f = f.f_back
    return None


DEFAULT_WATCHDOG_SECONDS = 10.0
"""How long a kernel may run without yielding before the watchdog calls it a livelock."""


@dataclass(frozen=True, slots=True)
class EngineOptions:
    """Engine switches, fixed for one device (one options object, never env lookups)."""

    trace: bool = False
    """Record trace events (Chrome/Perfetto JSON via ``Trace``)."""
    poll_limit: int = 4096
    """Consecutive fruitless polls (non-blocking queries) tolerated per ready kernel."""
    watchdog: float | None = DEFAULT_WATCHDOG_SECONDS
    """Seconds a kernel may run without a scheduler step (a DFB, circular-buffer,
    transfer or semaphore wait, a poll) before the launch is reported as a livelock;
    None or 0 turns the watchdog off."""

    def __post_init__(self) -> None:
        if self.poll_limit < 1:
            raise DeviceError(f"EngineOptions.poll_limit must be >= 1, got {self.poll_limit}")
        if self.watchdog is not None and not self.watchdog >= 0:  # also rejects NaN
            raise DeviceError(
                f"EngineOptions.watchdog must be a number of seconds >= 0 (0 or None: off), "
                f"got {self.watchdog}"
            )


class Waitable(Protocol):
    """Something kernels block on: it explains the wait in a deadlock report."""

    def describe_wait(self, detail: object) -> str: ...


class WaitQueue:
    """Kernels waiting for one object to change state."""

    __slots__ = ("waiters",)

    def __init__(self) -> None:
        self.waiters: list[KernelRun] = []

    def wake(self) -> None:
        """Move every waiter to the ready queue (FIFO); call after a state change."""
        waiters = self.waiters
        if not waiters:
            return
        engine = waiters[0].engine
        if engine is None or not engine.running:  # waiters only queue while their engine runs
            raise KernelError("a wait queue was woken outside a launch")
        waker = engine.current
        now = waker.clock if waker is not None else 0
        ready = engine._ready
        tracer = engine.tracer
        for run in waiters:
            if tracer is not None and now > run.wait_start:
                tracer.span(run, "wait", run.wait_start, now, {"on": run.wait_desc})
            run.waiting_on = None
            if run.clock < now:
                run.stats_blocked += now - run.clock
                run.clock = now
            ready.append(run)
        waiters.clear()
        engine._spins = 0


class KernelRun:
    """One kernel running on one core: its greenlet, clock, wait state and statistics."""

    __slots__ = (
        "core",
        "place",
        "name",
        "slot",
        "fn",
        "args",
        "greenlet",
        "engine",
        "waiting_on",
        "last_wait",
        "clock",
        "index",
        "done",
        "stats_blocked",
        "stats_waits",
        "stats_ops",
        "stats_polls",
        "context",
        "wait_start",
        "wait_desc",
    )

    def __init__(
        self,
        core: Core,
        name: str,
        slot: str,
        fn: Callable[..., object],
        args: tuple[object, ...] = (),
        *,
        place: str | None = None,
        context: KernelContext | None = None,
    ) -> None:
        self.core = core
        self.place = place if place is not None else f"core {core.logical}"
        self.name = name
        self.slot = slot
        self.fn = fn
        self.args = args
        self.greenlet: greenlet | None = None
        self.engine: Engine | None = None  # set when a launch starts it
        self.waiting_on: tuple[Waitable, object] | None = None
        self.last_wait: tuple[Waitable, object] | None = None  # for livelock reports
        self.clock = 0
        self.index = -1
        self.done = False
        self.stats_blocked = 0
        self.stats_waits = 0
        self.stats_ops = 0
        self.stats_polls = 0
        self.context = context  # layer-specific per-run state (TT-Lang node runtime, DST, ...)
        self.wait_start = 0
        self.wait_desc = ""

    @property
    def label(self) -> str:
        return f"{self.place}, kernel {self.name} ({self.slot})"

    def kernel_context(self) -> KernelContext:
        """The kernel-API state of a run that a program launch started."""
        ctx = self.context
        if ctx is None:
            raise KernelError(
                f"{self.label} has no kernel context (it was not started by a launch)"
            )
        return ctx

    def describe_wait(self) -> str:
        if self.waiting_on is None:
            return "ready"
        what, detail = self.waiting_on
        return what.describe_wait(detail)

    def describe_last_wait(self) -> str:
        if self.last_wait is None:
            return "none that waited"
        what, detail = self.last_wait
        return what.describe_wait(detail)

    def __repr__(self) -> str:
        return f"<KernelRun {self.label}>"


@dataclass(slots=True)
class RunStats:
    place: str
    kernel: str
    slot: str
    cycles: int
    blocked_cycles: int
    waits: int
    ops: int


@dataclass(slots=True)
class LaunchResult:
    """What one launch did: per-kernel statistics and (optionally) trace events."""

    stats: list[RunStats] = field(default_factory=list)
    makespan: int = 0


class Engine:
    """Cooperative, deterministic scheduler of kernel greenlets."""

    def __init__(self, options: EngineOptions | None = None, *, name: str = "device") -> None:
        self.options = options or EngineOptions()
        self.name = name
        self._ready: deque[KernelRun] = deque()
        self._runs: list[KernelRun] = []
        self._sched: greenlet | None = None
        self._spins = 0
        self.current: KernelRun | None = None
        """The kernel running now (or last), set at every switch."""
        self.running = False
        self._owner: int | None = None  # thread id running a launch
        self._claim_lock = threading.Lock()
        self.tracer: Tracer | None = None  # while tracing
        self.launch_count = 0

    # -- called from kernels ---------------------------------------------------------------

    def block(self, queue: WaitQueue, what: Waitable, detail: object = None) -> None:
        """Suspend the running kernel on ``queue`` until a ``wake``; ``what.describe_wait(detail)``
        explains the wait in a deadlock report."""
        run, sched = self.current, self._sched
        if run is None or sched is None:
            raise KernelError(_OUTSIDE_KERNEL)
        wait = (what, detail)
        run.waiting_on = run.last_wait = wait
        run.stats_waits += 1
        run.wait_start = run.clock
        if self.tracer is not None:
            run.wait_desc = what.describe_wait(detail)
        queue.waiters.append(run)
        self._spins = 0
        sched.switch()

    def poll_yield(self, what: Waitable, detail: object = None) -> None:
        """A non-blocking query failed: let others run, and detect endless polling."""
        run, sched = self.current, self._sched
        if run is None or sched is None:
            raise KernelError(_OUTSIDE_KERNEL)
        run.last_wait = (what, detail)
        run.stats_polls += 1
        self._spins += 1
        if self._spins > self.options.poll_limit * (len(self._ready) + 1):
            loc = user_location()
            headline = (
                f"livelock: {run.label} keeps polling without any kernel making progress "
                f"({self._spins} polls in a row, EngineOptions.poll_limit "
                f"{self.options.poll_limit}): {what.describe_wait(detail)}"
            )
            raise DeadlockError(
                self._report(self._runs, run, headline, loc), loc=loc, rule="livelock"
            )
        self._ready.append(run)
        sched.switch()

    # -- called by the host ------------------------------------------------------------------

    def run(self, runs: Iterable[KernelRun]) -> LaunchResult:
        """Run kernels to completion (or raise the first kernel error / a deadlock)."""
        runs = list(runs)
        self._claim()
        self.launch_count += 1
        active = ACTIVE
        prev_engine, prev_run = active.engine, active.run
        active.engine = self
        self._sched = greenlet.getcurrent()
        self._ready = deque(runs)
        self._runs = runs
        self._spins = 0
        self.current = None
        for i, r in enumerate(runs):
            r.index = i
            r.engine = self
            r.greenlet = greenlet(_kernel_main, parent=self._sched)
        limit = self.options.watchdog
        watch = WATCHDOG.watch(self, limit) if limit else None
        try:
            try:
                self._schedule(runs)
            finally:
                if watch is not None:
                    WATCHDOG.unwatch(watch)
        except WatchdogInterrupt as exc:  # arrived in scheduler code, between two kernels
            raise self._livelock(runs, None, exc) from None
        except KeyboardInterrupt as exc:
            if not getattr(exc, _REPORTED, False):  # arrived in scheduler code
                self._interrupted(runs, None, exc)
            raise
        finally:
            active.engine, active.run = prev_engine, prev_run
            self.current = None
            self._ready = deque()
            self._runs = []
            self._release()
        result = LaunchResult()
        for r in runs:
            result.stats.append(
                RunStats(
                    r.place, r.name, r.slot, r.clock, r.stats_blocked, r.stats_waits, r.stats_ops
                )
            )
        result.makespan = max((r.clock for r in runs), default=0)
        if self.tracer is not None:
            self.tracer.end_launch(result.makespan)
        return result

    def _schedule(self, runs: list[KernelRun]) -> None:
        """The scheduler loop: switch into ready kernels until none is left."""
        # This thread's ACTIVE record as a plain dict: a store into it costs a third of
        # a thread-local attribute store, and the loop stores the running kernel per step.
        active = ACTIVE.__dict__
        ready = self._ready
        live = len(runs)
        while ready:
            run = ready.popleft()
            active["run"] = self.current = run
            g = run.greenlet
            if g is None:  # every run of this launch got its greenlet above
                raise KernelError(f"{run.label} is not a kernel of this launch")
            try:
                g.switch(run)
            except BaseException as exc:
                active["run"] = None
                self._fail(runs, run, exc)
            if g.dead:
                run.done = True
                live -= 1
        active["run"] = None
        if live:
            blocked = [r for r in runs if not r.done]
            report = _deadlock_report(blocked, len(runs))
            self._abort(runs)
            raise DeadlockError(report)

    def _fail(self, runs: list[KernelRun], run: KernelRun, exc: BaseException) -> None:
        """A kernel raised: report (before unwinding the others), abort, re-raise."""
        if isinstance(exc, WatchdogInterrupt):
            raise self._livelock(runs, run, exc) from None
        if isinstance(exc, KeyboardInterrupt):
            self._interrupted(runs, run, exc)
            raise exc
        self._abort(runs)
        _annotate(exc, run)
        raise exc

    def _interrupted(
        self, runs: list[KernelRun], run: KernelRun | None, exc: KeyboardInterrupt
    ) -> None:
        """Ctrl-C: keep the KeyboardInterrupt, add where every kernel was as a note."""
        loc = location_of_exception(exc) if run is not None else None
        who = f"while {run.label} was running" if run is not None else "between two kernels"
        exc.add_note(self._report(runs, run, f"interrupted (Ctrl-C) {who}", loc))
        setattr(exc, _REPORTED, True)
        self._abort(runs)

    def _livelock(
        self, runs: list[KernelRun], run: KernelRun | None, exc: WatchdogInterrupt
    ) -> DeadlockError:
        loc = location_of_exception(exc) if run is not None else None
        limit = self.options.watchdog
        who = run.label if run is not None else "the scheduler"
        headline = (
            f"livelock: {who} ran for {limit:g} s without reaching a synchronisation point "
            "(a DFB, circular-buffer, transfer or semaphore wait)"
        )
        report = self._report(runs, run, headline, loc)
        self._abort(runs)
        err = DeadlockError(report, loc=loc, rule="livelock", hint=_WATCHDOG_HINT)
        if run is not None:
            err.add_note(f"in {run.label}")
        return err

    def _report(self, runs: list[KernelRun], running: KernelRun | None, headline: str, loc) -> str:
        """Every unfinished kernel: where it is and what it waits for (before unwinding)."""
        unfinished = [r for r in runs if not r.done]
        lines = [f"{headline} ({len(unfinished)} of {len(runs)} kernels unfinished)"]
        for r in unfinished:
            if r is running:
                at = f" at {loc}" if loc is not None else ""
                lines.append(
                    f"  {r.label}: running{at}; last synchronisation: {r.describe_last_wait()}"
                )
                lines.extend(_holdings(r))
            else:
                lines.extend(_kernel_lines(r))
        return "\n".join(lines)

    def _claim(self) -> None:
        """Take the device for a launch on this thread (one launch at a time per device)."""
        me = threading.get_ident()
        with self._claim_lock:
            if self.running:
                if self._owner == me:
                    raise KernelError("a launch is already running on this device (nested launch)")
                raise DeviceError(
                    f"{self.name} is running a launch in another thread; a device runs one "
                    "launch at a time",
                    hint="open one device per thread (ttnn.open_device(device_id=...)), or "
                    "serialise the threads' use of the shared device with a lock",
                )
            self.running = True
            self._owner = me

    def _release(self) -> None:
        with self._claim_lock:
            self.running = False
            self._owner = None

    def progress(self) -> tuple[object, int, int]:
        """A value that changes at every scheduler step (read by the watchdog's thread).

        Every switch into a kernel follows a block or a poll of that kernel (or is its
        first), which bumps its wait or poll count; so an unchanged value means the
        same kernel has run without yielding.  Nothing is counted on the hot path.
        """
        run = self.current
        if run is None:
            return (None, 0, 0)
        return (run, run.stats_waits, run.stats_polls)

    def _abort(self, runs: list[KernelRun]) -> None:
        """Unwind every suspended kernel (runs its ``finally`` blocks) after a failure."""
        for r in runs:
            g = r.greenlet
            if g is not None and not g.dead and g:
                ACTIVE.run = self.current = r
                try:
                    g.throw(GreenletExit)
                except BaseException:  # the kernel's own cleanup failed; the first error wins
                    pass
        ACTIVE.run = self.current = None
        self._ready.clear()


def _kernel_main(run: KernelRun) -> None:
    result = run.fn(*run.args)
    if result is not None:
        _check_not_deferred(run, result)


def _check_not_deferred(run: KernelRun, result: object) -> None:
    """A generator or ``async`` kernel returns without running its body: say so here,
    instead of letting its partners deadlock."""
    code = (
        getattr(result, "gi_code", None)
        or getattr(result, "cr_code", None)
        or getattr(result, "ag_code", None)
    )
    if code is None:
        return
    kind = "an async function" if hasattr(result, "cr_code") else "a generator function"
    if hasattr(result, "ag_code"):
        kind = "an async generator function"
    close = getattr(result, "close", None)
    if close is not None:
        close()  # no "coroutine was never awaited" warning
    raise KernelError(
        f"kernel {run.name} is {kind}: calling it only creates a "
        f"{type(result).__name__} object, so its body never runs",
        loc=SourceLoc(code.co_filename, code.co_firstlineno),
        hint="write kernels as plain functions (no yield, no async def)",
    )


_WATCHDOG_HINT = (
    "kernels take turns: a loop that waits for another kernel must wait on a DFB, "
    "semaphore or transfer, not spin; if the kernel just needs longer, raise the limit "
    "(tilewright run --watchdog SECONDS, EngineOptions(watchdog=...); 0 turns it off)"
)
_REPORTED = "_tilewright_reported"  # set on a KeyboardInterrupt once its report is noted


def _annotate(exc: BaseException, run: KernelRun) -> None:
    """Add the node/kernel to an error raised inside a kernel, keeping its type."""
    if isinstance(exc, TilewrightError) and exc.loc is None:
        exc.loc = location_of_exception(exc)
    if hasattr(exc, "add_note"):
        exc.add_note(f"in {run.label}")


def location_of_exception(exc: BaseException) -> SourceLoc | None:
    """The innermost user frame (outside Tilewright) of an exception's traceback."""
    tb = exc.__traceback__
    loc = None
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not internal_frame(name) and not name.startswith("<"):
            loc = SourceLoc(name, tb.tb_lineno)
        tb = tb.tb_next
    return loc


def _kernel_lines(r: KernelRun) -> list[str]:
    """One suspended kernel of a report: blocked (where, on what) or ready, and its holdings."""
    frame = r.greenlet.gr_frame if r.greenlet is not None else None
    loc = user_location(frame) if frame is not None else None
    where = f" at {loc}" if loc is not None else ""
    if r.waiting_on is not None:
        lines = [f"  {r.label}: blocked{where}: {r.describe_wait()}"]
    elif frame is None:
        lines = [f"  {r.label}: ready, not started"]
    else:
        lines = [f"  {r.label}: ready{where}"]
    lines.extend(_holdings(r))
    return lines


def _holdings(r: KernelRun) -> list[str]:
    """What a language layer says the kernel holds (TT-Lang: its blocks and their states)."""
    extra = getattr(r.context, "extra", None)
    describe = getattr(extra, "describe_holdings", None)
    return [f"    {line}" for line in describe(r)] if describe is not None else []


def _deadlock_report(blocked: list[KernelRun], total: int) -> str:
    lines = [
        f"deadlock: no kernel can make progress ({len(blocked)} of {total} kernels blocked, "
        f"{total - len(blocked)} finished)"
    ]
    for r in blocked:
        lines.extend(_kernel_lines(r))
    return "\n".join(lines)
