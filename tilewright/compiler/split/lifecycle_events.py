"""Kernel event sequences and happens-before (reference C.7, A.8).

Each kernel's straight-line code (top-level statements and ``with`` bodies, the empty
guard of ``lifecycle_sites.guards``) gives an ordered list of DFB events: native and
external protocol actions, inspections (``use``), opaque external accesses and
arrivals (``sync``) at synchronized resets / reconfiguration boundaries.

``happens_before`` is program order within a kernel plus two kinds of edges:

* the k-th push of a bounded DFB without opaque accesses completes before its k-th
  wait completes;
* every event before any arrival at a barrier happens before every event after
  each participant's arrival (the barrier releases nobody before all arrived).
"""

from __future__ import annotations

from tilewright.compiler.split.lifecycle_sites import Site
from tilewright.compiler.split.plan import Barrier, DFBEvent, LifecycleFacts
from tilewright.lang.selectors import LogicalKernel

__all__ = ["Reach", "build_events", "happens_before", "statement_order"]


def statement_order(walk) -> tuple[dict[tuple, int], dict[tuple, int]]:
    """(start, end) ordinals of every statement path: a statement's nested statements
    fall between its start and its end (a ``with`` releases its blocks at its end)."""
    start: dict[tuple, int] = {}
    end: dict[tuple, int] = {}
    paths = [p for p, _ in walk]
    counter = 0
    open_paths: list[tuple] = []
    for path in paths:
        while open_paths and open_paths[-1] != path[: len(open_paths[-1])]:
            end[open_paths.pop()] = counter
            counter += 1
        start[path] = counter
        counter += 1
        open_paths.append(path)
    while open_paths:
        end[open_paths.pop()] = counter
        counter += 1
    return start, end


def _key(site: Site, start: dict, end: dict, with_paths: set) -> tuple[int, int]:
    at_end = site.path in with_paths and site.kind in ("push", "pop") and site.seq >= 900
    return (end[site.path] if at_end else start[site.path], site.seq)


def build_events(
    sites: list[Site], syncs: list, start: dict, end: dict, with_paths: set
) -> tuple[tuple[DFBEvent, ...], tuple[Barrier, ...]]:
    """Events of straight-line sites (``sites`` already filtered) and the barriers.

    ``syncs`` are ``(path, line, call, kernels, touches)`` of top-level reset calls.
    """
    items: dict[LogicalKernel, list[tuple]] = {}
    for s in sites:
        if s.kernel is None or s.kind == "reset":
            continue
        items.setdefault(s.kernel, []).append(
            (_key(s, start, end, with_paths), s.dfb, s.kind, s.line)
        )
    for path, line, _call, kernels, _touches in syncs:
        for k in kernels:
            items.setdefault(k, []).append(((start[path], 0), "", "sync", line, path))
    events: list[DFBEvent] = []
    arrivals: dict[tuple, list[DFBEvent]] = {}
    for kernel in sorted(items, key=LogicalKernel.sort_key):
        for position, item in enumerate(sorted(items[kernel], key=lambda t: t[0])):
            event = DFBEvent(kernel, position, item[1], item[2], item[3])
            events.append(event)
            if item[2] == "sync":
                arrivals.setdefault(item[4], []).append(event)
    barriers = tuple(
        Barrier(line, call, tuple(arrivals.get(path, ())), touches, path)
        for path, line, call, _kernels, touches in syncs
    )
    return tuple(events), barriers


class Reach:
    """Happens-before queries over one ``LifecycleFacts`` (edges built once)."""

    def __init__(self, lifecycle: LifecycleFacts) -> None:
        by_kernel: dict[LogicalKernel, list[DFBEvent]] = {}
        for e in lifecycle.events:
            by_kernel.setdefault(e.kernel, []).append(e)
        self.edges: list[tuple[DFBEvent, DFBEvent]] = []
        for f in lifecycle.dfbs:
            # An opaque external access (even a terminated one) may move the DFB's pointers
            # behind the proof's back: its pushes and waits do not pair reliably.
            if not f.bounded or f.opaque or f.producer is None or f.consumer is None:
                continue
            if f.domain is not None:
                continue
            producer = by_kernel.get(f.producer, ())
            consumer = by_kernel.get(f.consumer, ())
            pushes = [e for e in producer if e.dfb == f.dfb and e.action == "push"]
            waits = [e for e in consumer if e.dfb == f.dfb and e.action == "wait"]
            self.edges.extend(zip(pushes, waits))
        self.barriers = [b.arrivals for b in lifecycle.barriers if b.arrivals]
        self._cache: dict[DFBEvent, dict[LogicalKernel, int]] = {}

    def _reach(self, first: DFBEvent) -> dict[LogicalKernel, int]:
        """Per kernel, the first position at or after which events follow ``first``."""
        cached = self._cache.get(first)
        if cached is not None:
            return cached
        reach = {first.kernel: first.position}
        changed = True
        while changed:
            changed = False
            for push, wait in self.edges:
                if push.position >= reach.get(
                    push.kernel, 1 << 30
                ) and wait.position + 1 < reach.get(wait.kernel, 1 << 30):
                    reach[wait.kernel] = wait.position + 1
                    changed = True
            for arrivals in self.barriers:
                if not any(a.position >= reach.get(a.kernel, 1 << 30) for a in arrivals):
                    continue
                for a in arrivals:
                    if a.position + 1 < reach.get(a.kernel, 1 << 30):
                        reach[a.kernel] = a.position + 1
                        changed = True
        self._cache[first] = reach
        return reach

    def before(self, first: DFBEvent, second: DFBEvent) -> bool:
        """Whether ``first`` strictly happens before ``second``."""
        if first == second:
            return False
        if first.kernel == second.kernel and second.position <= first.position:
            return False
        return second.position >= self._reach(first).get(second.kernel, 1 << 30)


def happens_before(lifecycle: LifecycleFacts, first: DFBEvent, second: DFBEvent) -> bool:
    """Whether ``first`` strictly happens before ``second`` (reference C.7)."""
    return Reach(lifecycle).before(first, second)
