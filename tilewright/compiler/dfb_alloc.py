"""DFB physical indices and L1 addresses (reference C.7, D.1 limits, A.4 allocation groups).

Logical DFBs are placed on physical circular-buffer *slots*.  The allocation units
are single DFBs and allocation groups (``allocation_group=``: always one slot, as
one vertex; validated: one page size, data format, tile and capacity, one producer
and one consumer kernel).  Two single DFBs may share a slot only when
``dfb_reuse.ReuseProver`` proves it from the split plan (the C.7 rules: type,
bounded lifecycles incl. external ``dfb_effects``, node domains, counts, pointer
owners, happens-before); a group shares with nobody else.  Sharing is not
transitive: every two members of a slot are proved shareable.

1. Deterministic first-fit in declaration order.
2. If first-fit needs more than the target's ``num_cbs`` indices: an exact DSATUR
   colouring of the same conflict graph (``dfb_coloring``), bounded by
   ``--ttl-dfb-exact-coloring-search-limit N`` states (default 1e6).  A colouring
   within the limit is used (slots numbered by their first DFB); otherwise a
   ``CapacityError`` reports the search outcome.

``options="--no-ttl-reuse-user-dfbs"`` disables reuse.  Each DFB's placement
carries a note saying why it shares or why not (``tilewright explain`` prints it).
The bytes are bounded by the node's free L1 (``CapacityError``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tilewright.compiler import dfb_coloring
from tilewright.compiler.dfb_reuse import ReuseProver
from tilewright.errors import CapacityError, InterfaceError

if TYPE_CHECKING:
    from tilewright.compiler.record import OperationRecord
    from tilewright.compiler.split.plan import SplitPlan

__all__ = ["Allocation", "AllocationOptions", "Slot", "allocate", "l1_budget"]

EXACT_LIMIT_FLAG = "--ttl-dfb-exact-coloring-search-limit"
DEFAULT_EXACT_LIMIT = 1_000_000


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
    summary: str = ""  # how the indices were chosen (first-fit, or the exact search's outcome)

    def __iter__(self):
        return iter(self.placements)

    def __len__(self) -> int:
        return len(self.placements)

    def __getitem__(self, i: int) -> tuple[int, int]:
        return self.placements[i]


def _check_group(members: list, dfbs: list, prover: ReuseProver) -> None:
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


@dataclass(frozen=True, slots=True)
class AllocationOptions:
    """The allocator's compiler flags (reference E.4), from the operation's ``options=`` string."""

    reuse: bool = True  # --[no-]ttl-reuse-user-dfbs
    exact_limit: int = DEFAULT_EXACT_LIMIT  # --ttl-dfb-exact-coloring-search-limit N

    @classmethod
    def of(cls, flags: object, op_name: str, loc=None) -> AllocationOptions:
        """The options of an operation's ``options=`` string (None: the defaults)."""
        text = str(flags or "")
        words = text.split()
        reuse = True
        limit = DEFAULT_EXACT_LIMIT
        i = 0
        while i < len(words):
            word = words[i]
            if word in ("--no-ttl-reuse-user-dfbs", "--ttl-reuse-user-dfbs"):
                reuse = word == "--ttl-reuse-user-dfbs"
            elif word == EXACT_LIMIT_FLAG or word.startswith(EXACT_LIMIT_FLAG + "="):
                value = word.partition("=")[2] if "=" in word else None
                if value is None:
                    i += 1
                    value = words[i] if i < len(words) else ""
                limit = _state_limit(value, op_name, loc)
            i += 1
        return cls(reuse, limit)


def _state_limit(text: str, op_name: str, loc) -> int:
    try:
        value = float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        value = -1
    if value < 0 or value != int(value):
        raise InterfaceError(
            f"operation '{op_name}': {EXACT_LIMIT_FLAG} takes a non-negative integer number of states, "
            f"got {text!r}",
            loc=loc,
        )
    return int(value)


class _Graph:
    """Allocation units and their pairwise sharing verdicts (memoised)."""

    def __init__(self, dfbs: list, prover: ReuseProver) -> None:
        self.dfbs = dfbs
        self.prover = prover
        self.verdicts: dict[tuple[int, int], tuple[bool, str]] = {}
        self.units: list[list[int]] = []  # DFB positions per unit, first-declared first
        self.group_of: list[object] = []
        seen: dict[int, int] = {}
        for pos, d in enumerate(dfbs):
            group = getattr(d, "allocation_group", None)
            if group is not None and id(group) in seen:
                self.units[seen[id(group)]].append(pos)
                continue
            if group is not None:
                seen[id(group)] = len(self.units)
            self.units.append([pos])
            self.group_of.append(group)

    def verdict(self, a: int, b: int) -> tuple[bool, str]:
        """May DFBs ``a`` and ``b`` (positions, ``a`` declared first) share (C.7)?"""
        key = (a, b) if a < b else (b, a)
        found = self.verdicts.get(key)
        if found is None:
            found = self.verdicts[key] = self.prover.may_share(self.dfbs[key[0]], self.dfbs[key[1]])
        return found

    def unit_compatible(self, u: int, v: int) -> bool:
        if self.group_of[u] is not None or self.group_of[v] is not None:
            return False
        return self.verdict(self.units[u][0], self.units[v][0])[0]

    def first_fit(self) -> list[list[int]]:
        """Slots as lists of units: each unit joins the first slot it may share with."""
        slots: list[list[int]] = []
        for u in range(len(self.units)):
            for slot in slots:
                if all(self.unit_compatible(m, u) for m in slot):
                    slot.append(u)
                    break
            else:
                slots.append([u])
        return slots

    def conflicts(self) -> list[set[int]]:
        n = len(self.units)
        adjacency: list[set[int]] = [set() for _ in range(n)]
        for u in range(n):
            for v in range(u + 1, n):
                if not self.unit_compatible(u, v):
                    adjacency[u].add(v)
                    adjacency[v].add(u)
        return adjacency


