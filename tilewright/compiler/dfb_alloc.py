"""DFB physical indices and L1 addresses (reference C.7, D.1 limits).

Each DFB gets a circular-buffer index (in declaration order: deterministic) and an
L1 address, first-fit upward from ``l1_unreserved_base`` with the L1 alignment.
The index count is bounded by the target's ``num_cbs``; the bytes by the node's
free L1 (below L1_SMALL and below any L1 buffer).  Both overflows are
``CapacityError`` naming the DFBs and their bytes.
"""

from __future__ import annotations

from tilewright.errors import CapacityError

__all__ = ["allocate", "l1_budget"]


def l1_budget(device) -> tuple[int, str]:
    """(free bytes for DFBs per node, how that figure is made up)."""
    top = device.l1_size - device.l1_small_size
    lowest = device.l1_allocator.lowest_allocated_address()
    buffers = 0
    if lowest is not None and lowest < top:
        buffers = top - lowest
        top = lowest
    free = top - device.l1_unreserved_base
    why = (
        f"L1 {device.l1_size} B - {device.l1_unreserved_base} B reserved - "
        f"{device.l1_small_size} B L1_SMALL - {buffers} B of L1 buffers"
    )
    return free, why


def allocate(op, device, dfbs, loc) -> list[tuple[int, int]]:
    """(index, address) for each DFB of an operation, in declaration order."""
    limit = device.num_cbs
    if len(dfbs) > limit:
        names = ", ".join(d.name for d in dfbs)
        raise CapacityError(
            f"operation '{op.name}' declares {len(dfbs)} DFBs but the target has {limit} DFB indices "
            f"(num_cbs); DFBs: {names}",
            loc=loc,
        )
    align = device.l1_alignment
    free, why = l1_budget(device)
    addr = device.l1_unreserved_base
    out = []
    for i, d in enumerate(dfbs):
        addr = -(-addr // align) * align
        out.append((i, addr))
        addr += d.total_bytes
    used = addr - device.l1_unreserved_base
    if used > free:
        listing = ", ".join(f"{d.name} {d.total_bytes} B" for d in dfbs)
        raise CapacityError(
            f"the DFBs of operation '{op.name}' need {used} B of L1 per node but only {free} B are "
            f"free ({why}): {listing}",
            loc=loc,
        )
    return out
