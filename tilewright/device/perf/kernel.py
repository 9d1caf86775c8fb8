"""How a Python kernel's NoC calls advance its clock (the native runtime's twin: perf.cpp).

The kernel API (``device/kernel_api/dataflow.py``), TT-Lang's copies (``lang/copy.py`` via
``device/transfer.py``), pipes and semaphores call these with the running kernel; they
find the endpoints on the device's floorplan and let :class:`~.noc.NocModel` time the
transfer.  Issue time counts as NoC time of the run (its bound), barrier waits as NoC or
DRAM time, depending on what the latest transfer touched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from tilewright.device.perf.noc import NocModel
from tilewright.device.perf.pipeline import perf_of
from tilewright.device.perf.state import PerfRun

if TYPE_CHECKING:
    from tilewright.device.device import Core
    from tilewright.device.engine import KernelRun

__all__ = [
    "model_of",
    "endpoint",
    "read",
    "write",
    "multicast",
    "barrier",
    "pages",
    "PageTimer",
    "wake_at",
]


def model_of(core: Core) -> NocModel:
    return core.device.perf


def endpoint(model: NocModel, owner) -> tuple[tuple[int, int], int]:
    """(physical xy, DRAM bank or -1) of a transfer's far end: a Core or a DRAM bank index."""
    if isinstance(owner, int):
        return model.dram[owner], owner
    return model.workers[owner.index], -1


def read(run: KernelRun, core: Core, owner, size: int, noc: int) -> None:
    """``noc_async_read`` of ``size`` bytes from ``owner`` into ``core``'s L1."""
    model = model_of(core)
    src, bank = endpoint(model, owner)
    pr = perf_of(run)
    start = run.clock
    run.clock = model.read(pr, start, noc, model.workers[core.index], src, size, bank)
    pr.busy_noc += run.clock - start
    run.stats_ops += 1


def write(run: KernelRun, core: Core, owner, size: int, noc: int, posted: bool = False) -> int:
    """``noc_async_write`` of ``size`` bytes from ``core`` to ``owner``: when it lands."""
    model = model_of(core)
    dst, bank = endpoint(model, owner)
    pr = perf_of(run)
    start = run.clock
    run.clock, landed = model.write(
        pr, start, noc, model.workers[core.index], dst, size, bank, posted
    )
    pr.busy_noc += run.clock - start
    run.stats_ops += 1
    return landed


def multicast(
    run: KernelRun, core: Core, targets: list[Core], size: int, noc: int, linked: bool
) -> int:
    """A multicast write to ``targets`` (cores of one rectangle): when it has landed."""
    model = model_of(core)
    xs = [model.workers[c.index][0] for c in targets]
    ys = [model.workers[c.index][1] for c in targets]
    pr = perf_of(run)
    start = run.clock
    run.clock, landed = model.multicast(
        pr,
        start,
        noc,
        model.workers[core.index],
        (min(xs), min(ys), max(xs), max(ys)),
        size,
        linked,
    )
    pr.busy_noc += run.clock - start
    run.stats_ops += 1
    return landed


def barrier(run: KernelRun, core: Core, noc: int, reads: bool = True, writes: bool = True) -> None:
    """Wait for the run's outstanding reads / writes (``noc`` < 0: on both NoCs)."""
    run.clock = model_of(core).barrier(perf_of(run), run.clock, noc, reads, writes)
    run.stats_ops += 1


PageTimer = Callable[[NocModel, PerfRun, int, int, int, np.ndarray, int, bool], int]
"""Times a run of page transfers exactly as :func:`pages` does, only faster:
``timer(model, pr, now, noc, core_index, owners, length, write)`` returns the issuer's
clock after the last page.  The native runtime provides one (``tilewright.native.noc_pages``)."""


def pages(
    run: KernelRun,
    core: Core,
    owners: np.ndarray,
    length: int,
    noc: int,
    *,
    write: bool,
    timer: PageTimer | None = None,
) -> None:
    """One ``noc_async_read`` (``noc_async_write`` if ``write``) per page, in order: a
    TT-Lang copy into (out of) a block, a collective's piece.  ``owners``: each page's far
    end as ``Buffer.page_owner_codes`` gives them (int32: a core's index, -2 - a DRAM bank)."""
    model = model_of(core)
    pr = perf_of(run)
    start = t = run.clock
    if timer is not None:
        t = timer(model, pr, t, noc, core.index, owners, length, write)
    else:
        here = model.workers[core.index]
        for code in owners.tolist():
            far, bank = (
                (model.workers[code], -1) if code >= 0 else (model.dram[-2 - code], -2 - code)
            )
            if write:
                t, _ = model.write(pr, t, noc, here, far, length, bank)
            else:
                t = model.read(pr, t, noc, here, far, length, bank)
    run.clock = t
    pr.busy_noc += t - start
    run.stats_ops += 1


def wake_at(run: KernelRun, when: int, notify) -> None:
    """Run ``notify()`` (which wakes remote waiters) as if at ``when``: a semaphore write
    wakes its waiters when it lands, not when it was issued."""
    now = run.clock
    if when > now:
        run.clock = when
        try:
            notify()
        finally:
            run.clock = now
    else:
        notify()
