"""Acquired blocks at compile time: which blocks a kernel holds, and their states.

The interpreter checks the block state machine (``lang.blockstate``) and the DFB
protocol (``lang.dfb``) as kernels run.  The compiler proves them statically: it
follows every acquisition (a *site*: one ``reserve()`` / ``wait()`` in the code)
through the kernel, with the set of states the block can be in at each point, and
runs the interpreter's own ``check_and_apply`` on each of them.  An operation every
state allows is emitted without a check; one no state allows is emitted as a
``fail`` op that raises the interpreter's exact error when execution reaches it; a
state that depends on the path taken (some states allow, some do not) is not
compilable.  Held blocks are a FIFO per DFB and side, as in the interpreter, so the
position of each block in its circular buffer -- its tile offset from the CB's read
or write pointer -- is known statically.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from tilewright.compiler.backend.lower.values import DFBInfo
from tilewright.errors import BlockStateError
from tilewright.kir.ir import Var
from tilewright.lang.blockstate import Context, Op, State, check_and_apply

__all__ = ["Held", "Handle", "NodeStates", "Tracker", "Outcome", "probe"]

StateSet = frozenset[tuple[State, int]]
NodeStates = tuple[StateSet, ...]  # per node of the grid (node order of the setups)


@dataclass(frozen=True, slots=True)
class Held:
    """One acquired, not yet released block."""

    site: int
    dfb: DFBInfo
    reserve: bool
    compute: bool
    states: NodeStates
    name: str | None = None
    pending: tuple[int, ...] = ()  # transfer handles not waited yet, in issue order
    version: int = 0  # bumped by every store into the block
    addr: Var | None = None  # data movement: the local holding its L1 address

    @property
    def context(self) -> Context:
        if self.compute:
            return Context.CK_RESERVE if self.reserve else Context.CK_WAIT
        return Context.DM_RESERVE if self.reserve else Context.DM_WAIT

    def describe(self) -> str:
        """The interpreter's ``TensorBlock.describe()``."""
        acq = "reserved from" if self.reserve else "waited from"
        who = f"block '{self.name}'" if self.name else "a block"
        return f"{who} ({acq} DFB '{self.dfb.name}')"


@dataclass(frozen=True, slots=True)
class Handle:
    """A transfer handle (``ttl.copy`` result)."""

    hid: int
    site: int | None
    direction: str  # "read" (into the block) | "write" (out of it) | "send" | "recv"
    waited: bool = False
    pipe: object = None  # pipe copies: the PipeRef
    slice: object = None  # tensor copies: the SliceRef (what the transfer moves)


class _Probe:
    """What ``check_and_apply`` reads and writes of a block."""

    __slots__ = ("state", "ror", "context", "_text")

    def __init__(self, state: State, ror: int, context: Context, text: str) -> None:
        self.state, self.ror, self.context, self._text = state, ror, context, text

    def describe(self) -> str:
        return self._text


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of an operation on a block in every state it can be in on the active nodes."""

    states: NodeStates | None  # the states after (None: every active node fails)
    error: str | None  # the interpreter's message when every active node fails
    mixed: bool = False  # some states allow the operation, some do not


_PROBES: dict[tuple, tuple[StateSet | None, str | None]] = {}


def _probe_set(
    states: StateSet, op: Op, context: Context, text: str
) -> tuple[StateSet | None, str | None]:
    """(states after, None) if every state allows ``op``; (None, message) if none does;
    (None, None) if some do."""
    key = (states, op, context, text)
    hit = _PROBES.get(key)
    if hit is not None:
        return hit
    after: set[tuple[State, int]] = set()
    errors: list[str] = []
    for state, ror in sorted(states):
        p = _Probe(state, ror, context, text)
        try:
            check_and_apply(p, op)
        except BlockStateError as exc:
            errors.append(exc.message)
            continue
        after.add((p.state, p.ror))
    if errors and after:
        result: tuple[StateSet | None, str | None] = (None, None)
    elif errors:
        result = (None, errors[0] if len(set(errors)) == 1 else None)
    else:
        result = (frozenset(after), None)
    if len(_PROBES) > 65536:
        _PROBES.clear()
    _PROBES[key] = result
    return result


def probe(held: Held, op: Op, active: tuple[bool, ...]) -> Outcome:
    """Run the interpreter's check on each possible state of ``held`` on the active nodes."""
    text = held.describe()
    after: list[StateSet] = []
    errors: set[str] = set()
    ok = failed = mixed = False
    for on, states in zip(active, held.states):
        if not on:
            after.append(states)
            continue
        new, error = _probe_set(states, op, held.context, text)
        if new is not None:
            ok = True
            after.append(new)
        elif error is not None:
            failed = True
            errors.add(error)
            after.append(states)
        else:
            mixed = True
            after.append(states)
    if mixed or (ok and failed) or len(errors) > 1:
        return Outcome(None, None, mixed=True)
    if failed:
        return Outcome(None, errors.pop())
    return Outcome(tuple(after), None)


