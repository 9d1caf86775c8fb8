"""May two logical DFBs share a physical index?  The pairwise proofs of reference C.7.

``ReuseProver.may_share(a, b)`` applies the rules in order and returns the verdict
with the reason the allocator writes into the DFB's note:

1. reuse enabled (``--no-ttl-reuse-user-dfbs`` disables it);
2. identical circular-buffer type: block shape, block count, data format, layout,
   tile, page size;
3. a split plan (explicit operations have none: never share);
4. both lifecycles bounded (``split.lifecycle``: exactly-once transactions, native
   or external ``dfb_effects``; no plain-value use; opaque external occurrences
   terminated by a reset);
5. not dependencies of one external call (one operation reads or writes both);
6. launch-node domains (``split.domains``): DFBs used only on disjoint node sets
   need no order (every node has at most one of them live); an unknown domain
   conflicts;
7. identical transaction tile counts (each dividing the capacity);
8. the same pointer owners (producer and consumer kernels);
9. happens-before: every end of one DFB's lifetime -- its terminal pop, its
   inspections and opaque accesses, resets of it alone -- happens before every
   event of the other (program order, push -> wait, barriers); a read-only
   inspection only needs to precede the other's writers (reserve, push, opaque).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tilewright.compiler.scope import Scope
from tilewright.compiler.split.domains import GuardError, nodes_of
from tilewright.compiler.split.lifecycle import Reach
from tilewright.compiler.split.plan import DFBEvent, DFBFacts

if TYPE_CHECKING:
    from tilewright.compiler.record import OperationRecord
    from tilewright.compiler.split.plan import SplitPlan

__all__ = ["ReuseProver", "type_difference"]

# Events of the later DFB that only read the shared index: a read-only inspection of the
# earlier DFB needs to happen before its writers (reserve, push, opaque access), not these.
_READ_ONLY = ("wait", "pop", "use")

_TYPE_FIELDS = ("block shape", "block count", "data format", "layout", "tile", "page size")


def _type_key(d) -> tuple:
    return (
        d.shape,
        d.block_count,
        d.data_format,
        d.tiled,
        (d.tile.height, d.tile.width),
        d.page_size,
    )


def type_difference(a, b) -> str | None:
    """Why two DFBs' circular-buffer types differ (C.7 rule 2), or None."""
    for name, x, y in zip(_TYPE_FIELDS, _type_key(a), _type_key(b)):
        if x != y:
            return (
                f"{name}s differ ({x} vs {y})"
                if name != "layout"
                else "tiled and row-major layouts differ"
            )
    return None


def _nodes(nodes) -> str:
    shown = sorted(nodes)
    text = ", ".join(f"({x}, {y})" for x, y in shown[:4])
    if len(shown) > 4:
        text += f", ... {len(shown) - 4} more"
    return f"node {text}" if len(shown) == 1 else f"nodes {text}"


