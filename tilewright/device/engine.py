"""The engine: runs every kernel of every core, deterministically.

One ``Engine`` per device (one per mesh: its chips share it).  A launch hands it
``KernelRun`` records (core, kernel, callable); Python kernels run as greenlets, native
(C++) kernels as fibers of the native runtime (``NativeDriver``).  The scheduler keeps
a FIFO ready queue -- a ring of run indices in shared memory (``device/shared.py``), so
native code makes runs ready and picks the next native one without Python -- and
switches into each kernel in turn.  A kernel runs until it *blocks*:
``Engine.block(queue, what, detail)`` puts the running kernel on the wait queue of the
thing it waits for (a circular buffer, a semaphore, a transfer) and switches back to
the scheduler.  State changes call ``wake()``, which moves exactly that queue's
waiters to the back of the ready queue (SimPy's resource pattern: no polling of
blocked kernels).  ``WaitQueue`` holds Python runs waiting on a Python object;
``SharedQueue`` is a wait list in shared memory (circular-buffer ends, semaphore
words) that native code also appends to and wakes.

When the ready queue is empty and kernels are still alive, nothing can ever
change: the engine raises :class:`~tilewright.errors.DeadlockError` listing every
blocked kernel with its place, its source line (from the suspended greenlet's
frame, or the C++ line a native kernel waits at, resolved only now) and what it
waits for, described by the waited-on object itself.  A *livelock* is reported the
same way (``rule == "livelock"``): kernels that keep polling without any kernel
making progress, or a kernel that runs longer than ``EngineOptions.watchdog`` seconds
without yielding (:mod:`~tilewright.device.watchdog` interrupts it; a native kernel is
stopped by the native driver).  Ctrl-C during a launch keeps its
``KeyboardInterrupt`` and gets the same report as a note.

Threads: the running engine and kernel (``ACTIVE``) are per OS thread, so devices
can run launches concurrently in different threads.  One engine runs one launch at a
time; a second thread launching on a busy device gets a ``DeviceError``.

Time is logical and deterministic: every kernel carries a cycle ``clock`` that
the kernel API advances by modelled costs; a woken kernel's clock moves up to its
waker's.  Trace events and statistics use these clocks, so the same program gives
the same trace.
"""

from __future__ import annotations

import _thread
import ctypes
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, TypeAlias

from greenlet import GreenletExit, greenlet

from tilewright.device.perf.state import PerfRun
from tilewright.device.shared import (
    NO_RUN,
    EngineHeader,
    RunKind,
    RunPhase,
    RunState,
    WaitList,
)
from tilewright.device.watchdog import WATCHDOG, WatchdogInterrupt
from tilewright.errors import (
    DeadlockError,
    DeviceError,
    KernelError,
    SourceLoc,
    TilewrightError,
    traceback_location,
    user_location,
)

if TYPE_CHECKING:
    from tilewright.device.trace import Recorder, Tracer

# The engine sits below the cores (device.device) and the launch (device.launch) in the
# package's layer order (tests/test_layers.py): a run's core and kernel context are
# theirs, so they are typed ``Any`` here rather than imported.
Core: TypeAlias = Any
KernelContext: TypeAlias = Any

__all__ = [
    "ACTIVE",
    "DEFAULT_WATCHDOG_SECONDS",
    "Engine",
    "EngineOptions",
    "KernelRun",
    "LaunchReuse",
    "Mail",
    "WaitQueue",
    "SharedQueue",
    "NativeDriver",
    "current_run",
    "current_engine",
    "deadlock_headline",
    "finished",
]


