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
packet-header bookkeeping.  Writes are synchronous (the bytes land at issue, the
strongest legal ordering); the sender's clock advances by the modelled cost of the
route -- per-hop latency plus the payload at Ethernet bandwidth -- so a kernel woken by
a fabric semaphore increment resumes at the packet's arrival time.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

from tilewright.device.engine import ACTIVE, current_run
from tilewright.device.noc import LOCAL_MASK, chip_tag, chips_with_tag, noc_chip_tag
from tilewright.device.perf.arch import WORMHOLE_B0, ArchPerf
from tilewright.device.transfer import noc_copy, resolve
from tilewright.errors import NocError

if TYPE_CHECKING:
    from tilewright.device.device import Device

__all__ = [
    "FabricConfig",
    "Topology",
    "FabricError",
    "Fabric",
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


def fabric_unicast_noc_unicast_write(
    dst_device_id: int, src_addr: int, size: int, noc_addr: int
) -> None:
    """Write ``size`` bytes of this core's L1 at ``src_addr`` to ``noc_addr`` on another chip."""
    what = "fabric_unicast_noc_unicast_write"
    run, device, mesh = _sender(what)
    dst, hops = _destination(mesh, device, dst_device_id, what)
    local = device.resolve_local(run.core, src_addr)
    if size <= 0 or local + size > device.l1_size:
        raise FabricError(
            f"{what}: source [{local:#x}, {local + max(size, 0):#x}) is not inside the "
            f"{device.l1_size} B L1 of {run.core.logical} on chip {device.device_id}"
        )
    target = resolve(dst, _check_chip_tag(noc_addr, dst, what), size, what)
    noc_copy(dst, (run.core.l1, local, run.core), target, size, what)
    _charge(
        run,
        fabric_cycles(len(hops), size, device.perf.arch),
        "fabric write",
        {"to": f"chip {dst.device_id}", "hops": len(hops), "bytes": size},
    )


def _atomic_inc(mesh, device: Device, run, dst_device_id: int, noc_addr: int, incr: int, what):
    dst, hops = _destination(mesh, device, dst_device_id, what)
    _mem, local, owner = resolve(dst, _check_chip_tag(noc_addr, dst, what), 4, what)
    if isinstance(owner, int):
        raise FabricError(f"{what}: an atomic increment targets L1, not DRAM bank {owner}")
    if local % 4:
        raise FabricError(f"{what}: address {local:#x} is not word aligned")
    word = owner.l1_words(local)
    word[0] = (int(word[0]) + incr) & 0xFFFFFFFF
    return dst, hops, owner, local


def fabric_unicast_noc_unicast_atomic_inc(dst_device_id: int, noc_addr: int, incr: int = 1) -> None:
    """Atomically add ``incr`` to the L1 word at ``noc_addr`` on another chip (a semaphore)."""
    what = "fabric_unicast_noc_unicast_atomic_inc"
    run, device, mesh = _sender(what)
    dst, hops, owner, local = _atomic_inc(mesh, device, run, dst_device_id, noc_addr, incr, what)
    _charge(
        run,
        fabric_cycles(len(hops), 4, device.perf.arch),
        "fabric atomic inc",
        {"to": f"chip {dst.device_id}", "hops": len(hops)},
    )
    owner.notify_write(local, local + 4)  # waiters resume at the packet's arrival


def fabric_unicast_noc_fused_unicast_with_atomic_inc(
    dst_device_id: int, src_addr: int, size: int, noc_addr: int, sem_noc_addr: int, incr: int = 1
) -> None:
    """A write followed, in the same packet, by an increment of a semaphore on that chip."""
    fabric_unicast_noc_unicast_write(dst_device_id, src_addr, size, noc_addr)
    what = "fabric_unicast_noc_fused_unicast_with_atomic_inc"
    run, device, mesh = _sender(what)
    _dst, _hops, owner, local = _atomic_inc(
        mesh, device, run, dst_device_id, sem_noc_addr, incr, what
    )
    owner.notify_write(local, local + 4)
