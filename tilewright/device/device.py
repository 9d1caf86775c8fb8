"""Chips and their Tensix cores, built from a system descriptor.

``Device`` is one chip: a worker grid (the descriptor's ``grid_size``), every
worker's L1 as real bytes (one shared-memory object per chip), DRAM channels as sparse byte stores, the
allocators (DRAM bottom-up; L1 top-down above the program circular buffers; an
L1_SMALL region at the top of L1), the engine and a command queue.  ``Mesh`` holds
the chips of a multi-chip descriptor.

Per-core L1 map (local addresses)::

    0 ............ config_base      firmware (unused here)
    config_base .. l1_unreserved    kernel config: semaphores, runtime args per slot
    l1_unreserved  ......... ->     program circular buffers grow up
             <- .......... l1_end   L1 buffers allocated top-down
    l1_end ....... l1_size          L1_SMALL (l1_small_size bytes)
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tilewright.device.allocator import FreeListAllocator
from tilewright.device.blas import use_one_blas_thread
from tilewright.device.coords import CoreCoord
from tilewright.device.engine import Engine, EngineOptions, SharedQueue
from tilewright.device.kernel_config import (
    DEFAULT_L1_SMALL_SIZE,
    MAX_RUNTIME_ARGS,
    NUM_SEMAPHORES,
    RTA_BYTES,
    kernel_config_bytes,
)
from tilewright.device.memory import DramChannels, L1Arena, SharedMemoryRef
from tilewright.device.perf.noc import NocModel
from tilewright.device.requirements import check_runnable
from tilewright.device.shared import DeviceShared
from tilewright.errors import DeviceError
from tilewright.target import SystemDesc, SystemDescRoot, board_preset, capacity_table, kernel_slots

if TYPE_CHECKING:
    from tilewright.device.offload import RemoteChip

__all__ = [
    "SHARE_MEMORY",
    "Core",
    "Device",
    "Mesh",
    "NUM_SEMAPHORES",
    "MAX_RUNTIME_ARGS",
    "DEFAULT_L1_SMALL_SIZE",
]


SHARE_MEMORY = {"default": False}
"""Whether new devices keep their DRAM in shared memory (a memfd another process can map):
``tilewright.distributed`` turns it on while worker processes run launches."""


class Core:
    """One Tensix worker core: its L1 and its per-launch runtime state."""

    __slots__ = (
        "device",
        "logical",
        "index",
        "noc_x",
        "noc_y",
        "l1",
        "host_base",
        "cbs",
        "state",
        "cb_top",
    )

    def __init__(self, device: Device, logical: CoreCoord, index: int, noc_x: int, noc_y: int):
        self.device = device
        self.logical = logical
        self.index = index
        self.noc_x = noc_x
        self.noc_y = noc_y
        self.l1 = device.l1.slot(index)
        # Native code sees local L1 address a at pointer a (the identity window, see
        # memory.py): the pointer of local address 0 is 0.
        self.host_base = 0
        self.cbs: list = [None] * device.num_cbs
        # NoC coordinates and the L1 words kernels wait on (semaphores), shared with
        # native code; any write into a watched word wakes its waiters.
        self.state = device.shared.core_state(index)
        self.state.noc_x, self.state.noc_y = noc_x, noc_y
        self.state.logical_x, self.state.logical_y = logical.x, logical.y
        self.cb_top = device.l1_unreserved_base

    def l1_words(self, addr: int, count: int = 1) -> np.ndarray:
        """A uint32 view of ``count`` words at local address ``addr``."""
        return self.l1[addr : addr + 4 * count].view(np.uint32)

    def atomic_add(self, addr: int, incr: int) -> None:
        """Add ``incr`` to the 32-bit word at ``addr`` (wrapping) and wake its watchers: a
        semaphore increment landing, from the NoC or the fabric."""
        word = self.l1_words(addr)
        word[0] = (int(word[0]) + incr) & 0xFFFFFFFF
        self.notify_write(addr, addr + 4)

    def watch(self, addr: int) -> SharedQueue:
        """The wait list of the L1 word at ``addr`` (a semaphore wait)."""
        return SharedQueue(self.device.shared.watch(self.index, addr))

    def notify_write(self, start: int, end: int) -> None:
        """Wake kernels watching any word in ``[start, end)`` (called after every write)."""
        state = self.state
        left = state.n_watch
        if left:
            for entry in state.watch:  # up to the last active entry (they fill from the front)
                if entry.active:
                    if start <= entry.addr < end:
                        entry.active = 0
                        state.n_watch -= 1
                        SharedQueue(entry.waiters).wake()
                    left -= 1
                    if not left:
                        break

    def describe_wait(self, detail) -> str:
        return str(detail)

    def __repr__(self) -> str:
        return f"<Core {self.logical} noc=({self.noc_x}, {self.noc_y})>"


@dataclass(frozen=True, slots=True)
class ConfigLayout:
    """Where the kernel-config words live in every core's reserved L1 region."""

    base: int
    sem_base: int
    rta_base: int
    slot_bytes: int