class ReuseProver:
    """Applies the C.7 reuse rules to pairs of one operation's DFBs (see the module docstring)."""

    def __init__(
        self,
        record: OperationRecord,
        plan: SplitPlan | None,
        grid=None,
        *,
        enabled: bool = True,
    ) -> None:
        self.lifecycle = plan.lifecycle if plan is not None else None
        self.enabled = enabled
        self.grid = grid
        self.record = record
        self.plan = plan
        self._reach = Reach(self.lifecycle) if self.lifecycle is not None else None
        self._domains: dict[str, frozenset[tuple[int, int]] | str] = {}

    # -- facts -------------------------------------------------------------------------------

    def owners(self, dfb: str) -> tuple | None:
        """(producer, consumer) kernels of a DFB when the plan knows both."""
        facts = self.lifecycle.facts(dfb) if self.lifecycle is not None else None
        if facts is None or facts.producer is None or facts.consumer is None:
            return None
        return facts.producer, facts.consumer

    def domain(self, facts: DFBFacts) -> frozenset[tuple[int, int]] | str | None:
        """The DFB's nodes on this grid: a frozenset, ``None`` (every node) or a reason (str)."""
        if facts.domain is None:
            return None
        if facts.dfb not in self._domains:
            if self.grid is None:
                self._domains[facts.dfb] = "the grid is not known"
            else:
                try:
                    self._domains[facts.dfb] = nodes_of(facts.domain, self.grid, self._lookup)
                except GuardError as exc:
                    self._domains[facts.dfb] = exc.reason
        return self._domains[facts.dfb]

    def _lookup(self, name: str):
        """A captured name's value when the operation is called (closure cells, globals)."""
        injected = dict(self.plan.injected) if self.plan is not None else {}
        return Scope(self.record.fn, injected).lookup(name)

    # -- the rules -----------------------------------------------------------------------------

    def may_share(self, earlier, later) -> tuple[bool, str]:
        """(verdict, reason) for two DFB declarations of one node (C.7 rules 1-9)."""
        if not self.enabled:
            return False, "reuse disabled (--no-ttl-reuse-user-dfbs)"
        diff = type_difference(earlier, later)
        if diff:
            return False, diff
        if self.lifecycle is None:
            return False, "no split plan proves disjoint lifetimes (explicit operation)"
        fa, fb = self.lifecycle.facts(earlier.name), self.lifecycle.facts(later.name)
        if fa is None or fb is None:
            return False, "no lifecycle facts"
        for f in (fa, fb):
            if not f.bounded:
                return False, f"lifecycle of '{f.dfb}' is not bounded: {f.reason}"
        line = self.lifecycle.called_together(fa.dfb, fb.dfb)
        if line is not None:
            return (
                False,
                f"'{fa.dfb}' and '{fb.dfb}' are dependencies of one external call (line {line})",
            )
        verdict = self._domains_rule(fa, fb)
        if verdict is not None:
            return verdict
        counts = self._counts_rule(fa, fb, earlier)
        if counts:
            return False, counts
        if (fa.producer, fa.consumer) != (fb.producer, fb.consumer):
            return False, "pointer owners differ (producer or consumer kernel)"
        if fa.domain is not None or fb.domain is not None:
            return False, (
                f"'{fa.dfb}' and '{fb.dfb}' may both be used on {_nodes(self._overlap(fa, fb))}; "
                "lifetimes under node guards are not ordered by the proof"
            )
        if self._ordered(fa, fb) or self._ordered(fb, fa):
            return True, "terminal pop happens-before first use" + self._evidence(fa, fb)
        return False, f"'{fa.dfb}' and '{fb.dfb}' may be live at the same time"

    def _nodes_or_all(self, f: DFBFacts) -> frozenset[tuple[int, int]]:
        nodes = self.domain(f)
        if nodes is None or isinstance(nodes, str):  # every node (an unknown domain may be any)
            return frozenset((x, y) for x in range(self.grid[0]) for y in range(self.grid[1]))
        return nodes

    def _overlap(self, fa: DFBFacts, fb: DFBFacts) -> frozenset[tuple[int, int]]:
        return self._nodes_or_all(fa) & self._nodes_or_all(fb)

    def _domains_rule(self, fa: DFBFacts, fb: DFBFacts) -> tuple[bool, str] | None:
        """Rule 6: disjoint node domains share without order; unknown ones conflict."""
        if fa.domain is None and fb.domain is None:
            return None
        for f in (fa, fb):
            nodes = self.domain(f)
            if isinstance(nodes, str) and f.domain is not None:
                return False, (
                    f"the launch-node domain of '{f.dfb}' ({f.domain.describe()}) is unknown: {nodes}"
                )
        a, b = self._nodes_or_all(fa), self._nodes_or_all(fb)
        if a & b:
            return None
        return True, (
            f"launch-node domains are disjoint ('{fa.dfb}' on {_nodes(a) if a else 'no node'}, "
            f"'{fb.dfb}' on {_nodes(b) if b else 'no node'}): no order needed"
        )

    def _counts_rule(self, fa: DFBFacts, fb: DFBFacts, decl) -> str:
        """Rule 7: identical transaction tile-count sequences, each dividing the capacity."""
        block = decl.block_pages
        capacity = block * decl.block_count
        for f in (fa, fb):
            reserves = tuple(block if t is None else t for t in f.reserve_tiles)
            waits = tuple(block if t is None else t for t in f.wait_tiles)
            if reserves != waits:
                return (
                    f"lifecycle of '{f.dfb}' is not bounded: its reserves move {reserves} tiles but its "
                    f"waits {waits}; transaction tile counts must pair"
                )
        if fa.transactions != fb.transactions:
            return f"transaction counts differ ({fa.transactions} vs {fb.transactions})"
        ta = tuple(block if t is None else t for t in fa.reserve_tiles)
        tb = tuple(block if t is None else t for t in fb.reserve_tiles)
        if ta != tb:
            return f"transaction tile counts differ ({ta} vs {tb})"
        bad = next((t for t in ta if capacity % t), None)
        if bad is not None:
            return f"a transaction of {bad} tiles does not divide the capacity ({capacity} tiles)"
        return ""

    def _evidence(self, fa: DFBFacts, fb: DFBFacts) -> str:
        """What the proof used besides native transactions (external calls, resets)."""
        parts = []
        lines = sorted(set(fa.extern_lines) | set(fb.extern_lines))
        if lines:
            where = ", ".join(map(str, lines))
            parts.append(
                f"external dfb_effects / accesses at line{'s' if len(lines) > 1 else ''} {where}"
            )
        for f in (fa, fb):
            for call, reset in f.terminated:
                parts.append(
                    f"the opaque access to '{f.dfb}' at line {call} ends at the reset at line {reset}"
                )
        return f" ({'; '.join(parts)})" if parts else ""

    def _ordered(self, first: DFBFacts, second: DFBFacts) -> bool:
        """Rule 9: every end of ``first``'s lifetime happens before every event of ``second``."""
        lifecycle, reach = self.lifecycle, self._reach
        if lifecycle is None or reach is None:  # no split plan: nothing is proved ordered
            return False
        events = lifecycle.events
        own = [e for e in events if e.dfb == first.dfb]
        pops = [e for e in own if e.action == "pop"]
        if not pops:
            return False
        ends: list[DFBEvent] = [max(pops, key=lambda e: e.position)]
        ends += [e for e in own if e.action in ("use", "opaque")]
        opaque = any(e.action == "opaque" for e in own)
        starts = [e for e in events if e.dfb == second.dfb]
        start_barriers = []
        for barrier in lifecycle.barriers:
            if not barrier.arrivals:
                continue
            mine, theirs = barrier.resets(first.dfb), barrier.resets(second.dfb)
            if mine and (not theirs or opaque):
                ends.append(barrier.arrivals[0])
            elif theirs and not mine:
                start_barriers.append(barrier.arrivals)
        if not starts:
            return False
        writers = [s for s in starts if s.action not in _READ_ONLY]
        return all(
            all(reach.before(e, s) for s in (writers if e.action == "use" else starts))
            and all(any(reach.before(e, a) for a in arrivals) for arrivals in start_barriers)
            for e in ends
        )
