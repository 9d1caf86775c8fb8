"""``ttl.copy`` between tensor slices and blocks, transfer handles, GroupTransfer (spec §Copy).

A copy is a NoC transfer on real bytes: tensor pages (in DRAM or L1 banks) into a
block's L1, or a block's L1 out to tensor pages, moved by the device's NoC model
(``device.transfer.page_transfer``) with the checks of the kernel API's
``noc_async_read`` / ``noc_async_write``: the chip, both address ranges, alignment.  It is asynchronous in the
language: ``copy`` returns a handle and the block is locked (NAW while written,
ROR while read) until ``handle.wait()``.  The bytes move at issue (the strongest
legal ordering); the handle carries the modelled completion time.  Pipe copies
(``block → pipe``, ``pipe → block``) are handled by ``lang.pipes``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tilewright.lang import pipes, state

if TYPE_CHECKING:
    from tilewright.lang.pipes import PipeSendHandle, ReceiveRequest

import numpy as np

from tilewright.device.formats import data_type_name
from tilewright.device.perf import kernel as noc_time
from tilewright.device.transfer import page_transfer
from tilewright.lang.blockstate import Op, check_and_apply
from tilewright.lang.dfb import TensorBlock, current_kernel
from tilewright.lang.rules import copy as rules
from tilewright.lazy import lazy_import
from tilewright.ttnn.tensor import Tensor, TensorSlice
from tilewright.ttnn.types import Layout

# The pages' NoC time from the native runtime's calendar where it can be built (the same
# figures as the Python one, 30x faster); the native package loads with the first copy,
# not with `import ttl` (tests/test_startup.py).
noc_pages = lazy_import("tilewright.native.noc_pages")

__all__ = ["copy", "CopyTransferHandler", "GroupTransfer"]


class CopyTransferHandler:
    """A transfer in flight (spec ``ttl.Transfer``): ``wait()`` once."""

    __slots__ = ("block", "done_at", "waited", "direction", "slice", "trace_start")

    def __init__(
        self,
        block: TensorBlock | None,
        done_at: int,
        direction: str,
        sl: TensorSlice,
        trace_start: int,
    ) -> None:
        self.block = block
        self.done_at = done_at
        self.waited = False
        self.direction = direction  # "read" (tensor -> block) or "write" (block -> tensor)
        self.slice = sl
        self.trace_start = trace_start

    @property
    def what(self) -> str:
        """What the transfer moves (formatted only when needed: errors and traces)."""
        blk = self.block.describe() if self.block is not None else "a block"
        return rules.transfer_what(self.direction, repr(self.slice), blk)

    def wait(self) -> None:
        """Block until the transfer completed; the handle is unusable afterwards."""
        if self.waited:
            rules.check_not_waited(True, rules.handle_waited(self.what))
        run = current_kernel("transfer.wait()")
        self.waited = True
        # A NoC barrier, as the compiled kernel's: every outstanding transfer of the kernel.
        noc_time.barrier(run, run.core, run.kernel_context().noc)
        self.done_at = run.clock
        block = self.block
        if block is not None:
            if self in block.pending:
                block.pending.remove(self)
            check_and_apply(block, Op.TX_WAIT)
        tracer = _tracer()
        if tracer is not None:
            tracer.span(run, "copy", self.trace_start, self.done_at, {"what": self.what})

    def __repr__(self) -> str:
        return f"<CopyTransferHandler {self.what}{' waited' if self.waited else ''}>"


class GroupTransfer:
    """Wait for several transfers at once (spec ``ttl.GroupTransfer``)."""

    def __init__(self) -> None:
        self._items: list = []
        self._done = False

    def add(self, transfer: CopyTransferHandler | PipeSendHandle | ReceiveRequest) -> None:
        rules.check_group_open(self._done, "add")
        rules.check_group_item(transfer)
        self._items.append(transfer)

    def wait_all(self) -> None:
        rules.check_group_open(self._done, "wait_all")
        self._done = True
        for item in self._items:
            item.wait()


def _tracer():
    return state.TRACER


def copy(src: object, dst: object) -> CopyTransferHandler | PipeSendHandle | ReceiveRequest:
    """Start an asynchronous copy; exactly one side is a block (spec §Copy)."""
    run = current_kernel("ttl.copy")
    rules.check_dm_only("ttl.copy", run.name, run.kernel_context().kernel.kind == "compute")

    if isinstance(dst, TensorBlock):
        if isinstance(src, TensorSlice):
            return _tensor_to_block(run, src, dst)
        if isinstance(src, Tensor):
            return _tensor_to_block(run, _whole(src), dst)
        if isinstance(src, pipes.PIPE_TYPES):
            return pipes.receive(run, src, dst)
    elif isinstance(src, TensorBlock):
        if isinstance(dst, TensorSlice):
            return _block_to_tensor(run, src, dst)
        if isinstance(dst, Tensor):
            return _block_to_tensor(run, src, _whole(dst))
        if isinstance(dst, pipes.PIPE_TYPES):
            return pipes.send(run, src, dst)
    raise rules.copy_ends_violation(_kind(src), _kind(dst))


def _kind(x) -> str:
    return {TensorBlock: "block", TensorSlice: "tensor slice", Tensor: "tensor"}.get(
        type(x), type(x).__name__
    )


def _whole(t: Tensor) -> TensorSlice:
    return t.slice_pages(tuple(slice(None) for _ in t.page_grid()))


def _check_pair(sl: TensorSlice, blk: TensorBlock) -> None:
    t, dfb = sl.tensor, blk.dfb
    tiled = t.layout == Layout.TILE
    tensor_end = rules.CopyEnd(
        tiled, t.data_format, data_type_name(t.dtype), (t.tile_shape.height, t.tile_shape.width)
    )
    dfb_end = rules.CopyEnd(
        dfb.tiled, dfb.data_format, data_type_name(dfb.dtype), (dfb.tile.height, dfb.tile.width)
    )
    rules.check_copy_pair(dfb.name, tensor_end, dfb_end)
    tile = tensor_end.tile if tiled else None
    rules.check_covers(repr(sl), sl.full_shape, sl.shape, blk, blk.shape, tile)


def _tile_pages(sl: TensorSlice) -> np.ndarray:
    """Page ids of the slice's tiles in row-major block order."""
    grid = sl.tensor.page_grid()
    if len(grid) == 2:  # the common case, without numpy's index machinery
        (r, c), w = sl.index, grid[1]
        return np.array(
            [row * w + col for row in range(r.start, r.stop) for col in range(c.start, c.stop)],
            dtype=np.int64,
        )
    ranges = [np.arange(s.start, s.stop) for s in sl.index]
    return np.ravel_multi_index(np.ix_(*ranges), grid).reshape(-1)