class _Active(_thread._local):
    """Per OS thread: the running engine and kernel, set at every switch.

    Kernel APIs read ``ACTIVE.run`` / ``ACTIVE.engine`` in O(1).  A ``_thread._local``
    subclass with class-level defaults is the cheapest per-thread record Python offers
    (a read costs 50-100 ns against 16-20 ns for a slotted process-wide record;
    benchmarks/bench_robustness.py).  The engine's own hot paths (``block``,
    ``poll_yield``, ``WaitQueue.wake``) do not read it, and the scheduler stores the
    running kernel through the thread's ``__dict__`` (a plain dict store).
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


DEFAULT_WATCHDOG_SECONDS = 10.0
"""How long a kernel may run without yielding before the watchdog calls it a livelock."""


def busy_error(name: str) -> DeviceError:
    """A launch from a thread while another thread's launch runs on the device (docs/robustness.md)."""
    return DeviceError(
        f"{name} is running a launch in another thread; a device runs one launch at a time",
        hint="open one device per thread (ttnn.open_device(device_id=...)), or "
        "serialise the threads' use of the shared device with a lock",
    )


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
    dry_run: bool = False
    """Keep the protocol, block states, deadlock detection and the device-time model but
    skip the numeric payload (``tilewright run --dry-run``): NoC copies move no bytes and
    block math computes nothing, so results are meaningless and times are kept."""

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
        engine = waiters[0].engine
        if engine is None or not engine.running:  # waiters only queue while their engine runs
            raise KernelError("a wait queue was woken outside a launch")
        waker = engine.current
        now = waker.clock if waker is not None else engine.moment
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
        engine = run.engine
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
        engine = ACTIVE.engine  # the waker's (this thread's) launch
        if engine is None:
            raise KernelError("a wait queue was woken outside a launch")
        lst.head = lst.tail = NO_RUN
        waker = engine.current
        now = waker.clock if waker is not None else engine.moment
        runs = engine.runs
        while i != NO_RUN:
            nxt = runs[i].state.next
            engine.make_ready(i, now)
            i = nxt

    def reset(self) -> None:
        self.waiters.head = self.waiters.tail = NO_RUN


class Mail(Protocol):
    """Deliveries held back until the schedule is quiescent (the fabric's packets,
    ``device/fabric.py``): ``round(engine)`` delivers what is pending and says whether
    it delivered anything (kernels may be ready again); ``discard()`` drops it after a
    failure."""

    def round(self, engine: Engine) -> bool: ...

    def discard(self) -> None: ...


class NativeDriver(Protocol):
    """Runs the native kernels of a launch (tilewright.native.driver provides it).

    ``resume(i)`` runs native run ``i`` and then every native run at the head of the
    ready ring, all in native code; it returns ``(status, run index)``: IDLE (the ring
    is empty), PYTHON (a Python run is next), REQUEST (run ``j`` asks Python for
    something: ``serve(j)``, then ``resume(j)``) or FAILED (``error(j)``).
    ``interrupt(thread_id)`` stops the native code that thread is running (the
    watchdog's livelock); True if it did.
    """

    def attach(self, engine: Engine, runs: list[KernelRun], cache: dict | None = None) -> None: ...

    def resume(self, index: int) -> tuple[int, int]: ...

    def serve(self, index: int) -> None: ...

    def error(self, index: int) -> BaseException: ...

    def describe_wait(self, run: KernelRun) -> tuple[str, SourceLoc | None]: ...

    def interrupt(self, thread_id: int) -> bool: ...

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

    def reset(self) -> None:
        """Back to the state of a run that never ran (a launch plan starts it again)."""
        self.greenlet = None
        self.state = _UNSET_STATE
        self.engine = None
        self.waiting_on = self.last_wait = None
        self.clock = self.wait_start = 0
        self.index = -1
        self.done = False
        self.stats_blocked = self.stats_waits = self.stats_ops = self.stats_polls = 0
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


_UNSET_STATE = RunState()
"""The run-table entry of a run between launches (``_setup`` gives it its launch's)."""


