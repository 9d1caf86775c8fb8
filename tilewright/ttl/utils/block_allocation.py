"""Work and block allocation over a grid of nodes (``ttl.utils.block_allocation``).

Coordinates follow tt-lang's helper: a grid is given as ``(..., rows, columns)`` (the
last entry is the number of columns) and a range is ``(start, end)`` of inclusive
``(..., row, column)`` coordinates.  ``split_work_to_nodes`` makes the same split as
``ttnn.split_work_to_cores``: the first ``units % nodes`` nodes (in row-major order when
``row_wise``, else column-major) take one unit more than the others.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "MatmulBlockParams",
    "get_large_matmul_params",
    "get_number_of_nodes_from_ranges",
    "split_work_to_nodes",
]

Coord = tuple[int, ...]
NodeRange = tuple[Coord, Coord]

#: L1 budget of the reuse-mcast matmul in tiles: 2 K-blocks of A and B (double-buffered)
#: plus one output block must fit (``2*K*M + 2*K*N + M*N <= 400``), as tt-metal sizes it.
_L1_TILES = 400
#: Sub-block shapes (height, width) in preference order: the largest DST-sized blocks first.
_SUBBLOCKS = (
    (4, 2), (2, 4), (8, 1), (1, 8), (7, 1), (1, 7), (3, 2), (2, 3), (6, 1), (1, 6),
    (5, 1), (1, 5), (2, 2), (4, 1), (1, 4), (3, 1), (1, 3), (2, 1), (1, 2), (1, 1),
)  # fmt: skip


def get_number_of_nodes_from_ranges(ranges: Sequence[NodeRange]) -> int:
    """How many nodes the inclusive ranges cover (ranges are disjoint)."""
    return sum(math.prod(e - s + 1 for s, e in zip(start, end)) for start, end in ranges)


def _prefix_ranges(first: int, count: int, rows: int, cols: int, row_wise: bool) -> list[NodeRange]:
    """Nodes ``first .. first+count-1`` in fill order as few rectangles: a partial line, full
    lines, a partial line (a line is a row when ``row_wise``, else a column)."""
    line = cols if row_wise else rows
    out: list[NodeRange] = []

    def rect(line_a: int, pos_a: int, line_b: int, pos_b: int) -> NodeRange:
        if row_wise:  # lines are rows: (row, column)
            return (line_a, pos_a), (line_b, pos_b)
        return (pos_a, line_a), (pos_b, line_b)  # lines are columns

    start, stop = first, first + count
    if start % line and start < stop:  # finish the partial line
        end = min(stop, (start // line + 1) * line)
        out.append(
            rect(
                start // line,
                start % line,
                start // line,
                end % line - 1 if end % line else line - 1,
            )
        )
        start = end
    full = (stop - start) // line
    if full:
        out.append(rect(start // line, 0, start // line + full - 1, line - 1))
        start += full * line
    if start < stop:
        out.append(rect(start // line, 0, start // line, stop - start - 1))
    return out


def split_work_to_nodes(
    grid: Sequence[int], units: int, row_wise: bool = False
) -> tuple[int, list[NodeRange], list[NodeRange], int, int]:
    """``(nodes used, group 1 ranges, group 2 ranges, units per group-1 node, units per
    group-2 node)``: ``units`` of work over a ``(rows, columns)`` grid.

    Group 1 is the first ``units % nodes`` nodes (one unit more each) -- or every node
    when the work divides evenly (group 2 is then empty).
    """
    rows, cols = int(grid[-2]), int(grid[-1])
    total = rows * cols
    if units <= 0 or total <= 0:
        return 0, [], [], 0, 0
    nodes = min(units, total)
    per, extra = divmod(units, nodes)
    if extra == 0:
        return nodes, _prefix_ranges(0, nodes, rows, cols, row_wise), [], per, 0
    return (
        nodes,
        _prefix_ranges(0, extra, rows, cols, row_wise),
        _prefix_ranges(extra, nodes - extra, rows, cols, row_wise),
        per + 1,
        per,
    )


@dataclass(frozen=True, slots=True)
class MatmulBlockParams:
    """Per-node output block (tiles) and the sub-block its compute loop walks."""

    block_h: int
    block_w: int
    subblock_h: int
    subblock_w: int


_NONE = MatmulBlockParams(0, 0, 0, 0)


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


def _products(factors: Sequence[int]) -> list[int]:
    """Every product of a sub-multiset of ``factors`` (1 included), ascending."""
    products = {1}
    for f in factors:
        products |= {p * f for p in products}
    return sorted(products)


def _max_block_dim(other: int, k_block: int) -> int:
    """The largest block dimension that fits the L1 budget next to ``other`` (0: none)."""
    dim = int((_L1_TILES - 2 * k_block * other) / (2 * k_block + other))  # toward zero
    return max(dim, 0)


def _subblock(block_h: int, block_w: int) -> MatmulBlockParams | None:
    for h, w in _SUBBLOCKS:
        if block_h % h == 0 and block_w % w == 0:
            return MatmulBlockParams(block_h, block_w, h, w)
    return None


def get_large_matmul_params(
    Mt: int,
    Nt: int,
    num_nodes_y: int,
    num_nodes_x: int,
    K_block_t: int,  # noqa: N803
) -> MatmulBlockParams:
    """Output block ``(block_h, block_w)`` per node and its sub-block for an ``Mt x Nt``-tile
    matmul on a ``num_nodes_y x num_nodes_x`` grid with K blocks of ``K_block_t`` tiles.

    Blocks divide ``Mt`` / ``Nt`` and fit the L1 budget; a prime factor of ``Mt`` (``Nt``)
    at least the grid's height (width) must stay inside one node's block.  All zeros when
    no blocking fits the grid.
    """
    m_factors, n_factors = _prime_factors(Mt), _prime_factors(Nt)
    m_min = math.prod(f for f in m_factors if f >= num_nodes_y)
    n_min = math.prod(f for f in n_factors if f >= num_nodes_x)
    m_rest = [f for f in m_factors if f < num_nodes_y]
    n_rest = [f for f in n_factors if f < num_nodes_x]
    if n_min > _max_block_dim(m_min, K_block_t):
        return _NONE

    def fits(block_h: int, block_w: int) -> bool:
        return Mt // block_h <= num_nodes_y and Nt // block_w <= num_nodes_x

    if m_min > 1 or n_min > 1:  # one dimension is fixed by a large factor: grow the other
        grow_n = m_min > 1
        fixed, start = (m_min, n_min) if grow_n else (n_min, m_min)
        limit = _max_block_dim(fixed, K_block_t)
        grown = start
        for p in _products(n_rest if grow_n else m_rest):
            if p * start > limit:
                break
            grown = p * start
        block_h, block_w = (fixed, grown) if grow_n else (grown, fixed)
        if not fits(block_h, block_w):
            return _NONE
        return _subblock(block_h, block_w) or _NONE
    block_h = 1
    for block_w in _products(n_rest):
        limit = _max_block_dim(block_w, K_block_t)
        for p in _products(m_rest):
            if p <= limit:
                block_h = p
        if fits(block_h, block_w):
            found = _subblock(block_h, block_w)
            if found is not None:
                return found
    return _NONE
