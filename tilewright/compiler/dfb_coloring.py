"""Exact graph colouring for DFB index allocation (reference C.7: "if over the index limit,
exact DSATUR search (limit ``--ttl-dfb-exact-coloring-search-limit``, default 1e6 states)").

Vertices are allocation units (a DFB, or an allocation group pinned as one vertex);
an edge joins two units that may not share a physical index.  A colour class is an
independent set of the conflict graph -- every two members were proved shareable,
since sharing is not transitive.

:func:`color` decides whether ``limit`` colours suffice, by DSATUR branch and bound
(Brélaz 1979; exact form after Sewell 1996): a greedy clique is a lower bound and is
pre-coloured; then the uncoloured vertex with the most distinct neighbour colours
(ties: more neighbours, then the lower index) takes each feasible colour in turn,
existing colours first and at most one new one.  Every colour assignment is a
*state*; the search stops after ``max_states``.  Deterministic: the same graph gives
the same colouring.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Coloring", "color", "greedy_clique"]


@dataclass(frozen=True, slots=True)
class Coloring:
    """The outcome of an exact search.

    ``colors`` (per vertex, ``0 .. limit - 1``) when a colouring was found; otherwise
    ``lower_bound`` is the number of colours proved necessary (``limit + 1`` after an
    exhausted search, or a clique's size) or ``None`` when the state limit stopped the
    search first.
    """

    colors: tuple[int, ...] | None
    states: int
    lower_bound: int | None

    def describe(self, limit: int) -> str:
        """The search outcome, for diagnostics."""
        if self.colors is not None:
            used = max(self.colors, default=-1) + 1
            return f"exact search found a colouring with {used} indices in {self.states} states"
        if self.lower_bound is not None:
            return (
                f"exact search proved that at least {self.lower_bound} indices are needed "
                f"({self.states} states)"
            )
        return (
            f"exact search explored {self.states} states without finding a colouring with "
            f"<= {limit} indices"
        )


def greedy_clique(adjacency: list[set[int]]) -> list[int]:
    """A maximal clique grown from the highest-degree vertex (lowest index on ties)."""
    n = len(adjacency)
    if n == 0:
        return []
    order = sorted(range(n), key=lambda v: (-len(adjacency[v]), v))
    clique = [order[0]]
    candidates = set(adjacency[order[0]])
    for v in order[1:]:
        if v in candidates:
            clique.append(v)
            candidates &= adjacency[v]
    return clique


class _Search:
    def __init__(self, adjacency: list[set[int]], limit: int, max_states: int) -> None:
        self.adj = [sorted(a) for a in adjacency]
        self.degree = [len(a) for a in adjacency]
        self.limit = limit
        self.max_states = max_states
        n = len(adjacency)
        self.colors = [-1] * n
        # count[v][c]: coloured neighbours of v with colour c (saturation = nonzero entries)
        self.count = [[0] * limit for _ in range(n)]
        self.saturation = [0] * n
        self.states = 0

    def assign(self, v: int, c: int) -> None:
        self.colors[v] = c
        for w in self.adj[v]:
            row = self.count[w]
            if row[c] == 0:
                self.saturation[w] += 1
            row[c] += 1

    def unassign(self, v: int) -> None:
        c = self.colors[v]
        self.colors[v] = -1
        for w in self.adj[v]:
            row = self.count[w]
            row[c] -= 1
            if row[c] == 0:
                self.saturation[w] -= 1

    def pick(self) -> int | None:
        best, key = None, None
        for v, c in enumerate(self.colors):
            if c < 0:
                k = (self.saturation[v], self.degree[v], -v)
                if key is None or k > key:
                    best, key = v, k
        return best

    def candidates(self, v: int, used: int) -> list[int]:
        row = self.count[v]
        out = [c for c in range(used) if row[c] == 0]
        if used < self.limit:
            out.append(used)
        return out

    def run(self, used: int) -> bool | None:
        """True: coloured; False: no colouring with ``limit`` colours; None: state limit."""
        v = self.pick()
        if v is None:
            return True
        stack = [_Frame(v, self.candidates(v, used), 0, used)]
        while stack:
            frame = stack[-1]
            v, i = frame.vertex, frame.next
            if self.colors[v] >= 0:
                self.unassign(v)
            if i == len(frame.candidates):
                stack.pop()
                continue
            if self.states >= self.max_states:
                return None
            frame.next = i + 1
            c = frame.candidates[i]
            self.states += 1
            self.assign(v, c)
            used = max(frame.used, c + 1)
            nxt = self.pick()
            if nxt is None:
                return True
            stack.append(_Frame(nxt, self.candidates(nxt, used), 0, used))
        return False


@dataclass(slots=True)
class _Frame:
    """A vertex of the search path: its candidate colours and the next one to try."""

    vertex: int
    candidates: list[int]
    next: int
    used: int  # colours in use before this vertex was coloured


def color(adjacency: list[set[int]], limit: int, max_states: int) -> Coloring:
    """Colour the conflict graph with at most ``limit`` colours, exploring at most
    ``max_states`` assignments (see the module docstring)."""
    clique = greedy_clique(adjacency)
    if len(clique) > limit:
        return Coloring(None, 0, len(clique))
    search = _Search(adjacency, limit, max_states)
    for c, v in enumerate(clique):
        search.assign(v, c)
    found = search.run(len(clique))
    if found:
        return Coloring(tuple(search.colors), search.states, None)
    if found is None:
        return Coloring(None, search.states, None)
    return Coloring(None, search.states, limit + 1)
