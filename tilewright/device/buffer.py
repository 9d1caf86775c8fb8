"""Device buffers: interleaved (DRAM or L1) and sharded (L1), with tt-metal address math.

Interleaved (``dataflow_api_addrgen.h`` ``InterleavedAddrGen``)::

    bank        = page_id % num_banks
    bank_offset = page_id // num_banks
    local_addr  = address + bank_offset * aligned_page_size

DRAM banks are the DRAM channels; L1 banks are the worker cores in row-major order
(tt-metal shuffles L1 bank ids with ``std::default_random_engine(0)``; we do not —
kernels get the bank table either way, only absolute bank numbering differs).

Sharded (2D, one shard per core): the tensor's 2D page grid is cut into shards of
``shard_shape`` pages; HEIGHT/WIDTH shards go to the cores of the grid in
``corerange_to_cores(grid, row_wise = orientation == ROW_MAJOR)`` order; BLOCK
shard (r, c) goes to core (x=c, y=r) (ROW_MAJOR) or (x=r, y=c) (COL_MAJOR) relative
to the grid's start.  A shard's pages are stored row-major at the same L1 address
on every core.  Host reads and writes are vectorised per bank / per core.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tilewright.device.coords import CoreCoord, CoreRangeSet
from tilewright.device.named_enum import NamedIntEnum
from tilewright.errors import DeviceError

__all__ = [
    "BufferType",
    "TensorMemoryLayout",
    "ShardOrientation",
    "ShardSpec",
    "ShardSpecBuffer",
    "Buffer",
]


class BufferType(NamedIntEnum):
    DRAM = 0
    L1 = 1
    SYSTEM_MEMORY = 2
    L1_SMALL = 3
    TRACE = 4


class TensorMemoryLayout(NamedIntEnum):
    INTERLEAVED = 0
    HEIGHT_SHARDED = 2
    WIDTH_SHARDED = 3
    BLOCK_SHARDED = 4


class ShardOrientation(NamedIntEnum):
    ROW_MAJOR = 0
    COL_MAJOR = 1


@dataclass(frozen=True, slots=True)
class ShardSpec:
    """A 2D shard specification: core grid, shard shape in elements [rows, cols]."""

    grid: CoreRangeSet
    shape: tuple[int, int]
    orientation: ShardOrientation = ShardOrientation.ROW_MAJOR

    def __init__(self, grid, shape, orientation=ShardOrientation.ROW_MAJOR):
        object.__setattr__(self, "grid", grid)
        object.__setattr__(self, "shape", (int(shape[0]), int(shape[1])))
        object.__setattr__(self, "orientation", ShardOrientation(orientation))

    def num_cores(self) -> int:
        return self.grid.num_cores()


@dataclass(frozen=True, slots=True)
class ShardSpecBuffer:
    """A shard spec plus the page geometry of the tensor stored in the buffer."""

    spec: ShardSpec
    page_shape: tuple[int, int]
    tensor2d_shape_in_pages: tuple[int, int]

    @property
    def shard_shape_in_pages(self) -> tuple[int, int]:
        (sh, sw), (ph, pw) = self.spec.shape, self.page_shape
        if sh % ph or sw % pw:
            raise DeviceError(
                f"shard shape {self.spec.shape} is not a multiple of the page shape {self.page_shape}"
            )
        return sh // ph, sw // pw

    @property
    def num_shards(self) -> tuple[int, int]:
        (tr, tc), (sr, sc) = self.tensor2d_shape_in_pages, self.shard_shape_in_pages
        return math.ceil(tr / sr), math.ceil(tc / sc)


def _round_up(value: int, align: int) -> int:
    return -(-value // align) * align


FEW_PAGES = 32
"""Up to this many pages, page I/O goes page by page (cheaper than numpy grouping)."""


class Buffer:
    """A device buffer of ``num_pages`` pages of ``page_size`` bytes."""

    def __init__(
        self,
        device,
        size: int,
        page_size: int,
        buffer_type: BufferType = BufferType.DRAM,
        layout: TensorMemoryLayout = TensorMemoryLayout.INTERLEAVED,
        shard: ShardSpecBuffer | None = None,
    ) -> None:
        if page_size <= 0 or size % page_size:
            raise DeviceError(f"buffer size {size} B is not a multiple of page size {page_size} B")
        self.device = device
        self.size = size
        self.page_size = page_size
        self.num_pages = size // page_size
        self.buffer_type = BufferType(buffer_type)
        self.layout = TensorMemoryLayout(layout)
        self.shard = shard
        if self.buffer_type in (BufferType.SYSTEM_MEMORY, BufferType.TRACE):
            raise DeviceError(f"{self.buffer_type.name} buffers are not device buffers")
        is_dram = self.buffer_type == BufferType.DRAM
        self.alignment = device.dram_alignment if is_dram else device.l1_alignment
        self.aligned_page_size = _round_up(page_size, self.alignment)
        if self.layout == TensorMemoryLayout.INTERLEAVED:
            if shard is not None:
                raise DeviceError("an interleaved buffer takes no shard spec")
            self.num_banks = device.num_dram_channels if is_dram else device.num_l1_banks
            per_bank = math.ceil(self.num_pages / self.num_banks) * self.aligned_page_size
        else:
            if shard is None:
                raise DeviceError(f"a {self.layout.name} buffer needs a shard spec")
            if is_dram:
                raise DeviceError("sharded buffers live in L1 (DRAM sharding is not supported)")
            self._shard_cores = self._compute_shard_cores(shard)
            sr, sc = shard.shard_shape_in_pages
            self.num_banks = len(self._shard_cores)
            per_bank = sr * sc * self.aligned_page_size
        self.size_per_bank = per_bank
        self._allocator = {
            BufferType.DRAM: device.dram_allocator,
            BufferType.L1: device.l1_allocator,
            BufferType.L1_SMALL: device.l1_small_allocator,
        }[self.buffer_type]
        what = f"{self.layout.name.lower()} {self.buffer_type.name} buffer of {size} B"
        self.address = self._allocator.allocate(per_bank, bottom_up=is_dram, what=what)
        self.allocated = True
        if is_dram:
            device.dram.cover(*self._allocator.allocated_run(self.address))
        self._check_no_cb_clash()
        device.buffers[id(self)] = self  # live until deallocated (ttnn's memory reports)

    # -- placement ---------------------------------------------------------------------------

    def _compute_shard_cores(self, shard: ShardSpecBuffer) -> list:
        spec = shard.spec
        n_r, n_c = shard.num_shards
        if self.layout == TensorMemoryLayout.HEIGHT_SHARDED:
            count = n_r
            if n_c != 1:
                raise DeviceError("height sharding needs the shard width to equal the tensor width")
        elif self.layout == TensorMemoryLayout.WIDTH_SHARDED:
            count = n_c
            if n_r != 1:
                raise DeviceError(
                    "width sharding needs the shard height to equal the tensor height"
                )
        else:
            count = n_r * n_c
        row_wise = spec.orientation == ShardOrientation.ROW_MAJOR
        if self.layout == TensorMemoryLayout.BLOCK_SHARDED:
            box = spec.grid.bounding_box()
            cores = []
            for r in range(n_r):
                for c in range(n_c):
                    x, y = (c, r) if row_wise else (r, c)
                    coord = CoreCoord(box.start.x + x, box.start.y + y)
                    if not spec.grid.contains(coord):
                        raise DeviceError(
                            f"block shard ({r}, {c}) maps to core {coord}, outside the shard grid"
                        )
                    cores.append(self.device.core(coord.x, coord.y))
            return cores
        grid_cores = spec.grid.cores(row_wise=row_wise)
        if count > len(grid_cores):
            raise DeviceError(
                f"{count} shards need {count} cores but the shard grid has {len(grid_cores)}"
            )
        return [self.device.core(c.x, c.y) for c in grid_cores[:count]]

    def _check_no_cb_clash(self) -> None:
        if self.buffer_type != BufferType.L1:
            return
        for core in self.device.cores:
            if core.cb_top > self.address:
                self._allocator.free(self.address)
                raise DeviceError(
                    f"L1 buffer at {self.address:#x} clashes with circular buffers on core "
                    f"{core.logical} that grow to {core.cb_top:#x}"
                )

    @property
    def is_dram(self) -> bool:
        return self.buffer_type == BufferType.DRAM

    @property
    def shard_cores(self) -> list:
        return list(self._shard_cores) if self.shard is not None else []

    def page_location(self, page_id: int) -> tuple[object, int]:
        """(memory owner, local address) of a page: a DRAM bank index or a Core."""
        if not 0 <= page_id < self.num_pages:
            raise DeviceError(f"page {page_id} out of range (buffer has {self.num_pages} pages)")
        if self.layout == TensorMemoryLayout.INTERLEAVED:
            bank, off = page_id % self.num_banks, page_id // self.num_banks
            owner = bank if self.is_dram else self.device.cores[bank]
            return owner, self.address + off * self.aligned_page_size
        core_i, off = self._sharded_location(np.array([page_id]))
        return self._shard_cores[int(core_i[0])], int(off[0])

    def _sharding(self) -> ShardSpecBuffer:
        """The shard spec of a sharded buffer."""
        if self.shard is None:
            raise DeviceError(f"a {self.layout.name} buffer has no shard spec")
        return self.shard

    def _sharded_location(self, pages: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        shard = self._sharding()
        tr, tc = shard.tensor2d_shape_in_pages
        sr, sc = shard.shard_shape_in_pages
        _, n_c = shard.num_shards
        pr, pc = np.divmod(pages, tc)
        shard_r, ir = np.divmod(pr, sr)
        shard_c, ic = np.divmod(pc, sc)
        if self.layout == TensorMemoryLayout.HEIGHT_SHARDED:
            core_i = shard_r
        elif self.layout == TensorMemoryLayout.WIDTH_SHARDED:
            core_i = shard_c
        else:
            core_i = shard_r * n_c + shard_c
        offset = self.address + (ir * sc + ic) * self.aligned_page_size
        return core_i, offset

    def memory_of(self, owner) -> np.ndarray:
        return self.device.dram.channel(owner) if isinstance(owner, int) else owner.l1

    # -- host I/O ------------------------------------------------------------------------

    def write(self, pages: np.ndarray) -> None:
        """Write all pages: ``pages`` is uint8 of shape (num_pages, page_size) or flat."""
        data = self._as_pages(pages)
        for owner, page_ids, addr in self._bank_runs():
            mem = self.memory_of(owner)
            n = len(page_ids)
            region = mem[addr : addr + n * self.aligned_page_size].reshape(
                n, self.aligned_page_size
            )
            region[:, : self.page_size] = data[page_ids]
            if not isinstance(owner, int):
                owner.notify_write(addr, addr + n * self.aligned_page_size)

    def read(self) -> np.ndarray:
        """All pages as uint8 of shape (num_pages, page_size)."""
        out = np.empty((self.num_pages, self.page_size), dtype=np.uint8)
        for owner, page_ids, addr in self._bank_runs():
            mem = self.memory_of(owner)
            n = len(page_ids)
            region = mem[addr : addr + n * self.aligned_page_size].reshape(
                n, self.aligned_page_size
            )
            out[page_ids] = region[:, : self.page_size]
        return out

    def read_pages(self, page_ids, out: np.ndarray | None = None) -> np.ndarray:
        """Pages ``page_ids`` (in that order) as uint8 (len, page_size), into ``out`` if given.

        ``page_ids`` may be a ``range`` (a page range takes one strided copy per bank).
        """
        runs = self._consecutive_runs(page_ids)
        if runs is None:
            ids = np.asarray(page_ids, dtype=np.int64).reshape(-1)
        n = len(page_ids) if runs is not None else ids.size
        if out is None:
            out = np.empty((n, self.page_size), dtype=np.uint8)
        elif out.shape != (n, self.page_size) or out.dtype != np.uint8:
            raise DeviceError(
                f"read_pages: out must be uint8 {(n, self.page_size)}, got {out.shape}"
            )
        ps = self.page_size
        if runs is None and ids.size <= FEW_PAGES:  # a block's worth: direct slices
            for i, (owner, addr) in enumerate(self.page_slots(ids)):
                out[i] = self.memory_of(owner)[addr : addr + ps]
            return out
        if runs is not None:  # a page range: one strided slice per bank
            for _owner, pos, region, _start, _end in runs:
                out[pos] = region
            return out
        for owner, pos, addrs in self.page_groups(ids):
            mem = self.memory_of(owner)
            out[pos] = mem[addrs[:, None] + np.arange(ps)]
        return out

    def write_pages(self, page_ids, data: np.ndarray) -> None:
        """Store uint8 (len, page_size) ``data`` into pages ``page_ids`` (a ``range`` too)."""
        runs = self._consecutive_runs(page_ids)
        if runs is None:
            ids = np.asarray(page_ids, dtype=np.int64).reshape(-1)
        n = len(page_ids) if runs is not None else ids.size
        data = np.asarray(data, dtype=np.uint8).reshape(n, self.page_size)
        ps = self.page_size
        if runs is None and ids.size <= FEW_PAGES:
            for i, (owner, addr) in enumerate(self.page_slots(ids)):
                self.memory_of(owner)[addr : addr + ps] = data[i]
                if not isinstance(owner, int):
                    owner.notify_write(addr, addr + ps)
            return
        if runs is not None:
            for owner, pos, region, start, end in runs:
                region[...] = data[pos]
                if not isinstance(owner, int):
                    owner.notify_write(start, end)
            return
        for owner, pos, addrs in self.page_groups(ids):
            mem = self.memory_of(owner)
            mem[addrs[:, None] + np.arange(ps)] = data[pos]
            if not isinstance(owner, int):
                owner.notify_write(int(addrs.min()), int(addrs.max()) + ps)

    def _consecutive_runs(self, page_ids):
        """For a ``range`` of pages of an interleaved buffer, more than a few: (owner,
        positions, page view, start, end) per bank, the view a strided slice of the bank's
        memory; else None."""
        if (
            not isinstance(page_ids, range)
            or page_ids.step != 1
            or len(page_ids) <= FEW_PAGES
            or self.layout != TensorMemoryLayout.INTERLEAVED
        ):
            return None
        first, n = page_ids.start, len(page_ids)
        self._check_alive()
        if first < 0 or first + n > self.num_pages:
            raise DeviceError(f"page ids outside 0..{self.num_pages - 1}")
        nb, aps, ps = self.num_banks, self.aligned_page_size, self.page_size
        dram = self.is_dram
        runs = []
        for k in range(min(nb, n)):  # each of the first pages starts one bank's run
            p0 = first + k
            bank = p0 % nb
            count = len(range(p0, first + n, nb))
            owner = bank if dram else self.device.cores[bank]
            addr = self.address + (p0 // nb) * aps
            mem = self.device.dram.channel(bank) if dram else owner.l1
            region = mem[addr : addr + count * aps].reshape(count, aps)[:, :ps]
            runs.append((owner, slice(p0 - first, n, nb), region, addr, addr + count * aps))
        return runs

    def page_slots(self, ids: np.ndarray):
        """(owner, local address) per page id, computed with Python ints (few pages)."""
        self._check_alive()
        n = self.num_pages
        if self.layout == TensorMemoryLayout.INTERLEAVED:
            nb, base, aps = self.num_banks, self.address, self.aligned_page_size
            cores = None if self.is_dram else self.device.cores
            for page in ids.tolist():
                if not 0 <= page < n:
                    raise DeviceError(f"page {page} outside 0..{n - 1}")
                bank, index = page % nb, page // nb
                yield (bank if cores is None else cores[bank]), base + index * aps
            return
        if ids.size and (ids.min() < 0 or ids.max() >= n):
            raise DeviceError(f"page ids outside 0..{n - 1}")
        core_i, addrs = self._sharded_location(ids)
        for c, a in zip(core_i.tolist(), addrs.tolist()):
            yield self._shard_cores[c], a

    def page_owner_codes(self, ids: np.ndarray) -> np.ndarray:
        """Each page's owner as the native runtime numbers a transfer's far end (int32): the
        core's index, or -2 - bank for a DRAM bank -- what a run of page transfers is timed
        with (``device/perf/kernel.py`` ``pages``), computed on the whole array."""
        self._check_alive()
        n = self.num_pages
        if self.layout == TensorMemoryLayout.INTERLEAVED:
            bad = ids[(ids < 0) | (ids >= n)]
            if bad.size:  # page_slots' message, for the first page out of range
                raise DeviceError(f"page {int(bad[0])} outside 0..{n - 1}")
            banks = ids % self.num_banks
            if self.is_dram:
                return (-2 - banks).astype(np.int32)
            return np.array([c.index for c in self.device.cores], dtype=np.int32)[banks]
        if ids.size and (ids.min() < 0 or ids.max() >= n):
            raise DeviceError(f"page ids outside 0..{n - 1}")
        core_i, _ = self._sharded_location(ids)
        return np.array([c.index for c in self._shard_cores], dtype=np.int32)[core_i]

    def page_groups(self, ids: np.ndarray):
        """Group page ids by bank: (owner, positions in ``ids``, local addresses)."""
        self._check_alive()
        if ids.size and (ids.min() < 0 or ids.max() >= self.num_pages):
            raise DeviceError(f"page ids outside 0..{self.num_pages - 1}")
        if self.layout == TensorMemoryLayout.INTERLEAVED:
            banks = ids % self.num_banks
            addrs = self.address + (ids // self.num_banks) * self.aligned_page_size
        else:
            banks, addrs = self._sharded_location(ids)
        for bank in np.unique(banks):
            pos = np.nonzero(banks == bank)[0]
            b = int(bank)
            if self.layout == TensorMemoryLayout.INTERLEAVED:
                owner = b if self.is_dram else self.device.cores[b]
            else:
                owner = self._shard_cores[b]
            yield owner, pos, addrs[pos]

    def _bank_runs(self):
        """(owner, page ids in storage order, start address) per bank / core."""
        self._check_alive()
        if self.layout == TensorMemoryLayout.INTERLEAVED:
            for bank in range(min(self.num_banks, self.num_pages)):
                owner = bank if self.is_dram else self.device.cores[bank]
                yield owner, np.arange(bank, self.num_pages, self.num_banks), self.address
            return
        shard = self._sharding()
        tr, tc = shard.tensor2d_shape_in_pages
        sr, sc = shard.shard_shape_in_pages
        n_r, n_c = shard.num_shards
        for i, core in enumerate(self._shard_cores):
            if self.layout == TensorMemoryLayout.HEIGHT_SHARDED:
                r, c = i, 0
            elif self.layout == TensorMemoryLayout.WIDTH_SHARDED:
                r, c = 0, i
            else:
                r, c = divmod(i, n_c)
            rows = np.arange(r * sr, min((r + 1) * sr, tr))
            cols = np.arange(c * sc, min((c + 1) * sc, tc))
            if len(rows) == 0 or len(cols) == 0:
                continue
            if len(cols) == sc:
                ids = (rows[:, None] * tc + cols[None, :]).reshape(-1)
                yield core, ids, self.address
            else:  # a partial edge shard: store row by row at the full-shard pitch
                for k, row in enumerate(rows):
                    yield core, row * tc + cols, self.address + k * sc * self.aligned_page_size

    def _as_pages(self, pages: np.ndarray) -> np.ndarray:
        if pages.dtype == np.uint8 and pages.shape == (self.num_pages, self.page_size):
            return pages  # as given: a broadcast view of repeated pages stays uncopied
        data = np.ascontiguousarray(pages).view(np.uint8)
        if data.size != self.num_pages * self.page_size:
            raise DeviceError(
                f"buffer write of {data.size} B does not match {self.num_pages} pages x "
                f"{self.page_size} B"
            )
        return data.reshape(self.num_pages, self.page_size)

    def _check_alive(self) -> None:
        if not self.allocated:
            raise DeviceError("buffer was deallocated")
        if self.device.closed:
            raise DeviceError("the buffer's device is closed")

    # -- lifetime --------------------------------------------------------------------------

    def deallocate(self) -> None:
        if self.allocated and not self.device.closed:
            self._allocator.free(self.address)
        self.allocated = False
        self.device.buffers.pop(id(self), None)

    def __repr__(self) -> str:
        return (
            f"<Buffer {self.layout.name} {self.buffer_type.name} @ {self.address:#x} "
            f"{self.num_pages}x{self.page_size}B>"
        )
