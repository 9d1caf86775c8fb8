"""NoC transfers on real bytes: reads, writes, multicast, atomic increments.

The emulated NoC is synchronous: a transfer's bytes move when it is issued, the
strongest legal ordering (tt-metal digest §4.2, emulation notes), so barriers only
account time.  What the hardware's watcher would flag is a :class:`NocError`: a
target that is neither a worker nor a DRAM bank, an access outside L1 / the DRAM
channel, a zero-sized transfer, source and destination with different offsets
modulo the NoC alignment, a multicast whose ``num_dests`` does not match the cores
it reaches.  Every write into a core's L1 wakes kernels watching that range
(semaphore waits).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tilewright.device.noc import decode_multicast, decode_unicast, noc_chip
from tilewright.errors import NocError

if TYPE_CHECKING:
    from tilewright.device.device import Core, Device

__all__ = [
    "resolve",
    "noc_copy",
    "multicast_targets",
    "NOC_LATENCY",
    "NOC_BYTES_PER_CYCLE",
    "transfer_cycles",
]

NOC_LATENCY = 100
"""Modelled cycles from issue to completion of one NoC transaction (hop + NIU latency)."""
NOC_BYTES_PER_CYCLE = 32
"""Wormhole NoC link width: one 32-byte flit per cycle."""


def transfer_cycles(size: int) -> int:
    return NOC_LATENCY + -(-size // NOC_BYTES_PER_CYCLE)


def resolve(
    device: Device, noc_addr: int, size: int, what: str
) -> tuple[np.ndarray, int, Core | int]:
    """(memory view, local address, owning Core or DRAM bank index) of a unicast address."""
    x, y, local = decode_unicast(noc_addr)
    if size <= 0:
        raise NocError(f"{what}: transfer size must be positive, got {size}")
    chip = noc_chip(noc_addr)
    if chip is not None and chip != device.chip:
        raise NocError(
            f"{what}: NoC address {noc_addr:#x} targets chip {chip} from chip {device.chip}; a NoC "
            "transaction stays on its chip",
            hint="reach another chip over the fabric (tilewright.device.fabric: "
            "fabric_unicast_noc_unicast_write / fabric_unicast_noc_unicast_atomic_inc)",
        )
    core = device.core_at_noc(x, y)
    if core is not None:
        local = device.resolve_local(core, local)
        if local + size > device.l1_size:
            raise NocError(
                f"{what}: [{local:#x}, {local + size:#x}) is outside the {device.l1_size} B L1 "
                f"of core {core.logical}"
            )
        return core.l1, local, core
    bank = device.dram_bank_at_noc(x, y)
    if bank is not None:
        if local + size > device.dram.size:
            raise NocError(
                f"{what}: [{local:#x}, {local + size:#x}) is outside DRAM bank {bank} "
                f"({device.dram.size} B)"
            )
        return device.dram.channel(bank), local, bank
    raise NocError(
        f"{what}: NoC address {noc_addr:#x} targets ({x}, {y}), which is neither a worker "
        "core nor a DRAM bank"
    )


def _alignment(device, owner_a, owner_b) -> int:
    if isinstance(owner_a, int) or isinstance(owner_b, int):
        return device.dram_alignment
    return device.l1_alignment


def noc_copy(device, src: tuple, dst: tuple, size: int, what: str) -> None:
    """Copy ``size`` bytes from ``src`` to ``dst``; each is (memory, local, owner)."""
    src_mem, src_addr, src_owner = src
    dst_mem, dst_addr, dst_owner = dst
    align = _alignment(device, src_owner, dst_owner)
    if src_addr % align != dst_addr % align:
        raise NocError(
            f"{what}: source {src_addr:#x} and destination {dst_addr:#x} are not aligned alike "
            f"modulo {align} B (the NoC moves {align}-byte words)"
        )
    dst_mem[dst_addr : dst_addr + size] = src_mem[src_addr : src_addr + size]
    if not isinstance(dst_owner, int) and dst_owner is not None:
        dst_owner.notify_write(dst_addr, dst_addr + size)


def multicast_targets(device, issuer, mcast_addr: int, include_self: bool, what: str):
    """(target cores, local address) of a multicast address, with tt-metal's reach rules.

    ``noc_async_write_multicast`` reaches every worker in the rectangle except the
    sender; the ``_loopback_src`` variants include the sender.  A rectangle that
    contains only the sender is an error for the exclusive variant.
    """
    x0, y0, x1, y1, local = decode_multicast(mcast_addr)
    cores = []
    for y in range(y0, y1 + 1):
        for x in range(x0, x1 + 1):
            core = device.core_at_noc(x, y)
            if core is None:
                raise NocError(
                    f"{what}: multicast rectangle ({x0}, {y0})..({x1}, {y1}) includes ({x}, {y}), "
                    "which is not a worker core"
                )
            if core is issuer and not include_self:
                continue
            cores.append(core)
    if not cores:
        raise NocError(f"{what}: the multicast rectangle contains only the sender")
    return cores, local
