"""Device memory as real bytes: every core's L1 and every DRAM channel.

L1
    All worker cores' L1s live in one anonymous mapping in the low 2 GiB of the
    process (``MAP_32BIT`` on x86-64), one *slot* per core.  A core's local L1
    address ``a`` is the byte ``slot_base + a``; because ``slot_base + a < 2**31``,
    native code (external C++) can treat the 32-bit value ``slot_base + a`` as a
    pointer, exactly as kernels treat L1 addresses on hardware.  Python sees each
    slot as a ``numpy.uint8`` view.

DRAM
    One anonymous ``MAP_NORESERVE`` mapping per channel (bank), created on first
    touch.  Untouched pages cost nothing, so a 12 GiB Wormhole DRAM (or 32 GiB on
    Blackhole) is free until a buffer is written.
"""

from __future__ import annotations

import ctypes
import gc
import mmap
import platform

import numpy as np

from tilewright.errors import DeviceError

__all__ = ["L1Arena", "DramChannels", "host_address_of"]

# Closed L1 arenas by size, ready for the next device: the low 2 GiB are a scarce
# address range, and numpy views that outlive a device would keep its mapping alive,
# so arenas are recycled (their pages dropped) instead of unmapped.
_ARENA_POOL: dict[int, list[mmap.mmap]] = {}

_MAP_32BIT = 0x40  # linux/mman.h, x86-64 only
_MAP_NORESERVE = 0x4000
_SLOT_ALIGN = 1 << 16
_LOW_LIMIT = 1 << 31


def host_address_of(buf: mmap.mmap) -> int:
    """Process address of the first byte of a mapping."""
    return ctypes.addressof(ctypes.c_char.from_buffer(buf))


def _drain_pool() -> bool:
    """Unmap pooled arenas no view holds any more; True if any address range came back.

    Closed devices are often still in reference cycles (cores point at their device)
    whose numpy views pin their arena: collect them first (this runs only when the low
    2 GiB are full).
    """
    gc.collect()
    freed = False
    for size, maps in list(_ARENA_POOL.items()):
        kept = []
        for m in maps:
            try:
                m.close()
                freed = True
            except BufferError:  # a numpy view of a closed device still exists
                kept.append(m)
        _ARENA_POOL[size] = kept
    return freed


def _map_low(size: int) -> mmap.mmap:
    """An anonymous mapping that lies entirely below 2 GiB."""
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE
    if platform.machine() in ("x86_64", "AMD64"):
        flags |= _MAP_32BIT
    try:
        m = mmap.mmap(-1, size, flags=flags)
    except OSError as exc:
        # The low 2 GiB are full of recycled arenas of other sizes (devices built from
        # many different descriptors): give back the free ones and try once more.
        if not _drain_pool():
            raise DeviceError(f"cannot map {size} B of L1 below 2 GiB: {exc}") from exc
        try:
            m = mmap.mmap(-1, size, flags=flags)
        except OSError as again:  # pragma: no cover - depends on the host's address space
            raise DeviceError(f"cannot map {size} B of L1 below 2 GiB: {again}") from again
    base = host_address_of(m)
    if base + size > _LOW_LIMIT:
        # Not x86-64, or the kernel ignored MAP_32BIT: L1 pointers would not fit in
        # 32 bits.  Python kernels still work; native code must not cast addresses.
        m.close()
        raise DeviceError(
            f"L1 arena of {size} B landed at {base:#x}, above 2 GiB; "
            "native kernels need MAP_32BIT (x86-64 Linux)"
        )
    return m


class L1Arena:
    """The L1 memories of ``num_cores`` cores, ``l1_size`` bytes each, below 2 GiB."""

    __slots__ = ("l1_size", "slot_size", "num_cores", "_map", "base", "view")

    def __init__(self, num_cores: int, l1_size: int) -> None:
        self.l1_size = l1_size
        self.slot_size = -(-l1_size // _SLOT_ALIGN) * _SLOT_ALIGN
        self.num_cores = num_cores
        total = self.slot_size * num_cores
        if total >= _LOW_LIMIT:
            raise DeviceError(
                f"{num_cores} cores x {self.slot_size} B of L1 do not fit in the low 2 GiB"
            )
        pooled = _ARENA_POOL.get(total)
        m = pooled.pop() if pooled else _map_low(total)
        self._map: mmap.mmap | None = m  # None once closed
        self.base = host_address_of(m)
        self.view = np.frombuffer(m, dtype=np.uint8)

    def slot(self, index: int) -> np.ndarray:
        """The L1 of core ``index`` as a uint8 view of length ``l1_size``."""
        start = index * self.slot_size
        return self.view[start : start + self.l1_size]

    def host_base(self, index: int) -> int:
        """Process address of local L1 address 0 of core ``index``."""
        return self.base + index * self.slot_size

    def owner_of_host_address(self, addr: int) -> tuple[int, int] | None:
        """(core index, local address) for a process address inside the arena."""
        off = addr - self.base
        if 0 <= off < self.slot_size * self.num_cores:
            index, local = divmod(off, self.slot_size)
            return index, local
        return None

    def close(self) -> None:
        """Drop the contents (pages go back to the OS, reads give zeros) and recycle the range."""
        self.view = np.empty(0, dtype=np.uint8)
        m, self._map = self._map, None
        if m is None:
            return
        m.madvise(mmap.MADV_DONTNEED)
        _ARENA_POOL.setdefault(len(m), []).append(m)


class DramChannels:
    """``count`` DRAM channels (banks) of ``size`` bytes, mapped lazily."""

    __slots__ = ("count", "size", "_maps", "_views")

    def __init__(self, count: int, size: int) -> None:
        self.count = count
        self.size = size
        self._maps: list[mmap.mmap | None] = [None] * count
        self._views: list[np.ndarray | None] = [None] * count

    def channel(self, index: int) -> np.ndarray:
        """Channel ``index`` as a uint8 view (mapped on first use)."""
        view = self._views[index]
        if view is None:
            flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE
            try:
                m = mmap.mmap(-1, self.size, flags=flags)
            except OSError as exc:  # pragma: no cover - host limits
                raise DeviceError(
                    f"cannot map DRAM channel {index} ({self.size} B): {exc}"
                ) from exc
            self._maps[index] = m
            view = self._views[index] = np.frombuffer(m, dtype=np.uint8)
        return view

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
