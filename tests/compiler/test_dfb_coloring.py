"""Exact DSATUR colouring of DFB conflict graphs (reference C.7: exact search over the limit)."""

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from tilewright.compiler.dfb_coloring import color, greedy_clique


def graph(n: int, edges) -> list[set[int]]:
    adjacency: list[set[int]] = [set() for _ in range(n)]
    for a, b in edges:
        adjacency[a].add(b)
        adjacency[b].add(a)
    return adjacency


def valid(adjacency, colors, limit) -> bool:
    return all(0 <= c < limit for c in colors) and all(
        colors[v] != colors[w] for v in range(len(adjacency)) for w in adjacency[v]
    )


def chromatic(adjacency) -> int:
    n = len(adjacency)
    for k in range(1, n + 1):
        for colors in itertools.product(range(k), repeat=n):
            if valid(adjacency, colors, k):
                return k
    return 0


def test_bipartite_path_needs_two_colours_where_first_fit_takes_three():
    # x1 - x2 - x3 - x4 declared x1, x4, x2, x3: first-fit uses 3 colours, 2 suffice.
    adjacency = graph(4, [(0, 2), (2, 3), (3, 1)])
    outcome = color(adjacency, 2, 1000)
    assert outcome.colors is not None and valid(adjacency, outcome.colors, 2)
    assert outcome.colors[0] == outcome.colors[3] and outcome.colors[1] == outcome.colors[2]
    assert outcome.describe(2).startswith("exact search found a colouring with 2 indices in")


def test_odd_cycle_is_proved_to_need_three_colours_by_exhausting_the_search():
    cycle = graph(5, [(i, (i + 1) % 5) for i in range(5)])
    assert len(greedy_clique(cycle)) == 2  # the clique bound alone does not prove it
    outcome = color(cycle, 2, 10_000)
    assert outcome.colors is None and outcome.lower_bound == 3 and outcome.states > 0
    assert outcome.describe(2) == (
        f"exact search proved that at least 3 indices are needed ({outcome.states} states)"
    )


def test_a_clique_larger_than_the_limit_is_a_proof_without_search():
    outcome = color(graph(4, itertools.combinations(range(4), 2)), 3, 1000)
    assert (outcome.colors, outcome.states, outcome.lower_bound) == (None, 0, 4)


def test_the_state_limit_stops_the_search():
    cycle = graph(7, [(i, (i + 1) % 7) for i in range(7)])
    outcome = color(cycle, 2, 3)
    assert outcome.colors is None and outcome.lower_bound is None and outcome.states == 3
    assert outcome.describe(2) == (
        "exact search explored 3 states without finding a colouring with <= 2 indices"
    )


def test_the_search_is_deterministic():
    adjacency = graph(8, [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (0, 4)])
    assert color(adjacency, 3, 1000) == color(adjacency, 3, 1000)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=1, max_value=6).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.sets(
                st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(
                    lambda e: e[0] != e[1]
                )
            ),
        )
    )
)
def test_exact_search_agrees_with_brute_force(case):
    n, edges = case
    adjacency = graph(n, edges)
    best = chromatic(adjacency)
    found = color(adjacency, best, 100_000)
    assert found.colors is not None and valid(adjacency, found.colors, best)
    if best > 1:
        refuted = color(adjacency, best - 1, 100_000)
        assert refuted.colors is None and refuted.lower_bound is not None
        assert refuted.lower_bound >= best
