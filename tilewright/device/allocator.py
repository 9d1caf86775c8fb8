"""First-fit free-list allocator over one address range (tt-metal ``FreeListOpt``, FIRST).

One allocator serves a whole bank group: an interleaved DRAM buffer gets the same
address in every DRAM bank, an L1 buffer the same address on every core, so the
allocator hands out *per-bank* address ranges.  DRAM allocates bottom-up, L1 top-down
(tt-metal ``Buffer``: ``bottom_up = is_dram()``).  Sizes are rounded up to the bank
alignment.  Running out names the request, the free bytes and the largest free block.
"""

from __future__ import annotations

import bisect

from tilewright.errors import DeviceError, OutOfMemoryError

__all__ = ["FreeListAllocator"]


def _round_up(value: int, align: int) -> int:
    return -(-value // align) * align


class FreeListAllocator:
    """Allocates aligned address ranges inside ``[base, end)``."""

    __slots__ = ("name", "base", "end", "alignment", "_free_starts", "_free_sizes", "_allocated")

    def __init__(self, name: str, base: int, end: int, alignment: int) -> None:
        if end < base:
            raise DeviceError(f"{name}: empty address range [{base:#x}, {end:#x})")
        self.name = name
        self.alignment = alignment
        self.base = _round_up(base, alignment)
        self.end = end - (end % alignment)
        self._free_starts: list[int] = [self.base] if self.end > self.base else []
        self._free_sizes: list[int] = [self.end - self.base] if self.end > self.base else []
        self._allocated: dict[int, int] = {}

    # -- queries -------------------------------------------------------------------------

    @property
    def capacity(self) -> int:
        return self.end - self.base

    def free_bytes(self) -> int:
        return sum(self._free_sizes)

    def largest_free_block(self) -> int:
        return max(self._free_sizes, default=0)

    def allocated(self) -> dict[int, int]:
        """Address → size of every live allocation."""
        return dict(self._allocated)

    def lowest_allocated_address(self) -> int | None:
        return min(self._allocated, default=None)

    def highest_allocated_end(self) -> int | None:
        return max((a + s for a, s in self._allocated.items()), default=None)

    def allocated_run(self, addr: int) -> tuple[int, int]:
        """The run of allocated bytes around allocated ``addr``: from the end of the free
        block below it (or the range's start) to the start of the one above (or the end)."""
        i = bisect.bisect_right(self._free_starts, addr)
        lo = self._free_starts[i - 1] + self._free_sizes[i - 1] if i > 0 else self.base
        hi = self._free_starts[i] if i < len(self._free_starts) else self.end
        return lo, hi

    # -- allocation ----------------------------------------------------------------------

    def allocate(self, size: int, *, bottom_up: bool = True, what: str = "buffer") -> int:
        """Reserve ``size`` bytes (rounded up to the alignment); return the address."""
        if size <= 0:
            raise DeviceError(f"{self.name}: cannot allocate {size} B for {what}")
        size = _round_up(size, self.alignment)
        indices = range(len(self._free_starts))
        order = indices if bottom_up else reversed(indices)
        for i in order:
            start, block = self._free_starts[i], self._free_sizes[i]
            if block < size:
                continue
            addr = start if bottom_up else start + block - size
            self._carve(i, addr, size)
            self._allocated[addr] = size
            return addr
        raise OutOfMemoryError(
            f"out of memory in {self.name}: cannot allocate {size} B for {what}; "
            f"{self.free_bytes()} B free, largest free block {self.largest_free_block()} B"
        )

    def allocate_at(self, addr: int, size: int, *, what: str = "buffer") -> int:
        """Reserve exactly ``[addr, addr + size)``; fails if any of it is taken."""
        size = _round_up(size, self.alignment)
        i = bisect.bisect_right(self._free_starts, addr) - 1
        if i < 0 or addr + size > self._free_starts[i] + self._free_sizes[i]:
            raise OutOfMemoryError(
                f"{self.name}: [{addr:#x}, {addr + size:#x}) for {what} is not free"
            )
        self._carve(i, addr, size)
        self._allocated[addr] = size
        return addr

    def free(self, addr: int) -> None:
        size = self._allocated.pop(addr, None)
        if size is None:
            raise DeviceError(f"{self.name}: no allocation at {addr:#x} to free")
        i = bisect.bisect_left(self._free_starts, addr)
        self._free_starts.insert(i, addr)
        self._free_sizes.insert(i, size)
        # Coalesce with the right and then the left neighbour.
        if i + 1 < len(self._free_starts) and addr + size == self._free_starts[i + 1]:
            self._free_sizes[i] += self._free_sizes.pop(i + 1)
            self._free_starts.pop(i + 1)
        if i > 0 and self._free_starts[i - 1] + self._free_sizes[i - 1] == addr:
            self._free_sizes[i - 1] += self._free_sizes.pop(i)
            self._free_starts.pop(i)

    def _carve(self, i: int, addr: int, size: int) -> None:
        start, block = self._free_starts[i], self._free_sizes[i]
        left = addr - start
        right = start + block - (addr + size)
        pieces = [(s, n) for s, n in ((start, left), (addr + size, right)) if n > 0]
        self._free_starts[i : i + 1] = [s for s, _ in pieces]
        self._free_sizes[i : i + 1] = [n for _, n in pieces]
