"""Device memory as real bytes: every core's L1 and every DRAM channel.

L1
    All worker cores' L1s of a device are one shared memory object (a ``memfd``), one
    64 KiB-aligned *slot* per core, mapped once anywhere in the process (no 2 GiB
    limit: meshes of many chips fit).  Python sees each slot as a ``numpy.uint8``
    view.  Native kernels see their own core's L1 at its *identity* addresses too:
    the native runtime maps the running core's slot at virtual address = local L1
    address (``NATIVE_WINDOW``), so a local L1 address is a pointer, as on hardware
    (docs/cpp-kernels.md).  Untouched pages cost nothing.

DRAM
    One anonymous ``MAP_NORESERVE`` mapping per channel (bank), created on first
    touch.  Untouched pages cost nothing, so a 12 GiB Wormhole DRAM (or 32 GiB on
    Blackhole) is free until a buffer is written.  A 2 MiB stretch of the channels that
    buffers cover completely is backed by transparent huge pages (:meth:`DramChannels.
    cover`): kernels stream whole tensors through DRAM, and with 4 KiB pages an 8x8-grid
    elementwise call spends a tenth of its time on TLB misses.  Only covered stretches,
    because a huge page is resident as a whole: every touched bank of a 32-chip mesh
    holding a huge page cost 1 GB of RSS.

Shared memory for worker processes (``tilewright.distributed``)
    A device made with ``share=True`` keeps its DRAM in one ``memfd`` too (every channel
    at ``index * size``), so another process of the same user maps the same bytes: it
    opens the driver's descriptors through ``/proc/<pid>/fd/<n>`` (:class:`SharedMemoryRef`,
    :meth:`L1Arena.attach`, :meth:`DramChannels.attach`).  Not the default: this
    machine's shared memory gets no transparent huge pages (``shmem_enabled`` is
    ``never``), so shared DRAM loses the covered stretches' huge pages.
"""

from __future__ import annotations

import ctypes
import mmap
import os
from dataclasses import dataclass

import numpy as np

from tilewright.errors import DeviceError

__all__ = [
    "L1Arena",
    "DramChannels",
    "SharedMemoryRef",
    "memfd",
    "open_peer",
    "host_address_of",
    "NATIVE_WINDOW_BASE",
]

_MAP_NORESERVE = 0x4000
_HUGE_PAGE = 2 << 20
_MADV_COLLAPSE = 25  # Linux 6.1; not in Python 3.11's mmap module
_SLOT_ALIGN = 1 << 16
NATIVE_WINDOW_BASE = 1 << 16
"""Lowest L1 address native code can dereference: Linux keeps the first pages of the
address space unmapped (``vm.mmap_min_addr``); L1 below it is the firmware region."""


def host_address_of(buf: mmap.mmap) -> int:
    """Process address of the first byte of a mapping."""
    return ctypes.addressof(ctypes.c_char.from_buffer(buf))


@dataclass(frozen=True, slots=True)
class SharedMemoryRef:
    """Where another process finds a device's memory: the owner's pid and its memfds."""

    pid: int
    l1_fd: int
    dram_fd: int


def memfd(size: int, what: str) -> int:
    """A memfd of ``size`` bytes (sparse: untouched pages cost nothing), or -1 where memfd
    does not exist (not Linux)."""
    create = getattr(os, "memfd_create", None)
    if create is None:
        return -1
    fd = create(f"tilewright-{what}", getattr(os, "MFD_CLOEXEC", 1))
    try:
        os.ftruncate(fd, size)
    except OSError as exc:
        os.close(fd)
        raise DeviceError(f"cannot create {size} B of {what} memory: {exc}") from exc
    return fd


def _shared_memory(size: int) -> tuple[mmap.mmap, int]:
    """A shared mapping of ``size`` bytes and its memfd (-1 where memfd does not exist)."""
    fd = memfd(size, "l1")
    if fd < 0:  # not Linux: Python kernels work, native kernels need Linux
        return mmap.mmap(-1, size, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS), -1
    return mmap.mmap(fd, size, flags=mmap.MAP_SHARED), fd


