"""Fabric packet payloads between worker processes, in shared memory.

A fabric write reads its payload at issue and lands at the next quiescent point of the
whole schedule (``device/fabric.py``).  In a split run the sender and the destination
are in different workers, so the payload waits in the sender's *staging arena*: a memfd
that the destination's worker maps through ``/proc/<pid>/fd/<n>`` (as the replicas map
the driver's device memory, ``device/memory.py``) and copies from when it lands the
packet.  Only the packet's few fields cross through Ray.

Two arenas per worker, by the parity of the *epoch* (the stretch of schedule between two
barriers): packets posted in epoch ``e`` sit in arena ``e % 2`` and land right after
barrier ``e``, before any destination runs a kernel again, so by barrier ``e + 1`` they
have all landed and epoch ``e + 2`` may write over them.  An arena grows as needed.
"""

from __future__ import annotations

import mmap
import os
from typing import NamedTuple

import numpy as np

from tilewright.device.memory import memfd, open_peer
from tilewright.errors import DeviceError

__all__ = ["Staged", "Staging", "PeerArenas"]

_PAGE = mmap.PAGESIZE
_FIRST_SIZE = 16 << 20


class Staged(NamedTuple):
    """Where a payload waits: process ``pid``'s arena descriptor ``fd``, at ``offset``."""

    pid: int
    fd: int
    offset: int


class _Arena:
    __slots__ = ("fd", "size", "map", "used")

    def __init__(self) -> None:
        self.size = _FIRST_SIZE
        self.fd = memfd(self.size, "fabric staging")
        if self.fd < 0:  # pragma: no cover - workers need Linux (/proc) anyway
            raise DeviceError("fabric staging between workers needs memfd_create (Linux)")
        self.map = mmap.mmap(self.fd, self.size)
        self.used = 0

    def put(self, view: np.ndarray) -> int:
        """Copy ``view`` (a contiguous run of the sender's L1) in; its offset."""
        n = view.nbytes
        at = self.used
        if at + n > self.size:
            size = max(2 * self.size, -(-(at + n) // _PAGE) * _PAGE)
            self.map.resize(size)  # the memfd grows with the mapping; readers map it again
            self.size = size
        self.map[at : at + n] = view.data
        self.used = -(-(at + n) // 64) * 64  # the next payload on a cache line
        return at


class Staging:
    """This worker's two staging arenas (module docstring)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.arenas = (_Arena(), _Arena())
        self.epoch = 0

    def begin(self, epoch: int) -> None:
        """A new epoch: its arena's payloads (two epochs old) have all landed."""
        self.epoch = epoch
        self.arenas[epoch % 2].used = 0

    def put(self, view: np.ndarray) -> Staged:
        arena = self.arenas[self.epoch % 2]
        return Staged(self.pid, arena.fd, arena.put(view))

    def close(self) -> None:
        for arena in self.arenas:
            arena.map.close()
            os.close(arena.fd)


class PeerArenas:
    """The staging arenas of every worker, mapped when first read (this worker's own
    too, through its own ``/proc`` entry: one code path)."""

    def __init__(self) -> None:
        self._maps: dict[tuple[int, int], tuple[int, mmap.mmap]] = {}

    def read(self, staged: Staged, size: int) -> memoryview:
        key = (staged.pid, staged.fd)
        end = staged.offset + size
        held = self._maps.get(key)
        if held is None or len(held[1]) < end:
            if held is not None:
                held[1].close()
                os.close(held[0])
            fd = open_peer(staged.pid, staged.fd, "fabric staging")
            held = self._maps[key] = (fd, mmap.mmap(fd, os.fstat(fd).st_size))
        return memoryview(held[1])[staged.offset : end]

    def close(self) -> None:
        for fd, m in self._maps.values():
            try:
                m.close()
            except BufferError:  # pragma: no cover - a view still exported
                continue
            os.close(fd)
        self._maps.clear()
