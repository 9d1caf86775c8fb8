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

from tilewright.compiler.backend.ir import Var
from tilewright.compiler.backend.lower.values import DFBInfo
from tilewright.errors import BlockStateError
from tilewright.lang.blockstate import Context, Op, State, check_and_apply

__all__ = ["Held", "Handle", "Tracker", "Outcome", "probe"]

StateSet = frozenset[tuple[State, int]]


@dataclass(frozen=True, slots=True)
class Held:
    """One acquired, not yet released block."""

    site: int
    dfb: DFBInfo
    reserve: bool
    compute: bool
    states: StateSet
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


class _Probe:
    """What ``check_and_apply`` reads and writes of a block."""

    __slots__ = ("state", "ror", "context", "_text")

    def __init__(self, state: State, ror: int, context: Context, text: str) -> None:
        self.state, self.ror, self.context, self._text = state, ror, context, text

    def describe(self) -> str:
        return self._text


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of an operation on a block in every state it can be in."""

    states: StateSet | None  # the states after (None: every state fails)
    error: str | None  # the interpreter's message when every state fails
    mixed: bool = False  # some states allow the operation, some do not


def probe(held: Held, op: Op) -> Outcome:
    """Run the interpreter's check on each possible state of ``held``."""
    after: set[tuple[State, int]] = set()
    errors: list[str] = []
    for state, ror in sorted(held.states):
        p = _Probe(state, ror, held.context, held.describe())
        try:
            check_and_apply(p, op)
        except BlockStateError as exc:
            errors.append(exc.message)
            continue
        after.add((p.state, p.ror))
    if errors and after:
        return Outcome(frozenset(after), None, mixed=True)
    if errors:
        return Outcome(
            None, errors[0] if len(set(errors)) == 1 else None, mixed=len(set(errors)) > 1
        )
    return Outcome(frozenset(after), None)


@dataclass(slots=True)
class Tracker:
    """Held blocks and live handles at one point of a kernel."""

    held: dict[int, Held] = field(default_factory=dict)
    queues: dict[tuple[int, bool], tuple[int, ...]] = field(default_factory=dict)
    handles: dict[int, Handle] = field(default_factory=dict)

    def copy(self) -> Tracker:
        return Tracker(dict(self.held), dict(self.queues), dict(self.handles))

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

    def shape_key(self) -> tuple:
        """What must agree where control flow joins: held sites and their order."""
        return tuple(sorted((k, v) for k, v in self.queues.items() if v))

    def pending_key(self) -> tuple:
        """Transfers started and not waited yet (they must agree where paths join)."""
        return tuple(sorted(i for i, h in self.handles.items() if not h.waited))

    def join(self, other: Tracker) -> Tracker:
        """Both paths' facts: state sets united (held sites must agree)."""
        out = self.copy()
        for site, h in other.held.items():
            mine = out.held.get(site)
            if mine is not None:
                out.held[site] = replace(
                    mine, states=mine.states | h.states, version=max(mine.version, h.version)
                )
        for hid, hd in other.handles.items():
            if hid not in out.handles:
                out.handles[hid] = hd
        return out
