"""Chips in worker processes, on Ray (issue 27; docs/multi-device.md "Worker processes").

    from tilewright import distributed
    distributed.start(workers=2)       # or tilewright run --workers 2 prog.py
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 8))   # chips 0-3 -> worker 0, 4-7 -> 1
    ...                                # a TT-Lang operation on mesh tensors: chips in parallel
    print(distributed.report())
    distributed.stop()

Ray is an optional dependency (``tilewright[distributed]``): without it, :func:`start`
raises a DeviceError saying how to get it.  The default run never imports it.
"""

from __future__ import annotations

from tilewright.device import offload
from tilewright.device.device import SHARE_MEMORY
from tilewright.distributed.pool import WorkerPool  # imports Ray only when a pool starts

__all__ = ["start", "stop", "active", "report"]

_POOL: list = []  # the running WorkerPool, if any


def start(workers: int, address: str | None = None):
    """Start ``workers`` worker processes (a local Ray, or the cluster at ``address``);
    meshes opened from now on run their chips' launches there.  Returns the pool."""
    if _POOL:
        stop()
    pool = WorkerPool(workers, address)
    _POOL.append(pool)
    SHARE_MEMORY["default"] = True
    offload.MESH_HOOKS.append(pool.attach_mesh)
    return pool


def active():
    """The running worker pool, or None."""
    return _POOL[0] if _POOL else None


def report() -> str:
    """What the workers ran, and what ran in the driver and why (one line)."""
    pool = active()
    return pool.report() if pool is not None else "tilewright: no worker processes"


def stop() -> None:
    """Stop the workers (meshes still open keep running in the driver from now on)."""
    while _POOL:
        pool = _POOL.pop()
        if pool.attach_mesh in offload.MESH_HOOKS:
            offload.MESH_HOOKS.remove(pool.attach_mesh)
        pool.close()
    SHARE_MEMORY["default"] = False
