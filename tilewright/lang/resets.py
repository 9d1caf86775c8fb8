"""DFB allocation groups, synchronized resets and reconfiguration boundaries (reference A.4, A.8).

Declarations (created by an enclosing factory and captured by the operation):

* ``ttl.make_dfb_allocation_group()`` -> ``DFBAllocationGroup``: an identity; DFBs
  declared with the same ``allocation_group=`` share one physical index and L1
  range (one FIFO ring; ``dfb_alloc`` validates and places them).
* ``ttl.DFBReset(participants=(...))``: one compute and two data-movement
  participants (reference G.2: the newest rule, for the 1 + 2 slot table).
* ``ttl.DFBReconfiguration(participants=(...), discard_dfb_state=False)``.

Run time (every target; the reference lowers these on Blackhole only, G.19):
``ttl.reset_dfbs(reset, dfbs=[...])`` / ``ttl.reset_all_dfbs(reset)`` /
``ttl.reconfigure_dfbs(boundary)`` synchronise the participating kernels of the
node (a barrier: each participant blocks until all have arrived); the last arrival
then resets the listed DFBs' circular buffers to empty (pointers, counters;
configuration and payload bytes are kept).  No block of a reset DFB may be held.
A reconfiguration without ``discard_dfb_state`` requires every DFB to be empty at
the boundary; with it, every DFB is reset.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from tilewright.device.engine import ACTIVE, WaitQueue, current_engine
from tilewright.errors import DFBContractError, InterfaceError, KernelError, user_location
from tilewright.lang import state
from tilewright.lang.dfb import DataflowBuffer
from tilewright.lang.node import NodeSetup
from tilewright.lang.selectors import Kernel, KernelKind, PipeSourceKernel, logical_kernel_of

__all__ = [
    "DFBAllocationGroup",
    "DFBReconfiguration",
    "DFBReset",
    "make_dfb_allocation_group",
    "reconfigure_dfbs",
    "reset_all_dfbs",
    "reset_dfbs",
]


class DFBAllocationGroup:
    """An allocation-group identity: its DFBs share one physical allocation (reference A.4)."""

    __slots__ = ("__weakref__",)

    def __repr__(self) -> str:
        return "<ttl.DFBAllocationGroup>"


def make_dfb_allocation_group() -> DFBAllocationGroup:
    """A new allocation group (``allocation_group=`` of the DFB factories)."""
    return DFBAllocationGroup()


def _check_participants(what: str, participants) -> tuple:
    loc = user_location()
    if not isinstance(participants, tuple) or not participants:
        raise InterfaceError(f"{what} participants must be a nonempty tuple", loc=loc)
    seen: list = []
    for p in participants:
        if not isinstance(p, (KernelKind, Kernel, PipeSourceKernel)):
            raise InterfaceError(
                f"{what} participants must contain only KernelKind or Kernel values, got {type(p).__name__}",
                loc=loc,
            )
        if any(p is q for q in seen):
            raise InterfaceError(f"{what} participants must be distinct", loc=loc)
        seen.append(p)
    kinds = [p if isinstance(p, KernelKind) else p.kind for p in participants]
    if kinds.count(KernelKind.COMPUTE) != 1 or kinds.count(KernelKind.DATA_MOVEMENT) != 2:
        raise InterfaceError(
            f"{what} participants must contain one compute kernel and two data movement kernels",
            loc=loc,
        )
    return participants


@dataclass(frozen=True, eq=False, init=False)
class DFBReset:
    """A worker-local synchronized DFB reset declaration (reference A.8)."""

    participants: tuple

    def __init__(self, participants: tuple[object, ...]) -> None:  # errors locate the user's line
        object.__setattr__(self, "participants", _check_participants("DFBReset", participants))

    def fresh_copy(self) -> DFBReset:
        """A distinct declaration with the same participants (one per composed call site)."""
        return DFBReset(participants=self.participants)


@dataclass(frozen=True, eq=False, init=False)
class DFBReconfiguration:
    """An epoch boundary between DFB configurations (reference A.8)."""

    participants: tuple
    discard_dfb_state: bool

    def __init__(self, participants: tuple[object, ...], discard_dfb_state: bool = False) -> None:
        object.__setattr__(
            self, "participants", _check_participants("DFBReconfiguration", participants)
        )
        if not isinstance(discard_dfb_state, bool):
            raise InterfaceError(
                f"DFBReconfiguration discard_dfb_state must be a bool, got {type(discard_dfb_state).__name__}",
                loc=user_location(),
            )
        object.__setattr__(self, "discard_dfb_state", discard_dfb_state)

    def fresh_copy(self) -> DFBReconfiguration:
        return DFBReconfiguration(
            participants=self.participants, discard_dfb_state=self.discard_dfb_state
        )


# -- run time -----------------------------------------------------------------------------------


class _Barrier:
    """The participants of one declaration on one node, for one launch."""

    __slots__ = ("arrived", "expected", "generation", "node", "queue", "what")

    def __init__(self, what: str, expected: dict[str, str], node) -> None:
        self.what = what
        self.expected = expected  # kernel name -> participant description
        self.arrived: list[str] = []
        self.generation = 0
        self.queue = WaitQueue()
        self.node = node

    def describe_wait(self, _detail) -> str:
        missing = [d for name, d in self.expected.items() if name not in self.arrived]
        return (
            f"{self.what}: waiting for the other participants on node {self.node} "
            f"({', '.join(missing)} not arrived)"
        )


class _Barriers(threading.local):
    """The barriers of the launch running on this thread (threads launch independently)."""

    def __init__(self) -> None:
        self.launch: object = None
        self.table: dict = {}


_BARRIERS = _Barriers()


def _barrier(launch, run, declaration, what: str) -> _Barrier:
    barriers = _BARRIERS
    if barriers.launch is not launch:
        barriers.launch, barriers.table = launch, {}
    key = (run.core.index, id(declaration))
    barrier = barriers.table.get(key)
    if barrier is None:
        setup = launch.setups[run.core.index]
        expected = _participant_kernels(setup, declaration, what)
        barrier = barriers.table[key] = _Barrier(what, expected, setup.node)
    return barrier


def _participant_kernels(setup, declaration, what: str) -> dict[str, str]:
    """Kernel names on this node for each participant selector."""
    decls = setup.kernels
    explicit = any(d.selector is not None for d in decls)
    logical = [
        logical_kernel_of(d.selector, d.kind, d.name, None) if explicit else None for d in decls
    ]
    by_kind = {k: [d for d in decls if d.kind == k] for k in ("compute", "data_movement")}
    out: dict[str, str] = {}
    for p in declaration.participants:
        found = None
        if isinstance(p, Kernel):
            found = next(
                (d for d, lk in zip(decls, logical) if lk is not None and lk.handle is p), None
            )
            text = repr(p)
        elif isinstance(p, PipeSourceKernel):
            found = next(
                (d for d, lk in zip(decls, logical) if lk is not None and lk.role == "pipe_source"),
                None,
            )
            if found is None and not explicit and len(by_kind["data_movement"]) > 1:
                found = by_kind["data_movement"][-1]
            text = "data_movement kernel '<pipe_source>'"
        else:
            kind = p.value
            found = next(
                (
                    d
                    for d, lk in zip(decls, logical)
                    if lk is not None and lk.role == "canonical" and lk.kind == kind
                ),
                None,
            )
            if found is None and not explicit and by_kind[kind]:
                found = by_kind[kind][0]
            text = kind
        if found is None:
            raise KernelError(
                f"{what}: participant {text} is not a kernel of operation '{setup.op.name}'"
            )
        out[found.name] = text
    return out


def _synchronize(declaration, what: str, action: Callable[[NodeSetup], None]) -> None:
    run = ACTIVE.run
    launch = state.CURRENT
    if run is None or launch is None:
        raise KernelError(f"{what} runs inside a kernel of a running @ttl.operation")
    barrier = _barrier(launch, run, declaration, what)
    if run.name not in barrier.expected:
        raise KernelError(
            f"{what}: kernel '{run.name}' is not a participant ({', '.join(barrier.expected.values())})"
        )
    barrier.arrived.append(run.name)
    generation = barrier.generation
    if len(set(barrier.arrived)) < len(barrier.expected):
        while barrier.generation == generation:
            current_engine().block(barrier.queue, barrier, None)
        return
    action(launch.setups[run.core.index])
    barrier.arrived = []
    barrier.generation += 1
    barrier.queue.wake()


def _held(dfb) -> str | None:
    # The DFB's acquired-but-unreleased blocks (its own bookkeeping, read-only here).
    held = dfb.held_blocks()
    if not held:
        return None
    return ", ".join(f"{b.describe()} held by kernel '{b.run.name}'" for b in held)


def _reset_each(dfbs: Iterable[DataflowBuffer], what: str) -> None:
    for dfb in dfbs:
        reset_interface(dfb, what)


def reset_interface(dfb, what: str) -> None:
    """Empty a DFB's circular buffer: pointers and counters back to the start."""
    held = _held(dfb)
    if held:
        raise DFBContractError(
            f"{what}: DFB '{dfb.name}' is reset while {held}; release blocks before the reset"
        )
    cb = dfb.circular_buffer()
    cb.reset_interface()
    guard = getattr(dfb, "share_guard", None)
    if guard is not None:
        guard.reset(dfb)
    if cb.back_q.waiters:
        cb.back_q.wake()