class LaunchReuse:
    """What the engine and the native driver keep between launches of one launch plan
    (device/launch.py), so that a warm launch does not set up every run again: the run
    table and the ready ring as the plan's first launch set them up (restored by one
    copy each), the runs' table entries, and the driver's own ``cache``.

    The plan owns it and a changed plan gets a new one, so nothing here is checked
    against the program: only that it is the same run list of the same engine."""

    __slots__ = (
        "runs",
        "engine",
        "states",
        "ring",
        "states_init",
        "ring_init",
        "views",
        "python",
        "natives",
        "driver",
    )

    def __init__(self) -> None:
        self.runs: list[KernelRun] | None = None  # the plan's run list (by identity)
        self.engine: Engine | None = None
        self.states: ctypes.Array[RunState] | None = None
        self.ring: ctypes.Array[ctypes.c_int32] | None = None
        self.states_init = b""
        self.ring_init = b""
        self.views: list[RunState] = []
        self.python: list[KernelRun] = []
        self.natives: list[KernelRun] = []
        self.driver: dict = {}  # the native driver's (tilewright.native.driver)

    def valid_for(self, engine: Engine, runs: list[KernelRun]) -> bool:
        return self.states is not None and self.runs is runs and self.engine is engine


@dataclass(slots=True)
class RunStats:
    place: str
    kernel: str
    slot: str
    cycles: int
    blocked_cycles: int
    waits: int
    ops: int
    perf: PerfRun | None = None
    """The device-time model's view of the run at its end (a copy; device/perf/state.py)."""


class LaunchResult:
    """What one launch did: per-kernel statistics and (optionally) trace events.

    ``stats`` is built when first read, from a copy of the launch's run table taken at
    its end (a warm launch of 192 runs would otherwise spend half a millisecond on
    records nobody reads unless ``--stats``, a trace or a report asks)."""

    __slots__ = ("_stats", "_pending", "_raw", "makespan", "dispatch_ns", "recorded")

    def __init__(
        self,
        stats: list[RunStats] | None = None,
        makespan: int = 0,
        dispatch_ns: int = 0,
        recorded: bool = False,
    ) -> None:
        self._stats: list[RunStats] = stats if stats is not None else []
        self._pending: Callable[[], list[RunStats]] | None = None
        self._raw: tuple | None = None  # (runs, python counters, run table) of an engine run
        self.makespan = makespan
        """Modelled cycles from the first kernel start to the last kernel end."""
        self.dispatch_ns = dispatch_ns
        """Modelled dispatch of the program before its kernels start (device/perf/dispatch.py)."""
        self.recorded = recorded
        """Already kept for ``--stats`` / ``--perf-report`` (one record per launch)."""

    def raw_stats(self) -> RawStats:
        """The statistics before they are built (:data:`RawStats`): what a worker process
        sends back, a few bytes per run instead of a record per run."""
        if self._raw is None:  # pragma: no cover - every engine run keeps its raw form
            raise DeviceError("this launch result was not made by an engine run")
        runs, python, table = self._raw
        return [(r.place, r.name, r.slot) for r in runs], python, table

    @property
    def stats(self) -> list[RunStats]:
        """Per-kernel statistics, one per run in launch order."""
        pending = self._pending
        if pending is not None:
            self._pending = None
            self._stats = pending()
        return self._stats

    def __repr__(self) -> str:
        return (
            f"LaunchResult(runs={len(self.stats)}, makespan={self.makespan}, "
            f"dispatch_ns={self.dispatch_ns})"
        )


RunLabel = tuple[str, str, str]
"""A run's (place, kernel name, slot): what names it in statistics."""
RawStats = tuple[list[RunLabel], list[tuple[int, int, int, int] | None], bytes]
"""A finished launch's statistics before they are built (:func:`stats_from_raw`): the runs'
labels, the Python runs' own counters (None for a native run) and the run table's bytes."""


def stats_from_raw(raw: RawStats) -> list[RunStats]:
    """The statistics of a finished launch from the copy of its run table and its Python
    runs' own counters (built when first read; a worker process sends the raw form)."""
    labels, python, table = raw
    size = ctypes.sizeof(RunState)
    out = []
    for i, ((place, name, slot), own) in enumerate(zip(labels, python)):
        st = RunState.from_buffer_copy(table, i * size)
        if own is None:
            cycles, blocked_cycles, waits, ops = st.clock, st.blocked, st.waits, st.ops
        else:
            cycles, blocked_cycles, waits, ops = own
        perf = PerfRun.from_buffer_copy(st.perf)
        out.append(RunStats(place, name, slot, cycles, blocked_cycles, waits, ops, perf))
    return out


