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
object itself.

Time is logical and deterministic: every kernel carries a cycle ``clock`` that
the kernel API advances by modelled costs; a woken kernel's clock moves up to its
waker's.  Trace events and statistics use these clocks, so the same program gives
the same trace.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from greenlet import GreenletExit, greenlet

from tilewright.errors import (
    DeadlockError,
    KernelError,
    TilewrightError,
    traceback_location,
    user_location,
)

if TYPE_CHECKING:
    from tilewright.device.trace import Tracer

# The engine sits below the cores (device.device) and the launch (device.launch) in the
# package's layer order (tests/test_layers.py): a run's core and kernel context are
# theirs, so they are typed ``Any`` here rather than imported.
Core: TypeAlias = Any
KernelContext: TypeAlias = Any

__all__ = [
    "ACTIVE",
    "Engine",
    "EngineOptions",
    "KernelRun",
    "WaitQueue",
    "current_run",
    "current_engine",
]


class _Active:
    """The running engine and kernel, set at every switch (O(1) access for kernel APIs)."""

    __slots__ = ("engine", "run")

    def __init__(self) -> None:
        self.engine: Engine | None = None
        self.run: KernelRun | None = None


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


@dataclass(frozen=True, slots=True)
class EngineOptions:
    """Engine switches, fixed for one device (one options object, never env lookups)."""

    trace: bool = False
    """Record trace events (Chrome/Perfetto JSON via ``Trace``)."""
    poll_limit: int = 4096
    """Consecutive fruitless polls (non-blocking queries) tolerated per ready kernel."""


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
        engine = ACTIVE.engine
        if engine is None:  # waiters are only queued while their engine runs
            raise KernelError("a wait queue was woken outside a launch")
        now = ACTIVE.run.clock if ACTIVE.run is not None else 0
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
        "waiting_on",
        "clock",
        "index",
        "done",
        "stats_blocked",
        "stats_waits",
        "stats_ops",
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
        self.waiting_on: tuple[Waitable, object] | None = None
        self.clock = 0
        self.index = -1
        self.done = False
        self.stats_blocked = 0
        self.stats_waits = 0
        self.stats_ops = 0
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

    def __init__(self, options: EngineOptions | None = None) -> None:
        self.options = options or EngineOptions()
        self._ready: deque[KernelRun] = deque()
        self._sched: greenlet | None = None
        self._spins = 0
        self.running = False
        self.tracer: Tracer | None = None  # while tracing
        self.launch_count = 0

    # -- called from kernels ---------------------------------------------------------------

    def block(self, queue: WaitQueue, what: Waitable, detail: object = None) -> None:
        """Suspend the running kernel on ``queue`` until a ``wake``; ``what.describe_wait(detail)``
        explains the wait in a deadlock report."""
        run, sched = ACTIVE.run, self._sched
        if run is None or sched is None:
            raise KernelError(_OUTSIDE_KERNEL)
        run.waiting_on = (what, detail)
        run.stats_waits += 1
        run.wait_start = run.clock
        if self.tracer is not None:
            run.wait_desc = what.describe_wait(detail)
        queue.waiters.append(run)
        self._spins = 0
        sched.switch()

    def poll_yield(self, what: Waitable, detail: object = None) -> None:
        """A non-blocking query failed: let others run, and detect endless polling."""
        run, sched = ACTIVE.run, self._sched
        if run is None or sched is None:
            raise KernelError(_OUTSIDE_KERNEL)
        self._spins += 1
        if self._spins > self.options.poll_limit * (len(self._ready) + 1):
            run.waiting_on = (what, detail)
            raise DeadlockError(
                f"deadlock: {run.label} keeps polling without any kernel making progress: "
                f"{run.describe_wait()}",
                loc=user_location(),
            )
        self._ready.append(run)
        sched.switch()

    # -- called by the host ------------------------------------------------------------------

    def run(self, runs: Iterable[KernelRun]) -> LaunchResult:
        """Run kernels to completion (or raise the first kernel error / a deadlock)."""
        runs = list(runs)
        if self.running:
            raise KernelError("a launch is already running on this device (nested launch)")
        self.running = True
        self.launch_count += 1
        prev_engine, prev_run = ACTIVE.engine, ACTIVE.run
        ACTIVE.engine = self
        self._sched = greenlet.getcurrent()
        self._ready = deque(runs)
        self._spins = 0
        for i, r in enumerate(runs):
            r.index = i
            r.greenlet = greenlet(_kernel_main, parent=self._sched)
        live = len(runs)
        ready = self._ready
        try:
            while ready:
                run = ready.popleft()
                ACTIVE.run = run
                g = run.greenlet
                if g is None:  # every run of this launch got its greenlet above
                    raise KernelError(f"{run.label} is not a kernel of this launch")
                try:
                    g.switch(run)
                except BaseException as exc:
                    ACTIVE.run = None
                    self._abort(runs)
                    _annotate(exc, run)
                    raise
                if g.dead:
                    run.done = True
                    live -= 1
            ACTIVE.run = None
            if live:
                blocked = [r for r in runs if not r.done]
                report = _deadlock_report(blocked, len(runs))
                self._abort(runs)
                raise DeadlockError(report)
        finally:
            ACTIVE.engine, ACTIVE.run = prev_engine, prev_run
            self.running = False
            self._ready = deque()
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

    def _abort(self, runs: list[KernelRun]) -> None:
        """Unwind every suspended kernel (runs its ``finally`` blocks) after a failure."""
        for r in runs:
            g = r.greenlet
            if g is not None and not g.dead and g:
                ACTIVE.run = r
                try:
                    g.throw(GreenletExit)
                except BaseException:  # the kernel's own cleanup failed; the first error wins
                    pass
        ACTIVE.run = None
        self._ready.clear()


def _kernel_main(run: KernelRun) -> None:
    run.fn(*run.args)


def _annotate(exc: BaseException, run: KernelRun) -> None:
    """Add the node/kernel to an error raised inside a kernel, keeping its type."""
    if isinstance(exc, TilewrightError) and exc.loc is None:
        exc.loc = traceback_location(exc)
    if hasattr(exc, "add_note"):
        exc.add_note(f"in {run.label}")


def _deadlock_report(blocked: list[KernelRun], total: int) -> str:
    lines = [
        f"deadlock: no kernel can make progress ({len(blocked)} of {total} kernels blocked, "
        f"{total - len(blocked)} finished)"
    ]
    for r in blocked:
        where = ""
        frame = r.greenlet.gr_frame if r.greenlet is not None else None
        if frame is not None:
            loc = user_location(frame)
            if loc is not None:
                where = f" at {loc}"
        lines.append(f"  {r.label}: blocked{where}: {r.describe_wait()}")
        # A language layer may say what the kernel holds (TT-Lang: its blocks and their states).
        extra = getattr(r.context, "extra", None)
        describe = getattr(extra, "describe_holdings", None)
        if describe is not None:
            for line in describe(r):
                lines.append(f"    {line}")
    return "\n".join(lines)
