"""Where the chips of a system sit: Ethernet links and mesh layouts (the control plane's map).

A system descriptor lists chips and the Ethernet channels between them (reference §8.3)
but no mesh layout: its chip coordinates are placeholders.  :class:`SystemMesh` reads the
links and lays the chips out as a rows x columns mesh in which mesh neighbours are
linked -- the shape a board preset names, or, for a descriptor from a file, the most
square shape the links allow.  :meth:`SystemMesh.place` then maps a requested mesh shape
onto chips: the system's own layout, its transpose, a sub-rectangle (at an offset), a
line snaking through the layout (``MeshShape(1, 8)`` on a 2x4 T3K), or any embedding a
bounded search finds in the link graph.

Channel endpoints are TT-Metal device ids; here a chip's device id is its position in
the descriptor.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from tilewright.errors import DeviceError

__all__ = ["MeshError", "MeshShape", "MeshCoordinate", "SystemMesh"]

_SEARCH_BUDGET = 200_000
"""Placement attempts before an embedding search gives up (keeps bad requests fast)."""


class MeshError(DeviceError):
    """A mesh request the system cannot satisfy, or a mesh used wrongly."""

    default_rule = "mesh"


def _pair(dims: Sequence[object], what: str) -> tuple[int, int]:
    if len(dims) == 1 and isinstance(dims[0], (tuple, list, MeshShape, MeshCoordinate)):
        dims = tuple(dims[0])
    if len(dims) == 1:
        dims = (1, dims[0])  # a 1-D shape is one row
    if len(dims) != 2 or not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        raise MeshError(f"{what} takes one or two integers (rows, columns), got {tuple(dims)}")
    return int(dims[0]), int(dims[1])  # type: ignore[call-overload]


class MeshShape:
    """A mesh shape (rows, columns), as ``ttnn.MeshShape(2, 4)``; ``MeshShape(8)`` is one row."""

    __slots__ = ("rows", "cols")

    def __init__(self, *dims: object) -> None:
        self.rows, self.cols = _pair(dims, "MeshShape")
        if self.rows < 1 or self.cols < 1:
            raise MeshError(f"MeshShape({self.rows}, {self.cols}): both sizes must be at least 1")

    def mesh_size(self) -> int:
        return self.rows * self.cols

    def dims(self) -> int:
        return 2

    def __iter__(self) -> Iterator[int]:
        yield self.rows
        yield self.cols

    def __getitem__(self, axis: int) -> int:
        return (self.rows, self.cols)[axis]

    def __len__(self) -> int:
        return 2

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (MeshShape, tuple, list)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.rows, self.cols))

    def __repr__(self) -> str:
        return f"MeshShape({self.rows}, {self.cols})"


class MeshCoordinate:
    """A chip's place in a mesh (row, column), as ``ttnn.MeshCoordinate(0, 3)``."""

    __slots__ = ("row", "col")

    def __init__(self, *coords: object) -> None:
        self.row, self.col = _pair(coords, "MeshCoordinate")
        if self.row < 0 or self.col < 0:
            raise MeshError(f"MeshCoordinate({self.row}, {self.col}) must not be negative")

    def __iter__(self) -> Iterator[int]:
        yield self.row
        yield self.col

    def __getitem__(self, axis: int) -> int:
        return (self.row, self.col)[axis]

    def __len__(self) -> int:
        return 2

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (MeshCoordinate, tuple, list)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.row, self.col))

    def __repr__(self) -> str:
        return f"MeshCoordinate({self.row}, {self.col})"


Layout = tuple[tuple[int, ...], ...]
"""Chips of a mesh, ``layout[row][col]`` (device ids)."""


@dataclass(frozen=True, slots=True)
class _Request:
    rows: int
    cols: int
    ring: bool = False  # a line whose ends are linked too


