"""DFB physical indices and L1 addresses (reference C.7, D.1 limits, A.4 allocation groups).

Logical DFBs are placed on physical circular-buffer *slots* by deterministic
first-fit in declaration order.  A DFB joins an existing slot only when it may share
it with every DFB already there:

* DFBs of one allocation group (``allocation_group=``) always share one slot; the
  group is validated: one page size, data format, tile and capacity (one FIFO ring);
* otherwise sharing needs a proof from the unified operation's split plan
  (``LifecycleFacts``), rule by rule (reference C.7): identical circular-buffer
  type (block shape, element type, tile, block count); both lifecycles bounded
  (every reserve / push / wait / pop runs exactly once, paired); identical
  transaction counts; the same pointer owners (producer and consumer kernels); not
  accessed by external calls or as plain values; and one DFB's terminal pop
  happens-before the other's first acquisition (program order plus push -> wait).
  Every node of the grid runs the same straight-line code, so the proof holds on
  each node.  Explicit operations have no plan: their DFBs never share (when in
  doubt, do not share).  ``options="--no-ttl-reuse-user-dfbs"`` disables reuse.

Each DFB's placement carries a note saying why it shares or why not (``tilewright
explain`` prints it).  The slot count is bounded by the target's ``num_cbs`` and the
bytes by the node's free L1; both overflows are ``CapacityError``.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilewright.errors import CapacityError, InterfaceError

__all__ = ["Allocation", "Slot", "allocate", "l1_budget"]


def l1_budget(device) -> tuple[int, str]:
    """(free bytes for DFBs per node, how that figure is made up)."""
    top = device.l1_size - device.l1_small_size
    lowest = device.l1_allocator.lowest_allocated_address()
    buffers = 0
    if lowest is not None and lowest < top:
        buffers = top - lowest
        top = lowest
    free = top - device.l1_unreserved_base
    why = (
        f"L1 {device.l1_size} B - {device.l1_unreserved_base} B reserved - "
        f"{device.l1_small_size} B L1_SMALL - {buffers} B of L1 buffers"
    )
    return free, why


@dataclass(frozen=True, slots=True)
class Slot:
    """One physical DFB index: its L1 range and the logical DFBs (positions) on it."""

    index: int
    address: int
    size: int
    members: tuple[int, ...]
    group: bool


@dataclass(frozen=True, slots=True)
class Allocation:
    """Where every logical DFB of an operation lives, and why."""

    placements: tuple[tuple[int, int], ...]  # per DFB, declaration order: (index, address)
    notes: tuple[str, ...]  # per DFB: the sharing decision
    slots: tuple[Slot, ...]

    def __iter__(self):
        return iter(self.placements)

    def __len__(self) -> int:
        return len(self.placements)

    def __getitem__(self, i: int) -> tuple[int, int]:
        return self.placements[i]


def _type_key(d) -> tuple:
    return (
        d.shape,
        d.block_count,
        d.data_format,
        d.tiled,
        (d.tile.height, d.tile.width),
        d.page_size,
    )


_TYPE_FIELDS = ("block shape", "block count", "data format", "layout", "tile", "page size")


def _type_difference(a, b) -> str | None:
    for name, x, y in zip(_TYPE_FIELDS, _type_key(a), _type_key(b)):
        if x != y:
            return (
                f"{name}s differ ({x} vs {y})"
                if name != "layout"
                else "tiled and row-major layouts differ"
            )
    return None


class _Prover:
    """Applies the C.7 reuse rules to two logical DFBs using the split plan's facts."""

    def __init__(self, op) -> None:
        plan = getattr(op, "split_plan", None)
        self.lifecycle = plan.lifecycle if plan is not None else None
        options = str((getattr(op, "options", {}) or {}).get("options") or "")
        self.enabled = "--no-ttl-reuse-user-dfbs" not in options.split()

    def may_share(self, earlier, later) -> tuple[bool, str]:
        if not self.enabled:
            return False, "reuse disabled (--no-ttl-reuse-user-dfbs)"
        diff = _type_difference(earlier, later)
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
        if fa.transactions != fb.transactions:
            return False, f"transaction counts differ ({fa.transactions} vs {fb.transactions})"
        if (fa.producer, fa.consumer) != (fb.producer, fb.consumer):
            return False, "pointer owners differ (producer or consumer kernel)"
        if self._ordered(fa.dfb, fb.dfb) or self._ordered(fb.dfb, fa.dfb):
            return True, "terminal pop happens-before first use"
        return False, f"'{fa.dfb}' and '{fb.dfb}' may be live at the same time"

    def owners(self, dfb: str) -> tuple | None:
        """(producer, consumer) kernels of a DFB when the plan knows both."""
        facts = self.lifecycle.facts(dfb) if self.lifecycle is not None else None
        if facts is None or facts.producer is None or facts.consumer is None:
            return None
        return facts.producer, facts.consumer

    def _ordered(self, first: str, second: str) -> bool:
        from tilewright.compiler.split.lifecycle import happens_before

        events = self.lifecycle.events
        pops = [e for e in events if e.dfb == first and e.action == "pop"]
        starts = [e for e in events if e.dfb == second and e.action in ("reserve", "wait")]
        if not pops or not starts:
            return False
        terminal = max(pops, key=lambda e: e.position)
        return all(happens_before(self.lifecycle, terminal, s) for s in starts)