class Engine:
    """Cooperative, deterministic scheduler of kernel greenlets and native fibers.

    The ready queue is a ring of run indices in shared memory (``EngineHeader``), so
    native code can make runs ready and pick the next one without Python.
    """

    def __init__(self, options: EngineOptions | None = None, *, name: str = "device") -> None:
        self.options = options or EngineOptions()
        self.name = name
        self._sched: greenlet | None = None
        self.current: KernelRun | None = None
        """The Python kernel running now (or last), set at every switch."""
        self.moment = 0
        """The waker's clock when no kernel wakes (``mail`` delivering a packet that
        arrives at that time)."""
        self.mail: Mail | None = None
        """Deliveries made when no kernel is ready (a mesh's fabric packets)."""
        self.running = False
        self._owner: int | None = None  # thread id running a launch
        self._claim_lock = threading.Lock()
        self.tracer: Tracer | Recorder | None = None  # while tracing (Recorder: in a worker)
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
        if self.tracer is not None:
            # A native run's wait started in native code (wait_on sets its state's).
            start = run.wait_start if run.native is None else run.state.wait_start
            if now > start:
                self.tracer.span(run, "wait", start, now, {"on": run.wait_desc})
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

    def at(self, when: int, deliver: Callable[[], None]) -> None:
        """Call ``deliver`` (a write that wakes its waiters) as if at time ``when``, with no
        kernel as the waker: ``mail`` landing a packet that arrives then."""
        prev = self.current
        self.current = None
        self.moment = when
        try:
            deliver()
        finally:
            self.current = prev
            self.moment = 0

    # -- called from kernels ---------------------------------------------------------------

    def block(
        self, queue: WaitQueue | SharedQueue | None, what: Waitable, detail: object = None
    ) -> None:
        """Suspend the running kernel on ``queue`` until a ``wake``; ``what.describe_wait(detail)``
        explains the wait in a deadlock report.  ``queue`` None: the run is already on a
        shared wait list (native code queued it)."""
        run, sched = self.current, self._sched
        if run is None or sched is None:
            raise KernelError(_OUTSIDE_KERNEL)
        wait = (what, detail)
        run.waiting_on = run.last_wait = wait
        run.stats_waits += 1
        run.wait_start = run.clock
        st = run.state
        if st is not None:  # what native code reads when it wakes this run
            st.clock = run.clock
            st.blocked = run.stats_blocked
            st.phase = RunPhase.BLOCKED
        if self.tracer is not None:
            run.wait_desc = what.describe_wait(detail)
            if st is not None:  # native code that wakes this run records the wait
                st.wait_start = run.clock
        if queue is not None:
            queue.add(run)
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
        if self._spins > self.options.poll_limit * (self._tail - self._head + 1):
            # Only pollers are left: as quiescent as an empty ring, so pending packets land.
            if self.mail is not None and self.mail.round(self):
                self._spins = 0
            else:
                self._livelock_polling(run, what, detail)
        spins = self._spins
        self.make_ready(run.index, 0)
        self._spins = spins
        sched.switch()

    def _livelock_polling(self, run: KernelRun, what: Waitable, detail: object) -> NoReturn:
        loc = user_location()
        headline = (
            f"livelock: {run.label} keeps polling without any kernel making progress "
            f"({self._spins} polls in a row, EngineOptions.poll_limit "
            f"{self.options.poll_limit}): {what.describe_wait(detail)}"
        )
        raise DeadlockError(self._report(self.runs, run, headline, loc), loc=loc, rule="livelock")

    # -- called by the host ------------------------------------------------------------------

    def _setup_again(self, runs: list[KernelRun], reuse: LaunchReuse) -> None:
        """``_setup`` of a launch plan's runs set up before: the run table and the ring
        copied back to how that launch started, fresh greenlets for the Python runs."""
        states, ring = reuse.states, reuse.ring
        assert states is not None and ring is not None
        ctypes.memmove(states, reuse.states_init, len(reuse.states_init))
        ctypes.memmove(ring, reuse.ring_init, len(reuse.ring_init))
        n = len(runs)
        cap = len(ring)
        self._new_header(n, states, ring)
        self.states, self.ring, self.runs = states, ring, runs
        for i, (r, st) in enumerate(zip(runs, reuse.views)):
            r.index = i
            r.engine = self
            r.state = st
        sched = self._sched
        for r in reuse.python:
            r.greenlet = greenlet(_kernel_main, parent=sched)
        self._head, self._tail, self._mask, self._spins, self._live = 0, n, cap - 1, 0, n
        natives = reuse.natives
        if natives:
            driver: NativeDriver = getattr(natives[0].native, "driver")  # noqa: B009 - a protocol
            self.driver = driver
            driver.attach(self, natives, reuse.driver)

    def _new_header(self, n: int, states, ring) -> None:
        """The header the scheduler and the native runtime share, for ``n`` runs."""
        hdr = self.header = EngineHeader()
        hdr.n_runs = n
        hdr.live = n
        hdr.poll_limit = self.options.poll_limit
        hdr.ring_mask = len(ring) - 1
        hdr.trace = self.tracer is not None
        hdr.runs = ctypes.addressof(states)
        hdr.ring = ctypes.addressof(ring)

    def _keep_setup(self, runs: list[KernelRun], reuse: LaunchReuse) -> None:
        """Remember the set-up of a plan's first launch for ``_setup_again``."""
        reuse.runs, reuse.engine = runs, self
        reuse.states, reuse.ring = self.states, self.ring
        reuse.states_init = ctypes.string_at(
            ctypes.addressof(self.states), ctypes.sizeof(self.states)
        )
        reuse.ring_init = ctypes.string_at(ctypes.addressof(self.ring), ctypes.sizeof(self.ring))
        reuse.views = [r.state for r in runs]
        reuse.python = [r for r in runs if r.native is None]
        reuse.natives = [r for r in runs if r.native is not None]

    def _setup(self, runs: list[KernelRun], reuse: LaunchReuse | None = None) -> None:
        n = len(runs)
        cap = 1 << max(1, n).bit_length()
        self.states = (RunState * n)()
        self.ring = (ctypes.c_int32 * cap)()
        self._new_header(n, self.states, self.ring)
        self.runs = runs
        for i, r in enumerate(runs):
            r.index = i
            r.engine = self
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
            driver.attach(self, natives, reuse.driver if reuse is not None else None)

    def run(self, runs: Iterable[KernelRun], reuse: LaunchReuse | None = None) -> LaunchResult:
        """Run kernels to completion (or raise the first kernel error / a deadlock).

        ``reuse``: a launch plan's record (``LaunchReuse``); with the plan's own run list
        the runs are set up again from it, else they are set up and it remembers how."""
        again = reuse is not None and isinstance(runs, list) and reuse.valid_for(self, runs)
        plan_runs = runs if reuse is not None and isinstance(runs, list) else None
        runs = list(runs)
        self._claim()
        self.launch_count += 1
        active = ACTIVE
        prev_engine, prev_run = active.engine, active.run
        active.engine = self
        self._sched = greenlet.getcurrent()
        self.current = None
        limit = self.options.watchdog
        try:
            watch = WATCHDOG.watch(self, limit) if limit else None
            if watch is not None:
                watch.interrupters.append(self._interrupt_native)
            try:
                try:
                    if again:
                        assert reuse is not None
                        self._setup_again(runs, reuse)
                    else:
                        self._setup(runs, reuse)
                        if reuse is not None and plan_runs is not None:
                            self._keep_setup(plan_runs, reuse)
                    self._loop(runs)
                finally:
                    if watch is not None:
                        WATCHDOG.unwatch(watch)
                if self._live:
                    blocked = [r for r in runs if not finished(r)]
                    report = _deadlock_report(blocked, len(runs), self.driver)
                    self._abort(runs)
                    raise DeadlockError(report)
            except WatchdogInterrupt as exc:  # arrived in scheduler code, between two kernels
                raise self._livelock(runs, None, exc) from None
            except KeyboardInterrupt as exc:
                if not getattr(exc, _REPORTED, False):  # arrived in scheduler code
                    self._interrupted(runs, None, exc)
                raise
        finally:
            active.engine, active.run = prev_engine, prev_run
            self.current = None
            if self.driver is not None:
                self.driver.detach()
                self.driver = None
            self._release()
        result = LaunchResult()
        python: list[tuple[int, int, int, int] | None] = []
        makespan = 0
        for r in runs:
            if r.native is None:
                python.append((r.clock, r.stats_blocked, r.stats_waits, r.stats_ops))
            else:
                python.append(None)
                r.clock = r.state.clock
            if r.clock > makespan:
                makespan = r.clock
        states = self.states
        table = ctypes.string_at(ctypes.addressof(states), ctypes.sizeof(states))
        result._pending = lambda: stats_from_raw(result.raw_stats())
        result._raw = (runs, python, table)
        result.makespan = makespan
        if self.tracer is not None:
            self.tracer.end_launch(result.makespan)
        return result

    def _loop(self, runs: list[KernelRun]) -> None:
        # This thread's ACTIVE record as a plain dict: a store into it costs a third of
        # a thread-local attribute store, and the loop stores the running kernel per step.
        active = ACTIVE.__dict__
        while True:
            i = self._pop_ready()
            if i == NO_RUN:
                active["run"] = None
                mail = self.mail
                if mail is not None and mail.round(self):
                    continue  # packets landed: their waiters are ready
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
            active["run"] = self.current = run
            g = run.greenlet
            if g is None:  # every Python run of this launch got its greenlet in _setup
                raise KernelError(f"{run.label} is not a kernel of this launch")
            try:
                g.switch(run)
            except BaseException as exc:
                active["run"] = None
                self._fail(runs, run, exc)
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
            ACTIVE.run = self.current = run
            try:
                driver.serve(j)
            except BaseException as exc:
                ACTIVE.run = None
                self._fail(self.runs, run, exc)
            self.sync_to_native()
            status, j = driver.resume(j)
        self.sync_from_native()
        ACTIVE.run = None
        if status == FAILED:
            self._fail(self.runs, self.runs[j], driver.error(j))

    def _fail(self, runs: list[KernelRun], run: KernelRun, exc: BaseException) -> None:
        """A kernel raised (or native code failed): report before unwinding the others,
        abort, re-raise."""
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
        loc = _interrupt_location(exc) if run is not None else None
        who = f"while {run.label} was running" if run is not None else "between two kernels"
        report = self._report(runs, run, f"interrupted (Ctrl-C) {who}", loc)
        exc.__notes__ = [report, *getattr(exc, "__notes__", ())]  # the report first
        setattr(exc, _REPORTED, True)
        self._abort(runs)

    def _livelock(
        self, runs: list[KernelRun], run: KernelRun | None, exc: WatchdogInterrupt
    ) -> DeadlockError:
        loc = _interrupt_location(exc) if run is not None else None
        limit = self.options.watchdog or 0
        who = run.label if run is not None else "the scheduler"
        inside = " in native code" if getattr(exc, "native", False) else ""
        headline = (
            f"livelock: {who} ran{inside} for {limit:g} s without reaching a synchronisation "
            "point (a DFB, circular-buffer, transfer or semaphore wait)"
        )
        report = self._report(runs, run, headline, loc)
        self._abort(runs)
        err = DeadlockError(report, loc=loc, rule="livelock", hint=_WATCHDOG_HINT)
        for note in getattr(exc, "__notes__", ()):  # where native code was stopped
            err.add_note(note)
        if run is not None:
            err.add_note(f"in {run.label}")
        return err

    def _report(self, runs: list[KernelRun], running: KernelRun | None, headline: str, loc) -> str:
        """Every unfinished kernel: where it is and what it waits for (before unwinding)."""
        unfinished = [r for r in runs if not finished(r)]
        lines = [f"{headline} ({len(unfinished)} of {len(runs)} kernels unfinished)"]
        for r in unfinished:
            if r is running:
                at = f" at {loc}" if loc is not None else ""
                last = r.describe_last_wait() if r.native is None else "in native code"
                lines.append(f"  {r.label}: running{at}; last synchronisation: {last}")
                lines.extend(_holdings(r))
            else:
                lines.extend(_kernel_lines(r, self.driver))
        return "\n".join(lines)

    def _claim(self) -> None:
        """Take the engine for a launch on this thread (one launch at a time per engine)."""
        me = threading.get_ident()
        with self._claim_lock:
            if self.running:
                if self._owner == me:
                    raise KernelError("a launch is already running on this device (nested launch)")
                raise busy_error(self.name)
            self.running = True
            self._owner = me

    def _release(self) -> None:
        with self._claim_lock:
            self.running = False
            self._owner = None

    def progress(self) -> tuple[object, ...]:
        """A value that changes at every scheduler step (read by the watchdog's thread).

        Every switch into a Python kernel follows a block or a poll of that kernel (or is
        its first), which bumps its wait or poll count; every switch between native
        fibers moves the ring's head.  So an unchanged value means the same kernel has run
        without yielding.  Nothing is counted on the hot path.  A thread waiting for
        another thread's native code (one thread runs native code at a time) is making
        progress: a fresh value each time.
        """
        hdr = self.header
        if hdr.lock_wait:
            return (object(),)
        run = self.current
        if run is None:
            return (None, 0, 0, self._head, hdr.ring_head)
        return (run, run.stats_waits, run.stats_polls, self._head, hdr.ring_head)

    def _interrupt_native(self, thread_id: int) -> bool:
        """The watchdog's native interrupter: stop native code ``thread_id`` is running."""
        driver = self.driver
        return driver is not None and driver.interrupt(thread_id)

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
        self._head = self._tail
        if self.mail is not None:
            self.mail.discard()