class SystemMesh:
    """The chips of one system descriptor, their Ethernet links and their mesh layout."""

    def __init__(self, system_desc, shape: tuple[int, int] | None = None, name: str = "") -> None:
        self.num_chips = len(system_desc.chip_desc_indices)
        self.name = name or f"{self.num_chips}-chip system"
        self.links: dict[tuple[int, int], int] = {}
        for i, ch in enumerate(system_desc.chip_channels):
            a, b = ch.device_id0, ch.device_id1
            for end in (a, b):
                if not 0 <= end < self.num_chips:
                    raise MeshError(
                        f"chip_channels[{i}] links device {end}, but the system has "
                        f"{self.num_chips} chips (devices 0..{self.num_chips - 1})"
                    )
            if a != b:
                key = (min(a, b), max(a, b))
                self.links[key] = self.links.get(key, 0) + 1
        neighbours: list[set[int]] = [set() for _ in range(self.num_chips)]
        for a, b in self.links:
            neighbours[a].add(b)
            neighbours[b].add(a)
        self.neighbours = tuple(frozenset(n) for n in neighbours)
        self.layout = self._system_layout(shape)

    # -- links ---------------------------------------------------------------------------------

    def linked(self, a: int, b: int) -> bool:
        return b in self.neighbours[a]

    def link_count(self, a: int, b: int) -> int:
        return self.links.get((min(a, b), max(a, b)), 0)

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.layout), len(self.layout[0])

    # -- layouts -------------------------------------------------------------------------------

    def _system_layout(self, shape: tuple[int, int] | None) -> Layout:
        n = self.num_chips
        if shape is not None:
            rows, cols = shape
            if rows * cols != n:
                raise MeshError(
                    f"mesh shape {rows}x{cols} does not hold the {n} chips of {self.name}"
                )
            found = self._embed(_Request(rows, cols), range(n))
            if found is None:
                raise MeshError(
                    f"the Ethernet links of {self.name} do not form a {rows}x{cols} mesh"
                )
            return found
        # A descriptor from a file: the most square shape the links allow, else a line,
        # else (no usable links) the chips in a row with no mesh links.
        shapes = sorted(
            ((r, n // r) for r in range(1, n + 1) if n % r == 0 and r <= n // r),
            key=lambda s: s[1] - s[0],
        )
        for rows, cols in shapes:
            found = self._embed(_Request(rows, cols), range(n))
            if found is not None:
                return found
        return (tuple(range(n)),)

    def is_mesh(self, layout: Layout) -> bool:
        """Whether mesh neighbours in ``layout`` are all linked."""
        rows, cols = len(layout), len(layout[0])
        for r in range(rows):
            for c in range(cols):
                chip = layout[r][c]
                if c + 1 < cols and not self.linked(chip, layout[r][c + 1]):
                    return False
                if r + 1 < rows and not self.linked(chip, layout[r + 1][c]):
                    return False
        return True

    def place(
        self,
        rows: int,
        cols: int,
        *,
        offset: tuple[int, int] | None = None,
        device_ids: Sequence[int] | None = None,
    ) -> Layout:
        """The chips of a ``rows x cols`` mesh device on this system.

        Raises:
            MeshError: the shape does not fit, the offset puts it outside the system mesh,
                or ``device_ids`` are not ``rows * cols`` distinct chips of the system.
        """
        n = rows * cols
        sys_rows, sys_cols = self.shape
        what = f"mesh shape {rows}x{cols}"
        if n > self.num_chips:
            raise MeshError(
                f"{what} needs {n} chips but {self.name} has {self.num_chips} "
                f"(a {sys_rows}x{sys_cols} mesh)",
                hint="open a smaller mesh, or choose a bigger system with --board",
            )
        if device_ids is not None:
            ids = [int(d) for d in device_ids]
            if len(ids) != n or len(set(ids)) != n or not all(0 <= d < self.num_chips for d in ids):
                raise MeshError(
                    f"physical_device_ids {ids} must be {n} distinct chips of {self.name} "
                    f"(0..{self.num_chips - 1}) for {what}"
                )
            return tuple(tuple(ids[r * cols : (r + 1) * cols]) for r in range(rows))
        if offset is not None:
            r0, c0 = offset
            if r0 < 0 or c0 < 0 or r0 + rows > sys_rows or c0 + cols > sys_cols:
                raise MeshError(
                    f"{what} at offset ({r0}, {c0}) reaches outside the {sys_rows}x{sys_cols} "
                    f"mesh of {self.name}"
                )
            return _sub(self.layout, r0, c0, rows, cols)
        for layout in (self.layout, _transpose(self.layout)):
            if rows <= len(layout) and cols <= len(layout[0]):
                return _sub(layout, 0, 0, rows, cols)
        if rows == 1 or cols == 1:
            line = self._line(n)
            if line is not None:
                return tuple((c,) for c in line) if cols == 1 else (tuple(line),)
        found = self._embed(_Request(rows, cols), range(self.num_chips))
        if found is None:
            raise MeshError(
                f"{what} does not fit the Ethernet links of {self.name} "
                f"(a {sys_rows}x{sys_cols} mesh)",
                hint="open a shape that fits the system mesh (or its transpose)",
            )
        return found

    def _line(self, n: int) -> list[int] | None:
        """``n`` chips in a line: the system layout walked as a snake (a ring when it closes)."""
        snake = [
            chip
            for r, row in enumerate(self.layout)
            for chip in (row if r % 2 == 0 else reversed(row))
        ]
        line = snake[:n]
        if all(self.linked(a, b) for a, b in zip(line, line[1:])):
            return line
        found = self._embed(_Request(1, n), range(self.num_chips))
        return list(found[0]) if found is not None else None

    def _embed(self, req: _Request, chips: range) -> Layout | None:
        """A placement of ``req`` on linked chips: the identity if it works, else a search.

        Depth-first over mesh positions in row-major order; a position's candidates are the
        unused chips linked to its placed neighbours (above, left), fewest onward links
        first (Warnsdorff's rule), then by id -- deterministic.  Gives up (None) after
        ``_SEARCH_BUDGET`` placements.
        """
        rows, cols = req.rows, req.cols
        n = rows * cols
        if n > len(chips):
            return None
        ident = tuple(tuple(chips[r * cols + c] for c in range(cols)) for r in range(rows))
        if self.is_mesh(ident) and (not req.ring or self.linked(ident[0][0], ident[-1][-1])):
            return ident
        placed: list[int] = []
        used: set[int] = set()
        budget = [_SEARCH_BUDGET]
        pool = sorted(chips, key=lambda c: (len(self.neighbours[c]), c))

        def candidates(pos: int) -> list[int]:
            r, c = divmod(pos, cols)
            if pos == 0:
                return pool
            anchor = placed[pos - cols] if r > 0 else placed[pos - 1]
            options = [x for x in self.neighbours[anchor] if x not in used]
            if r > 0 and c > 0:
                left = placed[pos - 1]
                options = [x for x in options if self.linked(x, left)]
            return sorted(options, key=lambda x: (len(self.neighbours[x] - used), x))

        def place(pos: int) -> bool:
            if pos == n:
                return not req.ring or self.linked(placed[0], placed[-1])
            for chip in candidates(pos):
                budget[0] -= 1
                if budget[0] < 0:
                    return False
                placed.append(chip)
                used.add(chip)
                if place(pos + 1):
                    return True
                placed.pop()
                used.discard(chip)
            return False

        if not place(0):
            return None
        return tuple(tuple(placed[r * cols : (r + 1) * cols]) for r in range(rows))


def _sub(layout: Layout, r0: int, c0: int, rows: int, cols: int) -> Layout:
    return tuple(tuple(layout[r][c0 : c0 + cols]) for r in range(r0, r0 + rows))


def _transpose(layout: Layout) -> Layout:
    return tuple(zip(*layout))
