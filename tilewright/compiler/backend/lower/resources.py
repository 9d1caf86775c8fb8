"""Circular buffers the compiler adds to a kernel: float32 scratch, the reduce scaler and
the pipes' mailboxes and staging.

A compute kernel materialises a value that an op must read from a circular buffer
(a matmul or reduce operand that is an expression) in a *scratch* CB: float32 pages,
so nothing is rounded.  Scratch CBs take the highest free physical indices; the
k-th scratch of a statement reuses the kernel's k-th scratch CB (grown to the largest
request).  ``reduce_tile`` reads its scale from a *scaler* CB holding a tile of 1.0,
written once when the kernel starts.
"""

from __future__ import annotations

from tilewright.kir.ir import Const, Op, Ty

__all__ = ["mailbox_cb", "scratch_cb", "scaler_cb", "staging_cb", "prologue"]


def _take(lw) -> int:
    world = lw.world
    taken = world.options.setdefault("taken_cbs", {d.index for d in world.dfbs})
    for index in range(world.device.num_cbs - 1, -1, -1):
        if index not in taken:
            taken.add(index)
            return index
    raise lw.fail(
        f"no free circular-buffer index for a compiler scratch buffer (the target has "
        f"{world.device.num_cbs})"
    )


def scratch_cb(lw, k: int, tiles: int) -> int:
    pool: list[list[int]] = lw.extra.setdefault("scratch", [])
    while len(pool) <= k:
        pool.append([_take(lw), 0])
    pool[k][1] = max(pool[k][1], tiles)
    return pool[k][0]


def mailbox_cb(lw) -> int:
    """The CB whose L1 holds the pipe mailboxes (one 16-byte word per pipe destination)."""
    world = lw.world
    index = world.options.get("mail_cb")
    if index is None:
        index = world.options["mail_cb"] = _take(lw)
    lw.extra["mailbox"] = index
    return index


def staging_cb(lw) -> int:
    """The CB whose L1 holds this kernel's staged pipe sends (``lower/pipes.py``)."""
    index = lw.extra.get("staging")
    if index is None:
        index = lw.extra["staging"] = _take(lw)
    return index


def scaler_cb(lw) -> int:
    index = lw.extra.get("scaler")
    if index is None:
        index = lw.extra["scaler"] = _take(lw)
    return index


def prologue(lw) -> list[Op]:
    """Ops that run when the kernel starts (the scaler tile), in the kernel's first line."""
    index = lw.extra.get("scaler")
    if index is None:
        return []
    loc = lw.kin_loc
    return [
        Op("cb.reserve_back", (index, 1), (), loc),
        Op("tile_regs.acquire", (), (), loc),
        Op("fill_tile", (0, Const(1.0, Ty.F64)), (), loc),
        Op("tile_regs.commit", (), (), loc),
        Op("tile_regs.wait", (), (), loc),
        Op("pack_tile", (0, index, Const(0, Ty.U32)), (), loc),
        Op("tile_regs.release", (), (), loc),
        Op("cb.push_back", (index, 1), (), loc),
        Op("cb.wait_front", (index, 1), (), loc),
    ]