def _row_pages(sl: TensorSlice) -> tuple[np.ndarray, slice]:
    t = sl.tensor
    rules.check_row_pages(t.buffer.page_size, t.row_bytes())
    grid = tuple(t.padded_shape)
    rows_grid = grid[:-1] or (1,)
    ranges = [np.arange(s.start, s.stop) for s in sl.index[:-1]] or [np.arange(1)]
    ids = np.ravel_multi_index(np.ix_(*ranges), rows_grid).reshape(-1)
    es = t.row_bytes() // (grid[-1] if grid else 1)
    last = sl.index[-1]
    return ids, slice(last.start * es, last.stop * es)


def _issue(run, blk: TensorBlock, start: int, direction: str, sl) -> CopyTransferHandler:
    # The pages were issued (and timed) by the move; the handle's wait is the barrier.
    handle = CopyTransferHandler(blk, run.clock, direction, sl, start)
    blk.pending.append(handle)
    return handle


def _tensor_to_block(run, sl: TensorSlice, blk: TensorBlock) -> CopyTransferHandler:
    rules.check_copy_into(rules.COPY_INTO_BLOCK, blk, blk.is_reserve)
    _check_pair(sl, blk)
    check_and_apply(blk, Op.COPY_DST)
    start = run.clock
    _move(run, sl, blk, to_block=True)
    return _issue(run, blk, start, "read", sl)


def _block_to_tensor(run, blk: TensorBlock, sl: TensorSlice) -> CopyTransferHandler:
    _check_pair(sl, blk)
    check_and_apply(blk, Op.COPY_SRC)
    start = run.clock
    _move(run, sl, blk, to_block=False)
    return _issue(run, blk, start, "write", sl)


def _move(run, sl: TensorSlice, blk: TensorBlock, *, to_block: bool) -> int:
    """The bytes of the slice's pages to or from the block, over the NoC (one transfer per
    page, with the checks of ``noc_async_read`` / ``noc_async_write``)."""
    buf = sl.tensor.buffer
    timer = noc_pages.page_timer()
    if blk.dfb.tiled:
        return page_transfer(
            run.core,
            buf,
            _tile_pages(sl),
            blk.addr,
            to_l1=to_block,
            what="ttl.copy",
            run=run,
            timer=timer,
        )
    ids, cols = _row_pages(sl)
    return page_transfer(
        run.core,
        buf,
        ids,
        blk.addr,
        to_l1=to_block,
        what="ttl.copy",
        offset=cols.start,
        length=cols.stop - cols.start,
        run=run,
        timer=timer,
    )