@dataclass(slots=True)
class Tracker:
    """Held blocks and live handles at one point of a kernel, and the nodes that reach it."""

    active: tuple[bool, ...]
    held: dict[int, Held] = field(default_factory=dict)
    queues: dict[tuple[int, bool], tuple[int, ...]] = field(default_factory=dict)
    handles: dict[int, Handle] = field(default_factory=dict)

    def copy(self) -> Tracker:
        return Tracker(self.active, dict(self.held), dict(self.queues), dict(self.handles))

    @property
    def dead(self) -> bool:
        """No node reaches this point: the path raised (a ``fail`` op) or jumped away
        (``break`` / ``continue``); what follows on it never runs."""
        return not any(self.active)

    def kill(self) -> None:
        """The path ends here (see :attr:`dead`)."""
        self.active = tuple(False for _ in self.active)

    def queue(self, dfb: DFBInfo, reserve: bool) -> tuple[int, ...]:
        return self.queues.get((dfb.index, reserve), ())

    def position(self, site: int) -> int:
        h = self.held[site]
        return self.queue(h.dfb, h.reserve).index(site)

    def acquire(self, held: Held) -> None:
        key = (held.dfb.index, held.reserve)
        self.queues[key] = (*self.queues.get(key, ()), held.site)
        self.held[held.site] = held

    def release(self, site: int) -> None:
        h = self.held.pop(site)
        key = (h.dfb.index, h.reserve)
        self.queues[key] = tuple(s for s in self.queues[key] if s != site)

    def update(self, site: int, **changes: object) -> None:
        self.held[site] = replace(self.held[site], **changes)  # type: ignore[arg-type]

    def uniform(self, state: StateSet) -> NodeStates:
        """``state`` on every node."""
        return tuple(state for _ in self.active)

    def shape_key(self) -> tuple:
        """What must agree where control flow joins: held sites and their order."""
        return tuple(sorted((k, v) for k, v in self.queues.items() if v))

    def pending_key(self) -> tuple:
        """Transfers started and not waited yet (they must agree where paths join)."""
        return tuple(sorted(i for i, h in self.handles.items() if not h.waited))

    def grew(self, entry: Tracker) -> bool:
        """Some node can be in a state here that it could not be in at ``entry``."""
        for site, h in entry.held.items():
            mine = self.held[site]
            if any(not a <= b for a, b in zip(mine.states, h.states)):
                return True
        return False

    def join(self, other: Tracker) -> Tracker:
        """Both paths' facts: per node, the states of the paths that reach it (united);
        a dead path contributes nothing."""
        if other.dead:
            return self.copy()
        if self.dead:
            return other.copy()
        out = self.copy()
        for site, h in other.held.items():
            mine = out.held.get(site)
            if mine is None:
                continue
            states = []
            for a_on, b_on, a, b in zip(self.active, other.active, mine.states, h.states):
                states.append(a | b if a_on and b_on else a if a_on else b if b_on else a)
            out.held[site] = replace(
                mine, states=tuple(states), version=max(mine.version, h.version)
            )
        for hid, hd in other.handles.items():
            if hid not in out.handles:
                out.handles[hid] = hd
        out.active = tuple(a or b for a, b in zip(self.active, other.active))
        return out
