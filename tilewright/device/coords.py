"""Core coordinates and core sets, as tt-metal / ttnn spell them.

``CoreCoord(x, y)`` is a *logical* worker coordinate (x = column, y = row).
``CoreRange(start, end)`` is an inclusive rectangle; ``CoreRangeSet`` a set of
disjoint ranges.  Iteration order follows tt-metal's ``corerange_to_cores``:
row-wise (x fastest) unless ``row_wise=False``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from tilewright.errors import DeviceError

__all__ = ["CoreCoord", "CoreRange", "CoreRangeSet", "as_core_range_set"]


@dataclass(frozen=True, slots=True, order=True)
class CoreCoord:
    """A logical core coordinate: ``x`` is the column, ``y`` the row."""

    x: int
    y: int

    def __iter__(self) -> Iterator[int]:
        yield self.x
        yield self.y

    def __repr__(self) -> str:
        return f"CoreCoord(x={self.x}, y={self.y})"

    def __str__(self) -> str:
        return f"({self.x}, {self.y})"


def _coord(value: CoreCoord | tuple[int, int]) -> CoreCoord:
    if isinstance(value, CoreCoord):
        return value
    x, y = value
    return CoreCoord(int(x), int(y))


@dataclass(frozen=True, slots=True)
class CoreRange:
    """An inclusive rectangle of cores from ``start`` to ``end``."""

    start: CoreCoord
    end: CoreCoord

    def __init__(
        self, start: CoreCoord | tuple[int, int], end: CoreCoord | tuple[int, int] | None = None
    ):
        start = _coord(start)
        end = start if end is None else _coord(end)
        if end.x < start.x or end.y < start.y:
            raise DeviceError(f"CoreRange end {end} is before start {start}")
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "end", end)

    @property
    def start_coord(self) -> CoreCoord:
        return self.start

    @property
    def end_coord(self) -> CoreCoord:
        return self.end

    def num_cores(self) -> int:
        return (self.end.x - self.start.x + 1) * (self.end.y - self.start.y + 1)

    def grid_size(self) -> CoreCoord:
        return CoreCoord(self.end.x - self.start.x + 1, self.end.y - self.start.y + 1)

    def contains(self, other: CoreCoord | CoreRange | tuple[int, int]) -> bool:
        if isinstance(other, CoreRange):
            return self.contains(other.start) and self.contains(other.end)
        c = _coord(other)
        return self.start.x <= c.x <= self.end.x and self.start.y <= c.y <= self.end.y

    def intersects(self, other: CoreRange) -> bool:
        return not (
            other.start.x > self.end.x
            or other.end.x < self.start.x
            or other.start.y > self.end.y
            or other.end.y < self.start.y
        )

    def cores(self, row_wise: bool = True) -> list[CoreCoord]:
        xs = range(self.start.x, self.end.x + 1)
        ys = range(self.start.y, self.end.y + 1)
        if row_wise:
            return [CoreCoord(x, y) for y in ys for x in xs]
        return [CoreCoord(x, y) for x in xs for y in ys]

    def __iter__(self) -> Iterator[CoreCoord]:
        return iter(self.cores())

    def __repr__(self) -> str:
        return f"CoreRange({self.start!r}, {self.end!r})"

    def __str__(self) -> str:
        return f"[{self.start} - {self.end}]"


class CoreRangeSet:
    """A set of non-overlapping core ranges (kept in insertion order)."""

    __slots__ = ("_ranges",)

    def __init__(self, ranges: Iterable[CoreRange] | CoreRange | None = None):
        if ranges is None:
            ranges = ()
        elif isinstance(ranges, CoreRange):
            ranges = (ranges,)
        rs: list[CoreRange] = []
        for r in ranges:
            if not isinstance(r, CoreRange):
                raise DeviceError(f"CoreRangeSet takes CoreRange items, got {type(r).__name__}")
            for other in rs:
                if r.intersects(other):
                    raise DeviceError(f"CoreRangeSet ranges {other} and {r} overlap")
            rs.append(r)
        self._ranges = tuple(rs)

    def ranges(self) -> tuple[CoreRange, ...]:
        return self._ranges

    def num_cores(self) -> int:
        return sum(r.num_cores() for r in self._ranges)

    def contains(self, other: CoreCoord | CoreRange | tuple[int, int]) -> bool:
        if isinstance(other, CoreRange):
            return all(self.contains(c) for c in other.cores())
        return any(r.contains(other) for r in self._ranges)

    def bounding_box(self) -> CoreRange:
        if not self._ranges:
            raise DeviceError("bounding_box of an empty CoreRangeSet")
        return CoreRange(
            CoreCoord(min(r.start.x for r in self._ranges), min(r.start.y for r in self._ranges)),
            CoreCoord(max(r.end.x for r in self._ranges), max(r.end.y for r in self._ranges)),
        )

    def cores(self, row_wise: bool = True) -> list[CoreCoord]:
        """All cores, range by range (tt-metal ``corerange_to_cores``)."""
        out: list[CoreCoord] = []
        for r in self._ranges:
            out.extend(r.cores(row_wise))
        return out

    def merge(self, other: CoreRangeSet) -> CoreRangeSet:
        return CoreRangeSet(self._ranges + tuple(r for r in other._ranges if r not in self._ranges))

    def __iter__(self) -> Iterator[CoreRange]:
        return iter(self._ranges)

    def __len__(self) -> int:
        return len(self._ranges)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CoreRangeSet) and set(self._ranges) == set(other._ranges)

    def __hash__(self) -> int:
        return hash(frozenset(self._ranges))

    def __repr__(self) -> str:
        return f"CoreRangeSet({list(self._ranges)!r})"


def as_core_range_set(spec: CoreCoord | CoreRange | CoreRangeSet | tuple[int, int]) -> CoreRangeSet:
    """Normalise a tt-metal ``core_spec`` (coord, range or set) to a CoreRangeSet."""
    if isinstance(spec, CoreRangeSet):
        return spec
    if isinstance(spec, CoreRange):
        return CoreRangeSet([spec])
    if isinstance(spec, (CoreCoord, tuple)):
        c = _coord(spec)
        return CoreRangeSet([CoreRange(c, c)])
    raise DeviceError(f"expected a CoreCoord, CoreRange or CoreRangeSet, got {type(spec).__name__}")
