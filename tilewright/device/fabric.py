"""TT-Fabric on the virtual mesh: configurations, routing over Ethernet links, kernel API.

A NoC transaction never leaves its chip.  Kernels reach another chip through the
fabric: a packet enters at the sending chip, travels over Ethernet links from chip to
chip (one *hop* per link) and is written into the destination chip's memory by that
chip's NoC.  ``ttnn.set_fabric_config`` chooses the routing before a mesh device opens
(tt-metal ``FabricConfig``):

* ``DISABLED``: no cross-chip traffic; a fabric call is an error naming both chips;
* ``FABRIC_1D``: packets travel along one row or one column of the mesh, never turning;
* ``FABRIC_1D_RING``: as 1D, and a line whose ends are linked is a ring (the shorter
  way round is taken);
* ``FABRIC_2D``: packets travel along the row first, then along the column.

Every hop must be an Ethernet link of the system descriptor (``chip_channels``); a
route over chips that are not linked is an error.  The kernel API
(:func:`fabric_unicast_noc_unicast_write`, :func:`fabric_unicast_noc_unicast_atomic_inc`,
:func:`fabric_unicast_noc_fused_unicast_with_atomic_inc`) names the destination chip by
its device id and the destination address as a NoC address on that chip, like tt-metal's
mesh fabric API (``tt_metal/fabric/hw/inc/mesh/api.h``) without the connection and
packet-header bookkeeping.

**When packets land.**  A fabric call checks its packet and reads its payload at issue;
the sender's clock advances by the modelled cost of the route (per-hop latency plus the
payload at Ethernet bandwidth), which makes the packet's *arrival time*.  The packet
lands -- its bytes written, its semaphore incremented, its waiters woken at the arrival
time -- when the schedule is next quiescent: no kernel of the launch can run (all wait or
finished) or only pollers are left.  The :class:`FabricMail` of the mesh's engine then
lands the pending packets in (arrival time, source chip, sequence number) order, one at
a time with the kernels each wakes running in between, and the schedule continues.  So what one chip's kernels do depends only on that chip and on
the batches of packets delivered to it, never on how the chips' kernels interleave --
which is what lets chips run in different processes with the same results, statistics
and errors (``distributed/``, docs/multi-device.md).  A kernel that waits for a packet
(a semaphore, as every tt-metal and TT-Lang program does) sees the same bytes as with
packets landing at issue; one that reads a destination without waiting may read it
before the packet lands.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from enum import IntEnum
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from tilewright.device.engine import ACTIVE, current_run
from tilewright.device.noc import LOCAL_MASK, chip_tag, chips_with_tag, noc_chip_tag
from tilewright.device.perf.arch import WORMHOLE_B0, ArchPerf
from tilewright.device.transfer import DRY_RUN_KEPT, alignment, check_aligned, resolve
from tilewright.errors import NocError

if TYPE_CHECKING:
    from tilewright.device.device import Device
    from tilewright.device.engine import Engine

__all__ = [
    "FabricConfig",
    "Topology",
    "FabricError",
    "Fabric",
    "FabricMail",
    "Packet",
    "landing_order",
    "ETH_HOP_LATENCY",
    "ETH_BYTES_PER_CYCLE",
    "fabric_cycles",
    "fabric_unicast_noc_unicast_write",
    "fabric_unicast_noc_unicast_atomic_inc",
    "fabric_unicast_noc_fused_unicast_with_atomic_inc",
    "fabric_hops",
]

ETH_HOP_LATENCY = WORMHOLE_B0.eth_hop
"""Wormhole's modelled cycles per Ethernet hop (``device/perf/arch.py``, per architecture)."""
ETH_BYTES_PER_CYCLE = WORMHOLE_B0.eth_rate[0] // WORMHOLE_B0.eth_rate[1]
"""Wormhole's payload bytes per cycle of one link (100 GbE, 12.5 GB/s at 1 GHz)."""