def _exact(
    graph: _Graph, first_fit: int, limit: int, options: AllocationOptions, op_name: str, loc
):
    """Slots from an exact colouring, or the CapacityError with the search's outcome."""
    outcome = dfb_coloring.color(graph.conflicts(), limit, options.exact_limit)
    if outcome.colors is None:
        names = _grouped([d.name for d in graph.dfbs])
        raise CapacityError(
            f"operation '{op_name}' needs {first_fit} DFB indices but the target has {limit} "
            f"(num_cbs); {outcome.describe(limit)} ({EXACT_LIMIT_FLAG} {options.exact_limit}); "
            f"DFBs: {names}",
            loc=loc,
            hint=(
                "declare fewer DFBs that are live at the same time"
                if outcome.lower_bound is not None
                else "declare fewer DFBs that are live at the same time, or let the exact search "
                f'try longer: @ttl.operation(options="{EXACT_LIMIT_FLAG}=N")'
            ),
        )
    classes: dict[int, list[int]] = {}
    for u, c in enumerate(outcome.colors):
        classes.setdefault(c, []).append(u)
    slots = sorted(classes.values(), key=lambda units: units[0])
    summary = f"first-fit needed {first_fit} of {limit} indices; {outcome.describe(limit)}"
    return slots, summary


def _grouped(items: list[str]) -> str:
    """``items`` joined, each distinct one once, in first-seen order, repeats as "x ×N"
    (a DFB declared in a loop is one name many times)."""
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return ", ".join(item if n == 1 else f"{item} ×{n}" for item, n in counts.items())


def _note(graph: _Graph, slots: list[list[int]], where: list[int], pos: int, exact: str) -> str:
    """Why DFB ``pos`` shares its index, or why it does not share an earlier one."""
    s = where[pos]
    members = [m for u in slots[s] for m in graph.units[u]]
    if graph.group_of[next(u for u in slots[s] if pos in graph.units[u])] is not None:
        first = members[0]
        if first == pos:
            return ""
        return f"shares index {s} with '{graph.dfbs[first].name}' (allocation group)"
    earlier = [m for m in members if m < pos]
    suffix = f" ({exact})" if exact else ""
    if earlier:
        ok, why = graph.verdict(earlier[-1], pos)
        return f"reuses index {s} of '{graph.dfbs[earlier[-1]].name}': {why}{suffix}"
    for t in range(len(slots)):
        if t == s:
            continue
        units = slots[t]
        if graph.group_of[units[0]] is not None:
            continue
        candidates = [m for u in units for m in graph.units[u] if m < pos]
        for m in candidates:
            ok, why = graph.verdict(m, pos)
            if not ok:
                return f"not shared with '{graph.dfbs[m].name}': {why}{suffix}"
    return ""


def allocate(
    record: OperationRecord,
    op_options: Mapping[str, object],
    split_plan: SplitPlan | None,
    device,
    dfbs,
    loc,
    grid=None,
) -> Allocation:
    """Indices, addresses and sharing notes for the DFBs of one node, in declaration order.

    ``op_options`` are the operation's options (its ``options=`` string carries the
    allocator's flags); ``split_plan`` (unified operations) holds the DFB lifecycle
    facts the reuse proofs read; ``grid`` (columns, rows) lets node-guarded DFBs prove
    disjoint launch-node domains.
    """
    options = AllocationOptions.of(op_options.get("options"), record.name, loc)
    prover = ReuseProver(record, split_plan, grid, enabled=options.reuse)
    graph = _Graph(list(dfbs), prover)
    for u, group in enumerate(graph.group_of):
        if group is not None:
            _check_group(graph.units[u], dfbs, prover)
    slots = graph.first_fit()
    limit = device.num_cbs
    summary = f"first-fit, {len(slots)} of {limit} indices"
    exact = ""
    if len(slots) > limit:
        slots, summary = _exact(graph, len(slots), limit, options, record.name, loc)
        exact = "exact DSATUR colouring"
    where = [0] * len(dfbs)
    for s, units in enumerate(slots):
        for u in units:
            for pos in graph.units[u]:
                where[pos] = s
    notes = [_note(graph, slots, where, pos, exact) for pos in range(len(dfbs))]
    members = [sorted(m for u in units for m in graph.units[u]) for units in slots]
    grouped = [graph.group_of[units[0]] is not None for units in slots]
    placed = _place(record.name, device, dfbs, loc, members, grouped)
    placements = tuple((where[p], placed[where[p]].address) for p in range(len(dfbs)))
    return Allocation(placements, tuple(notes), placed, summary)


def _place(op_name: str, device, dfbs, loc, members: list, grouped: list[bool]) -> tuple[Slot, ...]:
    """L1 addresses per slot, within the node's free L1."""
    align = device.l1_alignment
    free, why = l1_budget(device)
    addr = device.l1_unreserved_base
    placed: list[Slot] = []
    for s, on_slot in enumerate(members):
        addr = -(-addr // align) * align
        size = max(dfbs[m].total_bytes for m in on_slot)
        placed.append(Slot(s, addr, size, tuple(on_slot), grouped[s]))
        addr += size
    used = addr - device.l1_unreserved_base
    if used > free:
        listing = _grouped([f"{d.name} {d.total_bytes} B" for d in dfbs])
        raise CapacityError(
            f"the DFBs of operation '{op_name}' need {used} B of L1 per node but only {free} B are "
            f"free ({why}): {listing}",
            loc=loc,
        )
    return tuple(placed)