def _check_group(members: list, dfbs: list, prover: _Prover) -> None:
    """One ring: matching page size, format, tile and capacity; the same pointer owners."""
    first = dfbs[members[0]]
    for pos in members[1:]:
        d = dfbs[pos]
        owners = prover.owners(first.name), prover.owners(d.name)
        if None not in owners and owners[0] != owners[1]:
            raise InterfaceError(
                f"DFBs '{first.name}' and '{d.name}' are in one allocation group but have different "
                "pointer owners (producer or consumer kernels); one ring has one producer and one "
                "consumer kernel",
                loc=d.loc,
            )
        for what, a, b in (
            ("page size", first.page_size, d.page_size),
            ("data format", first.data_format, d.data_format),
            ("tile", (first.tile.height, first.tile.width), (d.tile.height, d.tile.width)),
            ("capacity", first.total_bytes, d.total_bytes),
        ):
            if a != b:
                raise InterfaceError(
                    f"DFBs '{first.name}' and '{d.name}' are in one allocation group but differ in {what} "
                    f"({a} vs {b}); a group is one physical ring: page size, data format, tile and capacity "
                    "must match",
                    loc=d.loc,
                )


def allocate(op, device, dfbs, loc) -> Allocation:
    """Indices, addresses and sharing notes for the DFBs of one node, in declaration order."""
    prover = _Prover(op)
    slots: list[list[int]] = []
    slot_group: list[object] = []
    where: list[int] = []
    notes: list[str] = []
    for pos, d in enumerate(dfbs):
        group = getattr(d, "allocation_group", None)
        chosen, note = None, ""
        if group is not None:
            chosen = next((s for s, g in enumerate(slot_group) if g is group), None)
            if chosen is not None:
                note = (
                    f"shares index {chosen} with '{dfbs[slots[chosen][0]].name}' (allocation group)"
                )
        else:
            for s, members in enumerate(slots):
                if slot_group[s] is not None:
                    continue
                verdicts = [prover.may_share(dfbs[m], d) for m in members]
                if all(ok for ok, _ in verdicts):
                    chosen = s
                    note = f"reuses index {s} of '{dfbs[members[-1]].name}': {verdicts[-1][1]}"
                    break
                if not note:
                    bad = next((m, why) for m, (ok, why) in zip(members, verdicts) if not ok)
                    note = f"not shared with '{dfbs[bad[0]].name}': {bad[1]}"
        if chosen is None:
            chosen = len(slots)
            slots.append([])
            slot_group.append(group)
        slots[chosen].append(pos)
        where.append(chosen)
        notes.append(note)
    for s, members in enumerate(slots):
        if slot_group[s] is not None:
            _check_group(members, dfbs, prover)

    limit = device.num_cbs
    if len(slots) > limit:
        names = ", ".join(d.name for d in dfbs)
        raise CapacityError(
            f"operation '{op.name}' needs {len(slots)} DFB indices but the target has {limit} "
            f"(num_cbs); DFBs: {names}",
            loc=loc,
        )
    align = device.l1_alignment
    free, why = l1_budget(device)
    addr = device.l1_unreserved_base
    placed: list[Slot] = []
    for s, members in enumerate(slots):
        addr = -(-addr // align) * align
        size = max(dfbs[m].total_bytes for m in members)
        placed.append(Slot(s, addr, size, tuple(members), slot_group[s] is not None))
        addr += size
    used = addr - device.l1_unreserved_base
    if used > free:
        listing = ", ".join(f"{d.name} {d.total_bytes} B" for d in dfbs)
        raise CapacityError(
            f"the DFBs of operation '{op.name}' need {used} B of L1 per node but only {free} B are "
            f"free ({why}): {listing}",
            loc=loc,
        )
    placements = tuple((where[p], placed[where[p]].address) for p in range(len(dfbs)))
    return Allocation(placements, tuple(notes), tuple(placed))
