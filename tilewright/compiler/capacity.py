"""Kernel capacity and processor-slot assignment (reference B.7).

The target's capacity table says how many kernels of each kind a node runs
(Wormhole / Blackhole: 1 compute, 2 data movement; Quasar: its descriptor's
counts).  An operation's requirement is the number of distinct logical kernels
per kind.  Slots are filled in the target's order: canonical kernels and the
pipe-source role first, then explicit ``ttl.Kernel`` handles in sort order
(kind, implicit before explicit, name).  Over capacity is a ``CapacityError`` with
the reference's message, located at the latest statement introducing one of the
kernels of that kind.
"""

from __future__ import annotations

from tilewright.errors import CapacityError
from tilewright.lang.selectors import LogicalKernel

__all__ = ["assign_slots"]


def assign_slots(
    kernels: list[LogicalKernel], slots: dict[str, tuple[str, ...]]
) -> dict[LogicalKernel, str]:
    """Map each logical kernel to a processor slot of the target (or raise CapacityError)."""
    out: dict[LogicalKernel, str] = {}
    for kind in ("compute", "data_movement"):
        mine = [k for k in kernels if k.kind == kind]
        capacity = len(slots.get(kind, ()))
        if len(mine) > capacity:
            latest = max(mine, key=lambda k: (k.loc.line if k.loc else 0, k.order))
            listed = ", ".join(k.describe() for k in mine)
            raise CapacityError(
                f"operation requires {len(mine)} {kind} kernels, but the target supports "
                f"{capacity}; selected kernels: {listed}",
                loc=latest.loc,
            )
        ordered = sorted(mine, key=LogicalKernel.sort_key)
        free = list(slots.get(kind, ()))
        # The pipe-source role takes the last data-movement slot (brisc on WH/BH).
        for k in ordered:
            if k.role == "pipe_source" and free:
                out[k] = free.pop()
        for k in ordered:
            if k.role != "pipe_source":
                out[k] = free.pop(0)
    return out