def open_peer(pid: int, fd: int, what: str) -> int:
    """Our own descriptor of process ``pid``'s descriptor ``fd`` (same user, same host)."""
    try:
        return os.open(f"/proc/{pid}/fd/{fd}", os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise DeviceError(
            f"cannot map the {what} memory of process {pid} (descriptor {fd}): {exc}; worker "
            "processes must run on the driver's host as the same user"
        ) from exc


class L1Arena:
    """The L1 memories of ``num_cores`` cores, ``l1_size`` bytes each."""

    __slots__ = ("l1_size", "slot_size", "num_cores", "_map", "fd", "base", "view", "attached")

    def __init__(self, num_cores: int, l1_size: int, peer: tuple[int, int] | None = None) -> None:
        """``peer``: (pid, fd) of another process's arena to map instead of a new one."""
        self.l1_size = l1_size
        self.slot_size = -(-l1_size // _SLOT_ALIGN) * _SLOT_ALIGN
        self.num_cores = num_cores
        size = self.slot_size * num_cores
        if peer is None:
            m, self.fd = _shared_memory(size)
        else:
            self.fd = open_peer(*peer, "L1")
            m = mmap.mmap(self.fd, size, flags=mmap.MAP_SHARED)
        self._map: mmap.mmap | None = m  # None once closed
        self.attached = peer is not None
        self.base = host_address_of(m)
        self.view = np.frombuffer(m, dtype=np.uint8)

    def slot(self, index: int) -> np.ndarray:
        """The L1 of core ``index`` as a uint8 view of length ``l1_size``."""
        start = index * self.slot_size
        return self.view[start : start + self.l1_size]

    def host_base(self, index: int) -> int:
        """Process address of local L1 address 0 of core ``index`` (the permanent mapping)."""
        return self.base + index * self.slot_size

    def close(self) -> None:
        """Drop the contents (the pages go back to the OS; views left behind read zeros)."""
        self.view = np.empty(0, dtype=np.uint8)
        m, self._map = self._map, None
        if m is None:
            return
        if not self.attached:  # the owner drops the contents; a peer only unmaps
            m.madvise(mmap.MADV_REMOVE if self.fd >= 0 else mmap.MADV_DONTNEED)
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        try:
            m.close()
        except BufferError:  # numpy views still alive: the mapping goes with the last one
            pass


class DramChannels:
    """``count`` DRAM channels (banks) of ``size`` bytes, mapped lazily."""

    __slots__ = ("count", "size", "_maps", "_views", "_covered", "fd", "attached")

    def __init__(
        self, count: int, size: int, *, share: bool = False, peer: tuple[int, int] | None = None
    ) -> None:
        """``share``: one memfd holds every channel (another process can map it);
        ``peer``: (pid, fd) of another process's shared channels to map instead."""
        self.count = count
        self.size = size
        self.attached = peer is not None
        if peer is not None:
            self.fd = open_peer(*peer, "DRAM")
        elif share:
            self.fd = memfd(count * size, "dram")
            if self.fd < 0:
                raise DeviceError("shared DRAM needs memfd_create (Linux)")
        else:
            self.fd = -1
        self._maps: list[mmap.mmap | None] = [None] * count
        self._views: list[np.ndarray | None] = [None] * count
        # Disjoint, sorted [lo, hi) ranges of every channel that buffers cover (cover()).
        self._covered: list[tuple[int, int]] = []

    def channel(self, index: int) -> np.ndarray:
        """Channel ``index`` as a uint8 view (mapped on first use)."""
        view = self._views[index]
        if view is None:
            try:
                if self.fd >= 0:  # shared: channel ``index`` of the one memfd
                    m = mmap.mmap(
                        self.fd, self.size, flags=mmap.MAP_SHARED, offset=index * self.size
                    )
                else:
                    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE
                    m = mmap.mmap(-1, self.size, flags=flags)
            except OSError as exc:  # pragma: no cover - host limits
                raise DeviceError(
                    f"cannot map DRAM channel {index} ({self.size} B): {exc}"
                ) from exc
            self._maps[index] = m
            view = self._views[index] = np.frombuffer(m, dtype=np.uint8)
            for lo, hi in self._covered:
                _back_with_huge_pages(m, lo, hi)
        return view

    def cover(self, lo: int, hi: int) -> None:
        """``[lo, hi)`` of every channel is allocated to buffers (the allocator's run around
        a new buffer): its whole 2 MiB pages become huge pages, now in the mapped channels
        and when the others are mapped.  Contents are unchanged; only speed differs."""
        runs = self._covered
        merged_lo, merged_hi = lo, hi
        kept = []
        for a, b in runs:
            if b < lo or a > hi:
                kept.append((a, b))
            else:
                merged_lo, merged_hi = min(merged_lo, a), max(merged_hi, b)
        if (merged_lo, merged_hi) in runs:
            return  # nothing new is covered
        kept.append((merged_lo, merged_hi))
        kept.sort()
        self._covered = kept
        for m in self._maps:
            if m is not None:
                _back_with_huge_pages(m, merged_lo, merged_hi)

    def touched(self) -> int:
        return sum(1 for m in self._maps if m is not None)

    def close(self) -> None:
        for i, m in enumerate(self._maps):
            self._views[i] = None
            if m is not None:
                try:
                    m.close()
                except BufferError:  # views still alive: at least give the pages back
                    m.madvise(mmap.MADV_DONTNEED)
            self._maps[i] = None
        if self.fd >= 0:  # the memfd's pages go with its last descriptor and mapping
            os.close(self.fd)
            self.fd = -1


def _back_with_huge_pages(m: mmap.mmap, lo: int, hi: int) -> None:
    """Make the whole 2 MiB pages of ``[lo, hi)`` of mapping ``m`` huge pages: eligible
    (``MADV_HUGEPAGE``) and, where 4 KiB pages were already written, collapsed now
    (``MADV_COLLAPSE``) rather than whenever ``khugepaged`` gets to them.  A hint: where
    the kernel has no transparent huge pages the mapping keeps 4 KiB pages, same bytes."""
    pages = whole_huge_pages(host_address_of(m), lo, hi)
    if pages is None:
        return
    start, end = pages
    for advice in (getattr(mmap, "MADV_HUGEPAGE", None), _MADV_COLLAPSE):
        if advice is None:  # not Linux
            return
        try:
            m.madvise(advice, start, end - start)
        except OSError:  # EINVAL: no THP (or no MADV_COLLAPSE) in this kernel
            return


def whole_huge_pages(base: int, lo: int, hi: int) -> tuple[int, int] | None:
    """The offsets ``[start, end)`` inside ``[lo, hi)`` of a mapping at host address ``base``
    that are whole 2 MiB pages (aligned in the process's address space), or None."""
    start = -(-(base + lo) // _HUGE_PAGE) * _HUGE_PAGE - base
    end = (base + hi) // _HUGE_PAGE * _HUGE_PAGE - base
    return (start, end) if end > start else None