class FabricConfig(IntEnum):
    """``ttnn.FabricConfig`` (tt-metal ``tt_metal/api/tt-metalium/fabric_types.hpp``)."""

    DISABLED = 0
    FABRIC_1D = 1
    FABRIC_1D_RING = 2
    FABRIC_2D = 3
    FABRIC_2D_TORUS = 4
    FABRIC_2D_DYNAMIC = 5
    CUSTOM = 6


MODELLED_CONFIGS = frozenset(
    {
        FabricConfig.DISABLED,
        FabricConfig.FABRIC_1D,
        FabricConfig.FABRIC_1D_RING,
        FabricConfig.FABRIC_2D,
    }
)


class Topology(IntEnum):
    """``ttnn.Topology``: how a collective's chips are connected."""

    Ring = 0
    Linear = 1
    Mesh = 2
    Torus = 3


class FabricError(NocError):
    """Cross-chip traffic the fabric cannot carry (disabled, no route, no link)."""

    default_rule = "fabric"


def fabric_cycles(hops: int, size: int, arch: ArchPerf = WORMHOLE_B0) -> int:
    """Modelled cycles of a fabric packet of ``size`` payload bytes over ``hops`` links: the
    NoC write into the sending Ethernet core and out of the receiving one, each hop's
    latency, and the payload at one link's rate."""
    num, den = arch.eth_rate
    return 2 * arch.base_write + hops * arch.eth_hop + -(-size * den // num)


class Fabric:
    """The fabric of one mesh device: its configuration, chip coordinates and routes."""

    def __init__(self, config: FabricConfig, layout, system) -> None:
        self.config = FabricConfig(config)
        self.layout = layout
        self.system = system
        self.rows, self.cols = len(layout), len(layout[0])
        self.coords = {chip: (r, c) for r, row in enumerate(layout) for c, chip in enumerate(row)}
        self._routes: dict[tuple[int, int], tuple[int, ...]] = {}

    @property
    def enabled(self) -> bool:
        return self.config != FabricConfig.DISABLED

    def route(self, src: int, dst: int, what: str = "fabric") -> tuple[int, ...]:
        """The chips a packet from ``src`` to ``dst`` visits after ``src`` (ends with ``dst``).

        Raises:
            FabricError: the fabric is disabled, a chip is not part of the mesh, the
                configuration cannot route between the two chips, or a hop has no link.
        """
        key = (src, dst)
        hops = self._routes.get(key)
        if hops is None:
            hops = self._routes[key] = self._find_route(src, dst, what)
        return hops

    def _find_route(self, src: int, dst: int, what: str) -> tuple[int, ...]:
        pair = f"chip {src} to chip {dst}"
        if not self.enabled:
            raise FabricError(
                f"{what}: cross-chip access from chip {src} to chip {dst} needs the fabric, "
                "which is disabled",
                hint="call ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D) (or FABRIC_1D_RING, "
                "FABRIC_2D) before ttnn.open_mesh_device",
            )
        for chip in (src, dst):
            if chip not in self.coords:
                raise FabricError(f"{what}: {pair}: chip {chip} is not part of this mesh device")
        if src == dst:
            raise FabricError(
                f"{what}: chip {src} sends to itself; a fabric packet goes to another chip "
                "(write chip-local memory with noc_async_write)"
            )
        (r0, c0), (r1, c1) = self.coords[src], self.coords[dst]
        one_d = self.config in (FabricConfig.FABRIC_1D, FabricConfig.FABRIC_1D_RING)
        if one_d and r0 != r1 and c0 != c1:
            raise FabricError(
                f"{what}: {pair}: mesh coordinates ({r0}, {c0}) and ({r1}, {c1}) share no row "
                f"or column, and a {self.config.name} fabric routes along one row or column",
                hint="use ttnn.FabricConfig.FABRIC_2D, or send through an intermediate chip",
            )
        ring = self.config == FabricConfig.FABRIC_1D_RING
        cells = self._walk((r0, c0), (r0, c1), axis=1, ring=ring)
        cells += self._walk((r0, c1), (r1, c1), axis=0, ring=ring)
        chips = tuple(self.layout[r][c] for r, c in cells)
        prev = src
        for chip in chips:
            if not self.system.linked(prev, chip):
                raise FabricError(
                    f"{what}: {pair}: the route goes from chip {prev} to chip {chip}, which share "
                    "no Ethernet link in the system descriptor"
                )
            prev = chip
        return chips

    def _walk(self, start, end, *, axis: int, ring: bool) -> list[tuple[int, int]]:
        """Cells after ``start`` up to ``end`` along one axis (the shorter way on a ring)."""
        size = self.cols if axis == 1 else self.rows
        a, b = start[axis], end[axis]
        if a == b:
            return []
        step = 1 if b > a else -1
        if ring and size > 2:
            ends = [list(start), list(start)]
            ends[0][axis], ends[1][axis] = 0, size - 1
            first, last = (self.layout[r][c] for r, c in ends)
            if self.system.linked(first, last):
                forward = (b - a) % size
                step = 1 if forward <= size - forward else -1
        cells = []
        pos = a
        while pos != b:
            pos = (pos + step) % size
            cell = list(start)
            cell[axis] = pos
            cells.append((cell[0], cell[1]))
        return cells


# -- packets ------------------------------------------------------------------------------------


class Packet(NamedTuple):
    """One fabric packet between issue and landing: a write of ``size`` bytes of ``data``
    at ``local`` of ``owner``, an increment by ``incr`` of the word at ``sem_local`` of core
    ``sem_core``, or both (the fused form; the write lands first).  A plain tuple, so a
    split run's exchange pickles a few dozen of them in microseconds (``distributed/``)."""

    arrival: int
    src: int
    seq: int
    dst: int
    owner: int = 0  # where the write lands: a core index, or -1 - bank for DRAM
    local: int = 0
    size: int = 0
    data: object = None  # the payload as the mail stashed it (FabricMail.stash); None: not kept
    sem_core: int = -1  # the incremented word's core index (-1: no increment) and address
    sem_local: int = 0
    incr: int = 0

    def land(self, device: Device, payload: Callable[[object, int], object]) -> None:
        """Write the packet into ``device`` (its destination, where it was checked at
        issue) and wake the waiters; ``payload`` turns the stashed data into bytes."""
        size = self.size
        if size:
            local = self.local
            if self.owner >= 0:
                core = device.cores[self.owner]
                if self.data is not None:
                    core.l1[local : local + size] = payload(self.data, size)
                core.notify_write(local, local + size)
            elif self.data is not None:
                channel = device.dram.channel(-1 - self.owner)
                channel[local : local + size] = payload(self.data, size)
        if self.sem_core >= 0:
            device.cores[self.sem_core].atomic_add(self.sem_local, self.incr)


class FabricMail:
    """The fabric packets of one mesh's engine (``Engine.mail``): posted at issue, landed
    in order when the schedule is quiescent (module docstring).

    At a quiescent point the pending packets become the next *batch*, in landing order;
    the batch's packets land one at a time, each at a quiescent point of its own -- the
    kernels a packet wakes run (and wait again) before the next packet lands -- so a
    kernel waiting for two increments resumes when the second arrives.  Packets posted
    meanwhile wait for the next batch."""

    def __init__(self, chip: Callable[[int], Device]) -> None:
        self.chip = chip  # device id -> the chip a packet lands on
        self.pending: list[Packet] = []
        self.batch: deque[Packet] = deque()
        self.seq: dict[int, int] = {}
        self.rounds = 0
        """Batches landed (the exchanges between workers a split run needs)."""
        # Payloads are bump-allocated in one buffer per batch parity: the pending packets'
        # in one, the landing batch's in the other (a fresh array per packet cost page
        # faults: a third of a 1x32 all-gather's landing).
        self._arenas = [np.empty(0, np.uint8), np.empty(0, np.uint8)]
        self._used = 0
        self._parity = 0

    def next_seq(self, src: int) -> int:
        n = self.seq.get(src, 0)
        self.seq[src] = n + 1
        return n

    def stash(self, view: np.ndarray) -> object:
        """Keep a packet's payload (the sender's L1 bytes at issue) until it lands."""
        n = view.nbytes
        at = self._used
        arena = self._arenas[self._parity]
        if at + n > arena.size:  # a bigger one; stashed payloads keep the old one alive
            arena = self._arenas[self._parity] = np.empty(
                max(2 * arena.size, at + n, 1 << 20), np.uint8
            )
            at = 0
        kept = arena[at : at + n]
        np.copyto(kept, view.reshape(-1).view(np.uint8))
        self._used = at + -(-n // 64) * 64
        return kept

    def payload(self, data: object, size: int) -> object:
        """The ``size`` bytes of a payload :meth:`stash` kept."""
        return data

    def post(self, packet: Packet) -> None:
        self.pending.append(packet)

    def round(self, engine: Engine) -> bool:
        """Land the next packet (of this batch, or of a new one); False if there is none."""
        batch = self.batch
        if not batch:
            batch.extend(self.next_batch())
            if not batch:
                return False
            self.rounds += 1
        packet = batch.popleft()
        engine.at(packet.arrival, partial(packet.land, self.chip(packet.dst), self.payload))
        return True

    def next_batch(self) -> list[Packet]:
        """The packets of the next batch in landing order (none: the schedule ends)."""
        return self.take()

    def take(self) -> list[Packet]:
        """The pending packets, in landing order, and none pending after (their payloads
        stay put; the next ones go to the other arena, whose batch has landed)."""
        batch, self.pending = self.pending, []
        batch.sort(key=landing_order)
        self._parity ^= 1
        self._used = 0
        return batch

    def discard(self) -> None:
        self.pending = []
        self.batch.clear()


def landing_order(packet: Packet) -> tuple[int, int, int]:
    """Landing order: arrival time, then source chip, then the source's issue order."""
    return (packet.arrival, packet.src, packet.seq)


# -- kernel API ----------------------------------------------------------------------------------


def _sender(what: str):
    """(run, its device, the destination resolver) of a fabric call from the running kernel."""
    run = current_run()
    device = run.core.device
    mesh = device.mesh
    if mesh is None:
        raise FabricError(
            f"{what}: chip {device.device_id} was opened alone (ttnn.open_device); the fabric "
            "connects the chips of a mesh device",
            hint="open the chips with ttnn.open_mesh_device",
        )
    return run, device, mesh


def _destination(mesh, device: Device, dst_device_id: int, what: str):
    fabric: Fabric = mesh.fabric
    hops = fabric.route(device.device_id, int(dst_device_id), what)
    return mesh.device_by_id(int(dst_device_id)), hops


def _charge(run, cycles: int, name: str, args: dict) -> None:
    start = run.clock
    run.clock += cycles
    run.stats_ops += 1
    engine = ACTIVE.engine
    tracer = engine.tracer if engine is not None else None
    if tracer is not None:
        tracer.span(run, name, start, run.clock, args)


def _post(run, device: Device, dst: Device, **fields) -> None:
    """Post a packet from ``device`` to ``dst`` arriving at the sender's clock (charged)."""
    mail = run.engine.mail
    if mail is None:  # pragma: no cover - every mesh engine has its mail
        raise FabricError(f"the engine of chip {device.device_id} has no fabric")
    data = fields.get("data")
    if data is not None:
        fields["data"] = mail.stash(data)
    src = device.device_id
    mail.post(Packet(run.clock, src, mail.next_seq(src), dst.device_id, **fields))


def _check_chip_tag(noc_addr: int, dst: Device, what: str) -> int:
    """A destination NoC address may name its chip; it must be the destination."""
    tag = noc_chip_tag(noc_addr)
    if tag and tag != chip_tag(dst.chip):
        named = chips_with_tag(tag, len(dst.system_desc.chip_desc_indices))
        raise FabricError(
            f"{what}: NoC address {noc_addr:#x} names {named}, but the packet goes to "
            f"chip {dst.device_id}"
        )
    return noc_addr & ((0xFFF << 36) | LOCAL_MASK)


def fabric_hops(dst_device_id: int) -> int:
    """Ethernet hops from the running kernel's chip to ``dst_device_id`` under this fabric."""
    _run, device, mesh = _sender("fabric_hops")
    return len(mesh.fabric.route(device.device_id, int(dst_device_id), "fabric_hops"))


def _write(run, device: Device, dst: Device, src_addr: int, size: int, noc_addr: int, what: str):
    """Check a fabric write and read its payload (at issue): the packet's write fields."""
    local = device.resolve_local(run.core, src_addr)
    if size <= 0 or local + size > device.l1_size:
        raise FabricError(
            f"{what}: source [{local:#x}, {local + max(size, 0):#x}) is not inside the "
            f"{device.l1_size} B L1 of {run.core.logical} on chip {device.device_id}"
        )
    addr = _check_chip_tag(noc_addr, dst, what)
    _mem, dst_local, owner = resolve(dst, addr, size, what)
    check_aligned(local, dst_local, alignment(dst, run.core, owner), what)
    keep = size <= DRY_RUN_KEPT or not device.perf.state.dry_run
    data = run.core.l1[local : local + size] if keep else None  # stashed by the mail
    where = -1 - owner if isinstance(owner, int) else owner.index
    return {"owner": where, "local": dst_local, "size": size, "data": data}


def _semaphore(dst: Device, noc_addr: int, incr: int, what: str) -> dict:
    """Check a fabric increment's target (at issue): the packet's increment fields."""
    addr = _check_chip_tag(noc_addr, dst, what)
    _mem, local, owner = resolve(dst, addr, 4, what)
    if isinstance(owner, int):
        raise FabricError(f"{what}: an atomic increment targets L1, not DRAM bank {owner}")
    if local % 4:
        raise FabricError(f"{what}: address {local:#x} is not word aligned")
    return {"sem_core": owner.index, "sem_local": local, "incr": int(incr)}


def fabric_unicast_noc_unicast_write(
    dst_device_id: int, src_addr: int, size: int, noc_addr: int
) -> None:
    """Write ``size`` bytes of this core's L1 at ``src_addr`` to ``noc_addr`` on another chip."""
    what = "fabric_unicast_noc_unicast_write"
    run, device, mesh = _sender(what)
    dst, hops = _destination(mesh, device, dst_device_id, what)
    fields = _write(run, device, dst, src_addr, size, noc_addr, what)
    _send_write(run, device, dst, hops, fields)


def _send_write(run, device: Device, dst: Device, hops: tuple[int, ...], fields: dict) -> None:
    """Charge a write packet's route to its sender and post it."""
    size = fields["size"]
    _charge(
        run,
        fabric_cycles(len(hops), size, device.perf.arch),
        "fabric write",
        {"to": f"chip {dst.device_id}", "hops": len(hops), "bytes": size},
    )
    _post(run, device, dst, **fields)


def fabric_unicast_noc_unicast_atomic_inc(dst_device_id: int, noc_addr: int, incr: int = 1) -> None:
    """Atomically add ``incr`` to the L1 word at ``noc_addr`` on another chip (a semaphore)."""
    what = "fabric_unicast_noc_unicast_atomic_inc"
    run, device, mesh = _sender(what)
    dst, hops = _destination(mesh, device, dst_device_id, what)
    fields = _semaphore(dst, noc_addr, incr, what)
    _charge(
        run,
        fabric_cycles(len(hops), 4, device.perf.arch),
        "fabric atomic inc",
        {"to": f"chip {dst.device_id}", "hops": len(hops)},
    )
    _post(run, device, dst, **fields)


def fabric_unicast_noc_fused_unicast_with_atomic_inc(
    dst_device_id: int, src_addr: int, size: int, noc_addr: int, sem_noc_addr: int, incr: int = 1
) -> None:
    """A write followed, in the same packet, by an increment of a semaphore on that chip."""
    what = "fabric_unicast_noc_fused_unicast_with_atomic_inc"
    run, device, mesh = _sender(what)
    dst, hops = _destination(mesh, device, dst_device_id, what)
    fields = _write(run, device, dst, src_addr, size, noc_addr, what)
    fields.update(_semaphore(dst, sem_noc_addr, incr, what))
    _send_write(run, device, dst, hops, fields)
