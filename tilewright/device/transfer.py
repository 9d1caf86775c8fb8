"""NoC transfers on real bytes: reads, writes, multicast, atomic increments.

The emulated NoC is synchronous: a transfer's bytes move when it is issued, the
strongest legal ordering (tt-metal digest §4.2, emulation notes), so barriers only
account time -- the device-time model (``device/perf``) says when each transfer
completes; in a dry run (``EngineOptions.dry_run``) only flags move (transfers of at most
``DRY_RUN_KEPT`` bytes: semaphores), no payload.  What the hardware's watcher would flag is
a :class:`NocError`: a target that is neither a worker nor a DRAM bank, an access outside
L1 / the DRAM channel, a zero-sized transfer, source and destination with different offsets
modulo the NoC alignment, a multicast whose ``num_dests`` does not match the cores it
reaches.  Every write into a core's L1 wakes kernels watching that range
(semaphore waits).  The checks are functions of their own, so the native kernel API's
``noc_async_*`` calls and TT-Lang's ``ttl.copy`` (:func:`page_transfer`, whole blocks
of tensor pages) make the same ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tilewright.device import api_messages as M
from tilewright.device.buffer import FEW_PAGES
from tilewright.device.noc import (
    chip_tag,
    chips_with_tag,
    decode_multicast,
    decode_unicast,
    noc_chip_tag,
)
from tilewright.device.perf import kernel as noc_time
from tilewright.device.perf.state import DRY_RUN_KEPT
from tilewright.errors import NocError, TilewrightError

if TYPE_CHECKING:
    from tilewright.device.buffer import Buffer
    from tilewright.device.device import Core, Device
    from tilewright.device.engine import KernelRun

__all__ = [
    "alignment",
    "check_aligned",
    "check_chip",
    "check_range",
    "resolve",
    "noc_copy",
    "page_transfer",
    "multicast_targets",
]


# -- the checks every NoC transfer makes -------------------------------------------------------


def check_chip(device: Device, chip: int | None, target: str, what: str) -> None:
    """A transfer issued on ``device`` reaches only its own chip (None: the issuing chip)."""
    if chip is not None and chip != device.chip:
        raise _cross_chip(device, target, f"chip {chip}", what)


def _cross_chip(device: Device, target: str, chips: str, what: str) -> TilewrightError:
    return M.NOC_CROSS_CHIP(what=what, target=target, chips=chips, chip=device.chip)


def check_range(device: Device, owner: Core | int, start: int, end: int, what: str) -> None:
    """``[start, end)`` lies inside the owner's memory: a core's L1 or a DRAM bank."""
    if isinstance(owner, int):
        if end > device.dram.size:
            raise M.NOC_DRAM_RANGE(
                what=what, start=start, end=end, bank=owner, size=device.dram.size
            )
    elif start < 0 or end > device.l1_size:
        raise M.NOC_L1_RANGE(what=what, start=start, end=end, l1=device.l1_size, core=owner.logical)


def alignment(device: Device, owner_a: object, owner_b: object) -> int:
    """The NoC word both ends of a transfer must agree on (DRAM's when DRAM is involved)."""
    if isinstance(owner_a, int) or isinstance(owner_b, int):
        return device.dram_alignment
    return device.l1_alignment


def check_aligned(src_addr: int, dst_addr: int, align: int, what: str) -> None:
    """Source and destination have the same offset modulo the NoC word."""
    if src_addr % align != dst_addr % align:
        raise M.NOC_ALIGN(what=what, src=src_addr, dst=dst_addr, align=align)


# -- transfers ------------------------------------------------------------------------------


def resolve(
    device: Device, noc_addr: int, size: int, what: str
) -> tuple[np.ndarray, int, Core | int]:
    """(memory view, local address, owning Core or DRAM bank index) of a unicast address."""
    x, y, local = decode_unicast(noc_addr)
    if size <= 0:
        raise M.NOC_SIZE(what=what, size=size)
    tag = noc_chip_tag(noc_addr)
    if tag and tag != chip_tag(device.chip):
        raise _cross_chip(
            device,
            M.NOC_ADDRESS_WHAT.text(addr=noc_addr),
            chips_with_tag(tag, len(device.system_desc.chip_desc_indices)),
            what,
        )
    core = device.core_at_noc(x, y)
    if core is not None:
        local = device.resolve_local(core, local)
        check_range(device, core, local, local + size, what)
        return core.l1, local, core
    bank = device.dram_bank_at_noc(x, y)
    if bank is not None:
        check_range(device, bank, local, local + size, what)
        return device.dram.channel(bank), local, bank
    raise M.NOC_TARGET(what=what, addr=noc_addr, x=x, y=y)


def noc_copy(device, src: tuple, dst: tuple, size: int, what: str) -> None:
    """Copy ``size`` bytes from ``src`` to ``dst``; each is (memory, local, owner)."""
    src_mem, src_addr, src_owner = src
    dst_mem, dst_addr, dst_owner = dst
    check_aligned(src_addr, dst_addr, alignment(device, src_owner, dst_owner), what)
    if size <= DRY_RUN_KEPT or not device.perf.state.dry_run:
        dst_mem[dst_addr : dst_addr + size] = src_mem[src_addr : src_addr + size]
    if not isinstance(dst_owner, int) and dst_owner is not None:
        dst_owner.notify_write(dst_addr, dst_addr + size)


def page_transfer(
    core: Core,
    buffer: Buffer,
    page_ids: np.ndarray,
    l1_addr: int,
    *,
    to_l1: bool,
    what: str,
    offset: int = 0,
    length: int | None = None,
    run: KernelRun | None = None,
    timer: noc_time.PageTimer | None = None,
) -> int:
    """Move bytes ``[offset, offset + length)`` of each page of ``buffer`` to (``to_l1``) or
    from consecutive ``length``-byte runs of ``core``'s L1 starting at ``l1_addr``.

    The transfer a kernel makes with one ``noc_async_read`` / ``noc_async_write`` per
    page, with the same checks (the chip, the bounds of both ranges, alignment of
    source and destination), done per bank on whole blocks of pages, and -- for the
    issuing ``run`` -- the same modelled time, page after page on the kernel's NoC (timed
    by ``timer`` where given: the same figures, faster; ``device/perf/kernel.py``).
    Returns the bytes moved.
    """
    device = core.device
    check_chip(device, buffer.device.chip, "the tensor's buffer", what)
    if buffer.device is not device:
        raise NocError(f"{what}: the tensor is on another device than the issuing kernel")
    length = buffer.page_size - offset if length is None else length
    ids = np.asarray(page_ids, dtype=np.int64).reshape(-1)
    if length <= 0 or ids.size == 0:
        raise M.NOC_SIZE(what=what, size=length * ids.size)
    total = ids.size * length
    check_range(device, core, l1_addr, l1_addr + total, what)
    if run is not None:
        _time_pages(run, core, buffer, ids, length, to_l1, timer)
    if device.perf.state.dry_run:
        _check_pages(device, core, buffer, ids, l1_addr, offset, length, what)
        if to_l1:
            core.notify_write(l1_addr, l1_addr + total)
        return total
    l1 = core.l1
    if ids.size <= FEW_PAGES:  # a block's worth: per-page slices beat grouping
        for i, (owner, addr) in enumerate(buffer.page_slots(ids)):
            far, near = addr + offset, l1_addr + i * length
            check_range(device, owner, far, far + length, what)
            mem = buffer.memory_of(owner)
            if to_l1:
                check_aligned(far, near, alignment(device, owner, core), what)
                l1[near : near + length] = mem[far : far + length]
            else:
                check_aligned(near, far, alignment(device, core, owner), what)
                mem[far : far + length] = l1[near : near + length]
                _notify(owner, far, far + length)
    else:
        span = np.arange(length)
        for owner, pos, addrs in buffer.page_groups(ids):
            far, near = addrs + offset, l1_addr + pos * length
            check_range(device, owner, int(far.min()), int(far.max()) + length, what)
            align = alignment(device, owner, core)
            bad = np.nonzero(far % align != near % align)[0]
            if bad.size:
                i = int(bad[0])
                src, dst = (far[i], near[i]) if to_l1 else (near[i], far[i])
                check_aligned(int(src), int(dst), align, what)
            mem = buffer.memory_of(owner)
            if to_l1:
                l1[near[:, None] + span] = mem[far[:, None] + span]
            else:
                mem[far[:, None] + span] = l1[near[:, None] + span]
                _notify(owner, int(far.min()), int(far.max()) + length)
    if to_l1:
        core.notify_write(l1_addr, l1_addr + total)
    return total


def _time_pages(run, core: Core, buffer: Buffer, ids: np.ndarray, length: int, to_l1: bool, timer):
    """The modelled time of one NoC read / write per page, in page order."""

    noc = run.kernel_context().noc
    owners = buffer.page_owner_codes(ids)
    noc_time.pages(run, core, owners, length, noc, write=not to_l1, timer=timer)


def _check_pages(device, core, buffer, ids, l1_addr: int, offset: int, length: int, what: str):
    """A dry run's page transfer: the far ranges and alignment checked, no bytes moved."""
    for owner, pos, addrs in buffer.page_groups(ids):
        far, near = addrs + offset, l1_addr + pos * length
        check_range(device, owner, int(far.min()), int(far.max()) + length, what)
        align = alignment(device, owner, core)
        bad = np.nonzero(far % align != near % align)[0]
        if bad.size:
            check_aligned(int(far[bad[0]]), int(near[bad[0]]), align, what)


def _notify(owner: Core | int, start: int, end: int) -> None:
    if not isinstance(owner, int):
        owner.notify_write(start, end)


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
                raise M.MCAST_NOT_WORKER(what=what, x0=x0, y0=y0, x1=x1, y1=y1, x=x, y=y)
            if core is issuer and not include_self:
                continue
            cores.append(core)
    if not cores:
        raise M.MCAST_ONLY_SENDER(what=what)
    return cores, local