def finished(r: KernelRun) -> bool:
    """Whether a run of the last launch ran to its end (Python or native)."""
    return r.done or r.state.phase == RunPhase.DONE


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


def _interrupt_location(exc: BaseException) -> SourceLoc | None:
    """Where an interruption found the kernel: the C++ line native code was at (set by
    the native driver as ``exc.where``), else the user's innermost frame."""
    where = getattr(exc, "where", None)
    if isinstance(where, SourceLoc):
        return where
    return traceback_location(exc)


def _annotate(exc: BaseException, run: KernelRun) -> None:
    """Add the node/kernel to an error raised inside a kernel, keeping its type."""
    if isinstance(exc, TilewrightError) and exc.loc is None:
        exc.loc = traceback_location(exc)
    if hasattr(exc, "add_note"):
        exc.add_note(f"in {run.label}")


def _kernel_lines(r: KernelRun, driver: NativeDriver | None) -> list[str]:
    """One suspended kernel of a report: blocked (where, on what) or ready, and its holdings."""
    if r.native is not None:
        if r.state.phase != RunPhase.BLOCKED or driver is None:
            return [f"  {r.label}: ready"]
        text, loc = driver.describe_wait(r)
        where = f" at {loc}" if loc is not None else ""
        return [f"  {r.label}: blocked{where}: {text}"]
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


def deadlock_headline(blocked: int, total: int) -> str:
    """The first line of a deadlock report (also of one merged from several processes'
    shares of a launch, ``distributed/``)."""
    return (
        f"deadlock: no kernel can make progress ({blocked} of {total} kernels blocked, "
        f"{total - blocked} finished)"
    )


def _deadlock_report(blocked: list[KernelRun], total: int, driver: NativeDriver | None) -> str:
    lines = [deadlock_headline(len(blocked), total)]
    for r in blocked:
        lines.extend(_kernel_lines(r, driver))
    return "\n".join(lines)
