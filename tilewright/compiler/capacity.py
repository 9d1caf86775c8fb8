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

from dataclasses import dataclass, field

from tilewright.errors import CapacityError, SourceLoc

__all__ = ["LogicalKernel", "assign_slots", "KIND_TEXT"]

KIND_TEXT = {"compute": "compute", "data_movement": "data_movement"}


@dataclass(frozen=True, slots=True)
class LogicalKernel:
    """One logical kernel of an operation.

    ``role`` is "canonical" (the kind's default kernel), "pipe_source" (the implicit
    data-movement kernel running PipeNet source callbacks), "explicit" (a
    ``ttl.Kernel`` handle) or "ordinal" (the n-th kernel of that kind in an explicit
    multi-kernel operation without selectors).
    """

    kind: str
    role: str
    name: str
    order: int = 0
    loc: SourceLoc | None = None
    handle: object = field(default=None, compare=False)  # the ttl.Kernel handle (role "explicit")

    def describe(self) -> str:
        if self.role == "explicit":
            return f"{KIND_TEXT[self.kind]} kernel '{self.name}'"
        if self.role == "ordinal":
            return f"{KIND_TEXT[self.kind]} kernel '{self.name}'"
        if self.role == "pipe_source":  # the reference spells the implicit kernel this way
            return f"{KIND_TEXT[self.kind]} kernel '<pipe_source>'"
        return KIND_TEXT[self.kind]


_ROLE_RANK = {"canonical": 0, "ordinal": 0, "pipe_source": 1, "explicit": 2}


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
                f"operation requires {len(mine)} {KIND_TEXT[kind]} kernels, but the target supports "
                f"{capacity}; selected kernels: {listed}",
                loc=latest.loc,
            )
        ordered = sorted(
            mine,
            key=lambda k: (
                _ROLE_RANK[k.role],
                k.order if k.role == "ordinal" else 0,
                k.name if k.role == "explicit" else "",
            ),
        )
        free = list(slots.get(kind, ()))
        # The pipe-source role takes the last data-movement slot (brisc on WH/BH).
        for k in ordered:
            if k.role == "pipe_source" and free:
                out[k] = free.pop()
        for k in ordered:
            if k.role != "pipe_source":
                out[k] = free.pop(0)
    return out
