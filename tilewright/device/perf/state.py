"""The model's state shared by Python and native kernels (C layouts, one definition).

* :class:`PerfRun` -- per kernel run, inside ``RunState`` (``device/shared.py``): when the
  NoC command buffers take the next request, the latest completion of the run's
  outstanding reads and writes (what a barrier waits for), whether its last multicast was
  linked, the compute pipeline's three stage clocks (TRISC0 unpack, TRISC1 math, TRISC2
  pack) and the DST half-buffer hand-offs, and where the run's time went (the bound).
* :class:`NocPerf` -- per device, pointed to by ``DeviceInfo.perf``: the architecture's NoC
  and DRAM numbers (copied from :mod:`.arch`, so native code reads the same ones), the
  floorplan, and the occupancy calendar every transfer reserves (links, NIUs, DRAM banks,
  DRAM requester ports) -- Python and native kernels contend on the same NoC.

The calendar splits time into buckets of ``1 << BUCKET_SHIFT`` cycles; each resource
keeps ``BUCKETS`` of them in a ring, each with the cycles already taken and a tag (the
launch's epoch and the bucket's index: a new launch starts empty without clearing).  A
transfer at time t takes free cycles of the buckets from t on, so kernels that the
scheduler runs out of time order (one runs ahead until it blocks) still share a link by
time, not by turn -- within the ring's window (64 K cycles); older buckets are reused.
"""

from __future__ import annotations

import ctypes

__all__ = [
    "PerfRun",
    "NocPerf",
    "BUCKET_SHIFT",
    "BUCKETS",
    "EPOCH_SHIFT",
    "DRY_RUN_KEPT",
    "NO_BANK",
    "Resource",
]

BUCKET_SHIFT = 8
"""Calendar buckets of 256 cycles."""
BUCKETS = 256
"""Buckets per resource: a 65536-cycle window; older buckets are reused (forgotten)."""
EPOCH_SHIFT = 40
"""A bucket's tag: the launch's epoch above bit 40, the bucket index + 1 below."""
NO_BANK = -1
DRY_RUN_KEPT = 16
"""A dry run still moves transfers of at most this many bytes: semaphores and flags set by
NoC writes (``noc_semaphore_set_remote`` / ``_multicast``) are protocol, not payload."""


class PerfRun(ctypes.Structure):
    """One kernel run's model state (zeroed at each launch with the run table)."""

    _fields_ = [
        ("noc_ready", ctypes.c_uint64 * 2),  # the NoC command buffer is free again, per NoC
        ("read_done", ctypes.c_uint64 * 2),  # latest completion of issued reads, per NoC
        ("write_done", ctypes.c_uint64 * 2),  # ... of issued non-posted writes / atomics
        ("read_dram", ctypes.c_int32 * 2),  # 1 if that latest read came from DRAM
        ("write_dram", ctypes.c_int32 * 2),
        ("mcast_linked", ctypes.c_int32 * 2),  # the last multicast on this NoC was linked
        ("compute", ctypes.c_int32),  # 1: a compute kernel (the three-stage pipeline is used)
        ("dst_next", ctypes.c_int32),  # the DST half the next acquire takes
        ("dst_rel", ctypes.c_int32),  # the DST half the next release frees
        ("pad", ctypes.c_int32),
        ("unpack", ctypes.c_uint64),  # TRISC0 clock
        ("math", ctypes.c_uint64),  # TRISC1 clock
        ("pack", ctypes.c_uint64),  # TRISC2 clock
        ("dst_commit", ctypes.c_uint64),  # when MATH committed the half PACK works on
        ("committed", ctypes.c_int32),  # a commit is pending for PACK
        ("fidelity", ctypes.c_int32),  # math fidelity phases (1..4)
        ("fp32_acc", ctypes.c_int32),
        ("full_sync", ctypes.c_int32),
        ("unpack_rate", ctypes.c_int32),  # the architecture's unpack / pack bytes per cycle
        ("pair_rate", ctypes.c_int32),
        ("pack_rate", ctypes.c_int32),
        ("pad2", ctypes.c_int32),
        ("dst_free", ctypes.c_uint64 * 2),  # when PACK released each DST half
        ("busy_noc", ctypes.c_uint64),  # cycles spent issuing and waiting on the NoC (L1)
        ("busy_dram", ctypes.c_uint64),  # ... waiting on transfers that touched DRAM
        ("busy_unpack", ctypes.c_uint64),
        ("busy_math", ctypes.c_uint64),
        ("busy_pack", ctypes.c_uint64),
        ("wait_front", ctypes.c_uint64),  # a compute run's CB waits for input (TRISC0)
        ("wait_reserve", ctypes.c_uint64),  # ... for output space (TRISC2)
    ]