class Device:
    """One virtual chip built from a system descriptor."""

    def __init__(
        self,
        system_desc=None,
        *,
        chip: int = 0,
        device_id: int = 0,
        l1_small_size: int = DEFAULT_L1_SMALL_SIZE,
        options: EngineOptions | None = None,
        share_memory: bool | None = None,
        peer: SharedMemoryRef | None = None,
    ) -> None:
        """``share_memory``: DRAM in a memfd too (default: ``SHARE_MEMORY``), so worker
        processes can map this chip's memory (:meth:`memory_ref`); ``peer``: map another
        process's device memory instead of making new (a worker's replica of a chip)."""
        use_one_blas_thread()  # block math: one BLAS thread per process (device/blas.py)

        if system_desc is None:
            system_desc = board_preset("n150").system_desc
        if isinstance(system_desc, SystemDescRoot):
            system_desc = system_desc.system_desc
        if not isinstance(system_desc, SystemDesc):
            raise DeviceError(
                "a device is built from a tilewright.target.SystemDesc (or SystemDescRoot), "
                f"not {type(system_desc).__name__}"
            )
        # The one validation every descriptor gets before it becomes memory and cores
        # (what `tilewright sysdesc check` runs): tt-mlir's rules, physical limits, and
        # what this device needs; the first broken rule raises a SystemDescError.
        check_runnable(system_desc, chip_ids=(chip,))
        self.system_desc = system_desc
        self.chip = chip
        self.device_id = device_id
        self.chip_desc = system_desc.get_chip_desc(chip)
        cd = self.chip_desc
        self.capacity = capacity_table(system_desc, chip)
        self.arch_kind = cd.arch
        self.grid_x = cd.grid_size.x
        self.grid_y = cd.grid_size.y
        self.l1_size = cd.l1_size
        self.l1_unreserved_base = cd.l1_unreserved_base
        self.l1_alignment = cd.noc_l1_address_align_bytes
        self.dram_alignment = cd.noc_dram_address_align_bytes
        self.num_cbs = cd.num_cbs
        ks = kernel_slots(self.capacity)
        # Processor slot names per kernel kind, from the target (one source of truth).
        self.slots = {"compute": tuple(ks.compute), "data_movement": tuple(ks.data_movement)}
        if not 0 <= l1_small_size < cd.l1_size - cd.l1_unreserved_base:
            raise DeviceError(
                f"l1_small_size {l1_small_size} B does not fit in the "
                f"{cd.l1_size - cd.l1_unreserved_base} B of unreserved L1"
            )
        self.l1_small_size = l1_small_size
        self.config = self._config_layout()

        num_cores = self.grid_x * self.grid_y
        if share_memory is None:
            share_memory = SHARE_MEMORY["default"]
        self.l1 = L1Arena(num_cores, cd.l1_size, None if peer is None else (peer.pid, peer.l1_fd))
        self.shared = DeviceShared(num_cores, cd.num_cbs)
        self.dram = DramChannels(
            cd.num_dram_channels,
            cd.dram_channel_size,
            share=share_memory,
            peer=None if peer is None else (peer.pid, peer.dram_fd),
        )
        off_y, off_x = cd.coord_translation_offsets.y, cd.coord_translation_offsets.x
        self.cores: list[Core] = []
        self._by_logical: dict[tuple[int, int], Core] = {}
        self._by_noc: dict[tuple[int, int], Core] = {}
        for y in range(self.grid_y):
            for x in range(self.grid_x):
                core = Core(self, CoreCoord(x, y), len(self.cores), x + off_x, y + off_y)
                self.cores.append(core)
                self._by_logical[(x, y)] = core
                self._by_noc[(core.noc_x, core.noc_y)] = core
        # DRAM banks sit on a NoC row no worker uses.
        max_y = off_y + self.grid_y - 1
        self._dram_noc_y = 0 if off_y > 0 else max_y + 1
        self._dram_by_noc = {(b, self._dram_noc_y): b for b in range(cd.num_dram_channels)}
        if any(k in self._by_noc for k in self._dram_by_noc):  # pragma: no cover - defensive
            raise DeviceError("DRAM NoC coordinates collide with worker coordinates")

        self.dram_allocator = FreeListAllocator(
            "DRAM", cd.dram_unreserved_base, cd.dram_unreserved_end, self.dram_alignment
        )
        # tt-metal's L1 banks allocate at the DRAM alignment (reference §3.1), so an L1
        # buffer can be the target of a DRAM read of its first bytes.
        buffer_align = max(self.l1_alignment, self.dram_alignment)
        self.l1_allocator = FreeListAllocator(
            "L1", cd.l1_unreserved_base, cd.l1_size - l1_small_size, buffer_align
        )
        self.l1_small_allocator = FreeListAllocator(
            "L1_SMALL", cd.l1_size - l1_small_size, cd.l1_size, buffer_align
        )
        # Every allocated buffer (id -> Buffer) until it is deallocated: what ttnn's
        # memory reports (ttnn.reports.get_buffer_pages) list.
        self.buffers: dict[int, object] = {}
        self.engine = Engine(options, name=f"device {device_id}")
        # The device-time model's NoC / DRAM state, shared with native kernels.
        self.perf = NocModel(self)
        self.perf.state.dry_run = int(self.engine.options.dry_run)
        self.shared.info.perf = ctypes.addressof(self.perf.state)
        self.closed = False
        # Set by a MeshDevice that owns this chip: the root mesh (fabric routing) and the
        # prefix that names the chip in places ("chip 3 node (0, 0)").
        self.mesh: object | None = None
        self.place_prefix = ""
        # id(program) -> the launch plan of that program here (device/launch.py: what a
        # warm launch of the same program reuses instead of setting up every core again).
        self.launch_plans: dict[int, object] = {}
        # deferred: the one allowed cycle (tests/test_layers.py) -- the queue launches
        # programs on this device's cores, and command_queue imports device for them.
        from tilewright.device.command_queue import CommandQueue

        self.command_queue = CommandQueue(self)
        # Set by tilewright.distributed for a chip whose launches a worker process runs.
        self.remote: RemoteChip | None = None

    # -- layout ------------------------------------------------------------------------------

    def _config_layout(self) -> ConfigLayout:
        n_slots = sum(len(v) for v in self.slots.values())
        size = kernel_config_bytes(n_slots)
        base = (self.l1_unreserved_base - size) // 16 * 16
        if base < 0:  # pragma: no cover - check_runnable (rule 27) rejects it first
            raise DeviceError(
                f"l1_unreserved_base {self.l1_unreserved_base} B leaves no room for the "
                f"{size} B kernel-config region (semaphores and runtime arguments)"
            )
        return ConfigLayout(base, base, base + NUM_SEMAPHORES * 16, RTA_BYTES)

    def semaphore_address(self, sem_id: int) -> int:
        if not 0 <= sem_id < NUM_SEMAPHORES:
            raise DeviceError(f"semaphore id {sem_id} out of range (0..{NUM_SEMAPHORES - 1})")
        return self.config.sem_base + 16 * sem_id

    def rta_address(self, slot: str) -> int:
        order = [s for kind in ("data_movement", "compute") for s in self.slots[kind]]
        return self.config.rta_base + order.index(slot) * self.config.slot_bytes

    # -- lookup ------------------------------------------------------------------------------

    def compute_with_storage_grid_size(self) -> CoreCoord:
        return CoreCoord(self.grid_x, self.grid_y)

    def arch(self):
        """The chip architecture (``tilewright.target.Arch``)."""
        return self.arch_kind

    def id(self) -> int:
        return self.device_id

    def core(self, x: int | Iterable[int], y: int | None = None) -> Core:
        """The worker core at logical (x, y); ``core(coord)`` takes one (x, y) pair."""
        if y is None:
            if isinstance(x, int):
                raise TypeError(f"core({x}): give both coordinates, or one (x, y) pair")
            x, y = x
        elif isinstance(x, Iterable):
            raise TypeError(f"core({x}, {y}): give both coordinates, or one (x, y) pair")
        try:
            return self._by_logical[(x, y)]
        except KeyError:
            raise DeviceError(
                f"core ({x}, {y}) is outside the {self.grid_x}x{self.grid_y} worker grid"
            ) from None

    def core_at_noc(self, x: int, y: int) -> Core | None:
        return self._by_noc.get((x, y))

    def dram_bank_at_noc(self, x: int, y: int) -> int | None:
        return self._dram_by_noc.get((x, y))

    def dram_noc_coord(self, bank: int) -> tuple[int, int]:
        return bank, self._dram_noc_y

    def worker_core_from_logical_core(self, coord: CoreCoord) -> CoreCoord:
        core = self.core(coord.x, coord.y)
        return CoreCoord(core.noc_x, core.noc_y)

    @property
    def num_dram_channels(self) -> int:
        return self.dram.count

    @property
    def num_l1_banks(self) -> int:
        return len(self.cores)

    @property
    def l1_buffer_end(self) -> int:
        """The top of the L1 region circular buffers and L1 buffers share (L1_SMALL above)."""
        return self.l1_size - self.l1_small_size

    def memory_ref(self) -> SharedMemoryRef | None:
        """How another process maps this chip's L1 and DRAM (None: DRAM is private)."""
        if self.dram.fd < 0 or self.l1.fd < 0:
            return None
        return SharedMemoryRef(os.getpid(), self.l1.fd, self.dram.fd)

    def resolve_local(self, core: Core, addr: int) -> int:
        """Check a local L1 address (native pointers are local addresses too)."""
        if 0 <= addr < self.l1_size:
            return addr
        raise DeviceError(
            f"address {addr:#x} is not an L1 address of core {core.logical} "
            f"(L1 is {self.l1_size} B)"
        )

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.launch_plans.clear()
        self.dram.close()
        self.l1.close()

    def __repr__(self) -> str:
        return f"<Device {self.device_id} {self.arch_kind.name} {self.grid_x}x{self.grid_y}>"


class Mesh:
    """All chips of a system descriptor (chip positions 0..n-1)."""

    def __init__(self, system_desc, **kwargs) -> None:
        n = len(system_desc.chip_desc_indices)
        self.devices = [Device(system_desc, chip=i, device_id=i, **kwargs) for i in range(n)]

    def close(self) -> None:
        for d in self.devices:
            d.close()
