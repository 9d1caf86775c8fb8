"""The engine: runs every kernel of every core, deterministically.

One ``Engine`` per device.  A launch hands it ``KernelRun`` records (core, kernel,
callable); Python kernels run as greenlets, native (C++) kernels as fibers of the
native runtime (``NativeDriver``).  The scheduler keeps a FIFO ready queue -- a ring
of run indices in shared memory (``device/shared.py``), so native code makes runs
ready and picks the next native one without Python -- and switches into each kernel
in turn.  A kernel runs until it *blocks*: ``Engine.block(queue, what, detail)`` puts
the running kernel on the wait queue of the thing it waits for (a circular buffer,
a semaphore, a transfer) and switches back to the scheduler.  State changes call
``wake()``, which moves exactly that queue's waiters to the back of the ready queue
(SimPy's resource pattern: no polling of blocked kernels).  ``WaitQueue`` holds
Python runs waiting on a Python object; ``SharedQueue`` is a wait list in shared
memory (circular-buffer ends, semaphore words) that native code also appends to and
wakes.

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

import ctypes
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from greenlet import GreenletExit, greenlet

from tilewright.device.shared import (
    NO_RUN,
    EngineHeader,
    RunKind,
    RunPhase,
    RunState,
    WaitList,
)
from tilewright.errors import (
    DeadlockError,
    KernelError,
    SourceLoc,
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
    "SharedQueue",
    "NativeDriver",
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
    """Kernels waiting for one Python object to change state (pipes, barriers, ...)."""

    __slots__ = ("waiters",)

    def __init__(self) -> None:
        self.waiters: list[KernelRun] = []

    def add(self, run: KernelRun) -> None:
        self.waiters.append(run)

    def wake(self) -> None:
        """Move every waiter to the ready queue (FIFO); call after a state change."""
        waiters = self.waiters
        if not waiters:
            return
        engine = ACTIVE.engine
        if engine is None:  # waiters are only queued while their engine runs
            raise KernelError("a wait queue was woken outside a launch")
        now = ACTIVE.run.clock if ACTIVE.run is not None else 0
        for run in waiters:
            engine.make_ready(run.index, now)
        waiters.clear()


class SharedQueue:
    """A wait list in shared memory (a CB end, a semaphore word): Python and native kernels
    wait on the same list, linked through ``RunState.next`` of the running launch."""

    __slots__ = ("waiters",)

    def __init__(self, waiters: WaitList) -> None:
        self.waiters = waiters  # the WaitList fields inside shared state

    def add(self, run: KernelRun) -> None:
        engine = ACTIVE.engine
        if engine is None:
            raise KernelError("a kernel waits outside a launch")
        lst = self.waiters
        i = run.index
        run.state.next = NO_RUN
        tail = lst.tail
        if tail == NO_RUN:
            lst.head = i
        else:
            engine.runs[tail].state.next = i
        lst.tail = i

    def wake(self) -> None:
        lst = self.waiters
        i = lst.head
        if i == NO_RUN:
            return
        engine = ACTIVE.engine
        if engine is None:
            raise KernelError("a wait queue was woken outside a launch")
        lst.head = lst.tail = NO_RUN
        now = ACTIVE.run.clock if ACTIVE.run is not None else 0
        runs = engine.runs
        while i != NO_RUN:
            nxt = runs[i].state.next
            engine.make_ready(i, now)
            i = nxt

    def reset(self) -> None:
        self.waiters.head = self.waiters.tail = NO_RUN


class NativeDriver(Protocol):
    """Runs the native kernels of a launch (tilewright.native.runtime provides it).

    ``resume(i)`` runs native run ``i`` and then every native run at the head of the
    ready ring, all in native code; it returns ``(status, run index)``: IDLE (the ring
    is empty), PYTHON (a Python run is next), REQUEST (run ``j`` asks Python for
    something: ``serve(j)``, then ``resume(j)``) or FAILED (``error(j)``).
    """

    def attach(self, engine: Engine, runs: list[KernelRun]) -> None: ...

    def resume(self, index: int) -> tuple[int, int]: ...

    def serve(self, index: int) -> None: ...

    def error(self, index: int) -> BaseException: ...

    def describe_wait(self, run: KernelRun) -> tuple[str, SourceLoc | None]: ...

    def detach(self) -> None: ...


IDLE, PYTHON, REQUEST, FAILED = 0, 1, 2, 3
"""Status codes of ``NativeDriver.resume``."""


class KernelRun:
    """One kernel running on one core: its greenlet (or native fiber), clock, wait state
    and statistics."""

    __slots__ = (
        "core",
        "place",
        "name",
        "slot",
        "fn",
        "args",
        "greenlet",
        "native",
        "state",
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
        native: object = None,
    ) -> None:
        self.core = core
        self.place = place if place is not None else f"core {core.logical}"
        self.name = name
        self.slot = slot
        self.fn = fn
        self.args = args
        self.greenlet: greenlet | None = None
        self.native = native  # a native kernel (its ``driver`` runs it), None for Python
        self.state = RunState()  # this run's entry in the launch's run table (set per launch)
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
    """Cooperative, deterministic scheduler of kernel greenlets and native fibers.

    The ready queue is a ring of run indices in shared memory (``EngineHeader``), so
    native code can make runs ready and pick the next one without Python.
    """

    def __init__(self, options: EngineOptions | None = None) -> None:
        self.options = options or EngineOptions()
        self._sched: greenlet | None = None
        self.running = False
        self.tracer: Tracer | None = None  # while tracing
        self.launch_count = 0
        self.header = EngineHeader()
        self.states: ctypes.Array[RunState] = (RunState * 0)()
        self.ring: ctypes.Array[ctypes.c_int32] = (ctypes.c_int32 * 1)()
        self.runs: list[KernelRun] = []
        self.driver: NativeDriver | None = None
        # Ring indices and the poll counter as Python ints while Python schedules;
        # published to the header around native code (sync_to_native / _from_native).
        self._head = self._tail = self._mask = self._spins = self._live = 0

    # -- the ready ring ----------------------------------------------------------------------

    def make_ready(self, index: int, now: int) -> None:
        """Wake run ``index`` at time ``now`` (the waker's clock): to the back of the ring."""
        run = self.runs[index]
        if self.tracer is not None and now > run.wait_start:
            self.tracer.span(run, "wait", run.wait_start, now, {"on": run.wait_desc})
        if run.native is None:
            if run.clock < now:
                run.stats_blocked += now - run.clock
                run.clock = now
        else:
            st = run.state
            if st.clock < now:
                st.blocked += now - st.clock
                st.clock = now
            st.phase = RunPhase.READY
        tail = self._tail
        self.ring[tail & self._mask] = index
        self._tail = tail + 1
        self._spins = 0

    def _pop_ready(self) -> int:
        head = self._head
        if head == self._tail:
            return NO_RUN
        self._head = head + 1
        return self.ring[head & self._mask]

    def sync_to_native(self) -> None:
        """Publish the ring indices and counters before native code runs."""
        hdr = self.header
        hdr.ring_head = self._head & 0xFFFFFFFF
        hdr.ring_tail = self._tail & 0xFFFFFFFF
        hdr.spins = self._spins
        hdr.live = self._live

    def sync_from_native(self) -> None:
        """Take back the ring indices and counters after native code ran."""
        hdr = self.header
        self._head = hdr.ring_head
        tail = hdr.ring_tail
        self._tail = tail if tail >= self._head else tail + (1 << 32)
        self._spins = hdr.spins
        self._live = hdr.live

    # -- called from kernels ---------------------------------------------------------------

    def block(
        self, queue: WaitQueue | SharedQueue | None, what: Waitable, detail: object = None
    ) -> None:
        """Suspend the running kernel on ``queue`` until a ``wake``; ``what.describe_wait(detail)``
        explains the wait in a deadlock report.  ``queue`` None: the run is already on a
        shared wait list (native code queued it)."""
        run, sched = ACTIVE.run, self._sched
        if run is None or sched is None:
            raise KernelError(_OUTSIDE_KERNEL)
        run.waiting_on = (what, detail)
        run.stats_waits += 1
        run.wait_start = run.clock
        st = run.state
        if st is not None:  # what native code reads when it wakes this run
            st.clock = run.clock
            st.blocked = run.stats_blocked
            st.phase = RunPhase.BLOCKED
        if self.tracer is not None:
            run.wait_desc = what.describe_wait(detail)
        if queue is not None:
            queue.add(run)
        self._spins = 0
        sched.switch()

    def poll_yield(self, what: Waitable, detail: object = None) -> None:
        """A non-blocking query failed: let others run, and detect endless polling."""
        run, sched = ACTIVE.run, self._sched
        if run is None or sched is None:
            raise KernelError(_OUTSIDE_KERNEL)
        self._spins += 1
        if self._spins > self.options.poll_limit * (self._tail - self._head + 1):
            run.waiting_on = (what, detail)
            raise DeadlockError(
                f"deadlock: {run.label} keeps polling without any kernel making progress: "
                f"{run.describe_wait()}",
                loc=user_location(),
            )
        spins = self._spins
        self.make_ready(run.index, 0)
        self._spins = spins
        sched.switch()

    # -- called by the host ------------------------------------------------------------------

    def _setup(self, runs: list[KernelRun]) -> None:
        n = len(runs)
        cap = 1 << max(1, n).bit_length()
        self.states = (RunState * n)()
        self.ring = (ctypes.c_int32 * cap)()
        hdr = self.header = EngineHeader()
        hdr.n_runs = n
        hdr.live = n
        hdr.poll_limit = self.options.poll_limit
        hdr.ring_mask = cap - 1
        hdr.trace = self.tracer is not None
        hdr.runs = ctypes.addressof(self.states)
        hdr.ring = ctypes.addressof(self.ring)
        self.runs = runs
        for i, r in enumerate(runs):
            r.index = i
            st = r.state = self.states[i]
            st.next = NO_RUN
            st.core = getattr(r.core, "index", 0)
            st.clock = r.clock
            self.ring[i] = i
            if r.native is None:
                st.kind = RunKind.PYTHON
                r.greenlet = greenlet(_kernel_main, parent=self._sched)
            else:
                st.kind = RunKind.NATIVE
        self._head, self._tail, self._mask, self._spins, self._live = 0, n, cap - 1, 0, n
        natives = [r for r in runs if r.native is not None]
        if natives:
            driver: NativeDriver = getattr(natives[0].native, "driver")  # noqa: B009 - a protocol
            self.driver = driver
            driver.attach(self, natives)

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
        try:
            self._setup(runs)
            self._loop(runs)
            if self._live:
                blocked = [r for r in runs if r.state.phase != RunPhase.DONE and not r.done]
                report = _deadlock_report(blocked, len(runs), self.driver)
                self._abort(runs)
                raise DeadlockError(report)
        finally:
            ACTIVE.engine, ACTIVE.run = prev_engine, prev_run
            self.running = False
            if self.driver is not None:
                self.driver.detach()
                self.driver = None
        result = LaunchResult()
        for r in runs:
            st = r.state
            if r.native is None or st is None:
                cycles, blocked_cycles, waits, ops = (
                    r.clock,
                    r.stats_blocked,
                    r.stats_waits,
                    r.stats_ops,
                )
            else:
                cycles, blocked_cycles, waits, ops = st.clock, st.blocked, st.waits, st.ops
                r.clock = cycles
            result.stats.append(
                RunStats(r.place, r.name, r.slot, cycles, blocked_cycles, waits, ops)
            )
        result.makespan = max((s.cycles for s in result.stats), default=0)
        if self.tracer is not None:
            self.tracer.end_launch(result.makespan)
        return result

    def _loop(self, runs: list[KernelRun]) -> None:
        while True:
            i = self._pop_ready()
            if i == NO_RUN:
                ACTIVE.run = None
                return
            run = runs[i]
            if run.native is not None:
                self._run_native(i)
                continue
            st = run.state
            if st.woken:  # native code woke it: its clock may have moved
                run.clock = st.clock
                run.stats_blocked = st.blocked
                st.woken = 0
            run.waiting_on = None
            ACTIVE.run = run
            g = run.greenlet
            if g is None:  # every Python run of this launch got its greenlet in _setup
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
                st.phase = RunPhase.DONE
                self._live -= 1

    def _run_native(self, index: int) -> None:
        driver = self.driver
        if driver is None:  # pragma: no cover - _setup attaches the driver of native runs
            raise KernelError("a native kernel run without a native driver")
        self.sync_to_native()
        status, j = driver.resume(index)
        while status == REQUEST:
            self.sync_from_native()
            run = self.runs[j]
            ACTIVE.run = run
            try:
                driver.serve(j)
            except BaseException as exc:
                ACTIVE.run = None
                self._abort(self.runs)
                _annotate(exc, run)
                raise
            self.sync_to_native()
            status, j = driver.resume(j)
        self.sync_from_native()
        ACTIVE.run = None
        if status == FAILED:
            run = self.runs[j]
            error = driver.error(j)
            self._abort(self.runs)
            _annotate(error, run)
            raise error

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
        self._head = self._tail


def _kernel_main(run: KernelRun) -> None:
    run.fn(*run.args)


def _annotate(exc: BaseException, run: KernelRun) -> None:
    """Add the node/kernel to an error raised inside a kernel, keeping its type."""
    if isinstance(exc, TilewrightError) and exc.loc is None:
        exc.loc = traceback_location(exc)
    if hasattr(exc, "add_note"):
        exc.add_note(f"in {run.label}")


def _deadlock_report(blocked: list[KernelRun], total: int, driver: NativeDriver | None) -> str:
    lines = [
        f"deadlock: no kernel can make progress ({len(blocked)} of {total} kernels blocked, "
        f"{total - len(blocked)} finished)"
    ]
    for r in blocked:
        where = ""
        if r.native is not None and driver is not None:
            text, loc = driver.describe_wait(r)
            if loc is not None:
                where = f" at {loc}"
            lines.append(f"  {r.label}: blocked{where}: {text}")
            continue
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