class NocPerf(ctypes.Structure):
    """One device's NoC model: numbers, floorplan and the occupancy calendar."""

    _fields_ = [
        ("size_x", ctypes.c_int32),
        ("size_y", ctypes.c_int32),
        ("flit_bytes", ctypes.c_int32),
        ("max_packet", ctypes.c_int32),
        ("issue_write", ctypes.c_int32),
        ("issue_read", ctypes.c_int32),
        ("hop", ctypes.c_int32),
        ("base_write", ctypes.c_int32),
        ("base_read", ctypes.c_int32),
        ("write_bytes", ctypes.c_int32),  # write_rate = write_bytes per write_cycles
        ("write_cycles", ctypes.c_int32),
        ("read_bytes", ctypes.c_int32),
        ("read_cycles", ctypes.c_int32),
        ("mcast_setup", ctypes.c_int32),
        ("mcast_setup_per_span", ctypes.c_int32),
        ("dram_latency", ctypes.c_int32),
        ("dram_bank_bytes", ctypes.c_int32),
        ("dram_bank_cycles", ctypes.c_int32),
        ("dram_core_bytes", ctypes.c_int32),
        ("dram_core_cycles", ctypes.c_int32),
        ("unpack_bytes", ctypes.c_int32),
        ("unpack_pair_bytes", ctypes.c_int32),
        ("pack_bytes", ctypes.c_int32),
        ("num_workers", ctypes.c_int32),
        ("num_dram", ctypes.c_int32),
        ("num_resources", ctypes.c_int32),
        ("dry_run", ctypes.c_int32),  # skip the numeric payload (tilewright run --dry-run)
        ("read_ahead", ctypes.c_int32),  # cycles a RISC's reads may run ahead of their data
        ("epoch", ctypes.c_uint32),  # the launch: tags of older launches are stale
        ("worker_xy", ctypes.c_void_p),  # int32[num_workers][2]
        ("dram_xy", ctypes.c_void_p),  # int32[num_dram][2]
        ("tags", ctypes.c_void_p),  # uint64[num_resources * BUCKETS]: epoch | bucket index + 1
        ("used", ctypes.c_void_p),  # uint32[num_resources * BUCKETS]: cycles taken
    ]


class Resource:
    """Index ranges of the calendar's resources (the same arithmetic in perf.cpp)."""

    @staticmethod
    def link(p: NocPerf, noc: int, x: int, y: int, direction: int) -> int:
        """The link leaving router (x, y) along x (0) or y (1) on NoC ``noc``."""
        return ((noc * p.size_y + y) * p.size_x + x) * 2 + direction

    @staticmethod
    def niu(p: NocPerf, noc: int, x: int, y: int, eject: int) -> int:
        """The NIU of node (x, y) on NoC ``noc``: injection (0) or ejection (1)."""
        return 4 * p.size_x * p.size_y + ((noc * p.size_y + y) * p.size_x + x) * 2 + eject

    @staticmethod
    def dram_bank(p: NocPerf, bank: int) -> int:
        return 8 * p.size_x * p.size_y + bank

    @staticmethod
    def dram_port(p: NocPerf, x: int, y: int) -> int:
        """What one requester at (x, y) can take from DRAM."""
        return 8 * p.size_x * p.size_y + p.num_dram + y * p.size_x + x

    @staticmethod
    def count(size_x: int, size_y: int, num_dram: int) -> int:
        return 9 * size_x * size_y + num_dram
