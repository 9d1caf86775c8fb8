"""CB protocol expansion: the DFB protocol in blocks becomes tt-metal's in pages.

The lowering follows DFBs as the language does -- a FIFO of held blocks per DFB and side
-- and writes each acquisition as ``dfb.reserve cb, n`` / ``dfb.wait cb, n`` (the kernel
then holds n blocks of that side; on a data-movement kernel with the local that takes
the block's L1 address) and each release as ``dfb.push cb`` / ``dfb.pop cb`` (the oldest
block).  tt-metal's calls count pages, cumulatively: ``cb_reserve_back(cb, n *
block_pages)`` waits for room for all n blocks, ``cb_push_back(cb, block_pages)``
publishes one; a data-movement kernel addresses its block through the CB's write or
read pointer (``get_write_ptr`` / ``get_read_ptr``).
"""

from __future__ import annotations

from dataclasses import replace

from tilewright.compiler.backend.passes.walk import rewrite_ops
from tilewright.kir.ir import Intrinsic, Kernel, Op, Ty, u32

__all__ = ["expand_cb_protocol", "ACQUIRE", "RELEASE"]

ACQUIRE = {
    "dfb.reserve": ("cb.reserve_back", "write_ptr"),
    "dfb.wait": ("cb.wait_front", "read_ptr"),
}
RELEASE = {"dfb.push": "cb.push_back", "dfb.pop": "cb.pop_front"}


def expand_cb_protocol(kernel: Kernel) -> Kernel:
    """Every DFB op of the kernel's body as circular-buffer calls."""
    block_pages = {cb.index: cb.block_pages for cb in kernel.cbs}

    def expand(op: Op) -> tuple[Op, ...]:
        acquire = ACQUIRE.get(op.code)
        if acquire is not None:
            cb, blocks, addr = int(op.args[0]), int(op.args[1]), op.args[2]  # type: ignore[call-overload]
            call, pointer = acquire
            ops = [Op(call, (cb, blocks * block_pages[cb]), (), op.loc)]
            if addr is not None:  # a data-movement block: its L1 address
                ops.append(Op("set", (addr, Intrinsic(pointer, (u32(cb),), Ty.U32)), (), op.loc))
            return tuple(ops)
        release = RELEASE.get(op.code)
        if release is not None:
            cb = int(op.args[0])  # type: ignore[call-overload]
            return (Op(release, (cb, block_pages[cb]), (), op.loc),)
        return (op,)

    body = rewrite_ops(kernel.body, expand)
    return kernel if body is kernel.body else replace(kernel, body=body)