def reset_dfbs(reset: DFBReset, /, *, dfbs: Sequence[DataflowBuffer]) -> None:
    """Synchronise the reset's participants and reset ``dfbs`` to empty (reference A.8)."""
    what = "ttl.reset_dfbs"
    if not isinstance(reset, DFBReset):
        raise KernelError(f"{what}(reset, ...) takes a ttl.DFBReset, got {type(reset).__name__}")
    given = list(dfbs) if isinstance(dfbs, (list, tuple)) else None
    if (
        not given
        or not all(isinstance(d, DataflowBuffer) for d in given)
        or len({id(d) for d in given}) != len(given)
    ):
        raise KernelError(
            f"{what}(reset, dfbs=[...]): dfbs must be a nonempty list of distinct DFBs"
        )
    _synchronize(reset, what, lambda _setup: _reset_each(given, what))


def reset_all_dfbs(reset: DFBReset, /) -> None:
    """``reset_dfbs`` for every DFB of the node."""
    what = "ttl.reset_all_dfbs"
    if not isinstance(reset, DFBReset):
        raise KernelError(f"{what}(reset) takes a ttl.DFBReset, got {type(reset).__name__}")
    _synchronize(reset, what, lambda setup: _reset_each(setup.dfbs, what))


def reconfigure_dfbs(boundary: DFBReconfiguration, /) -> None:
    """An epoch boundary: synchronise the participants; discard or require empty DFB state."""
    what = "ttl.reconfigure_dfbs"
    if not isinstance(boundary, DFBReconfiguration):
        raise KernelError(
            f"{what}(boundary) takes a ttl.DFBReconfiguration, got {type(boundary).__name__}"
        )

    def action(setup) -> None:
        for dfb in setup.dfbs:
            if boundary.discard_dfb_state:
                reset_interface(dfb, what)
                continue
            held = _held(dfb)
            filled = dfb.filled_blocks()
            if held or filled:
                state_text = held or f"{filled} filled block(s)"
                raise DFBContractError(
                    f"{what}: DFB '{dfb.name}' still has {state_text} at the epoch boundary; consume it "
                    "before the boundary or declare the boundary with discard_dfb_state=True"
                )

    _synchronize(boundary, what, action)
