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
from tilewright.errors import DFBContractError, KernelError
from tilewright.lang.blockstate import Op, check_and_apply
from tilewright.lang.dfb import TensorBlock, current_kernel
from tilewright.lang.expr import shape_text
from tilewright.ttnn.tensor import Tensor, TensorSlice
from tilewright.ttnn.types import Layout

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
        if self.direction == "read":
            return f"copy {self.slice} -> {blk}"
        return f"copy {blk} -> {self.slice}"

    def wait(self) -> None:
        """Block until the transfer completed; the handle is unusable afterwards."""
        if self.waited:
            raise DFBContractError(
                f"transfer handle of {self.what} was already waited; a handle is single-use"
            )
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
        if self._done:
            raise DFBContractError("GroupTransfer.add() after wait_all(); a group is single-use")
        if not hasattr(transfer, "wait"):
            raise KernelError(
                f"GroupTransfer.add() takes a transfer handle, got {type(transfer).__name__}"
            )
        self._items.append(transfer)

    def wait_all(self) -> None:
        if self._done:
            raise DFBContractError(
                "GroupTransfer.wait_all() was already called; a group is single-use"
            )
        self._done = True
        for item in self._items:
            item.wait()


def _tracer():
    return state.TRACER


def copy(src: object, dst: object) -> CopyTransferHandler | PipeSendHandle | ReceiveRequest:
    """Start an asynchronous copy; exactly one side is a block (spec §Copy)."""
    run = current_kernel("ttl.copy")
    if run.kernel_context().kernel.kind == "compute":
        raise KernelError(
            f"ttl.copy runs on data-movement kernels; '{run.name}' is a compute kernel"
        )

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
    raise KernelError(
        f"ttl.copy({_kind(src)}, {_kind(dst)}): a copy moves data between a block and a tensor "
        "slice or a pipe; exactly one side must be a block"
    )


def _kind(x) -> str:
    return {TensorBlock: "block", TensorSlice: "tensor slice", Tensor: "tensor"}.get(
        type(x), type(x).__name__
    )


def _whole(t: Tensor) -> TensorSlice:
    return t.slice_pages(tuple(slice(None) for _ in t.page_grid()))


def _check_pair(sl: TensorSlice, blk: TensorBlock) -> None:
    t, dfb = sl.tensor, blk.dfb
    tiled = t.layout == Layout.TILE
    if tiled != dfb.tiled:
        raise KernelError(
            f"ttl.copy: cannot mix a {'tiled' if tiled else 'row-major'} tensor with a "
            f"{'tiled' if dfb.tiled else 'row-major'} DFB '{dfb.name}'"
        )
    if t.data_format != dfb.data_format:
        raise KernelError(
            f"ttl.copy: tensor of {data_type_name(t.dtype)} and DFB '{dfb.name}' of "
            f"{data_type_name(dfb.dtype)} differ in format; the NoC copies bytes, so formats must match"
        )
    if tiled and (t.tile_shape.height, t.tile_shape.width) != (dfb.tile.height, dfb.tile.width):
        raise KernelError(
            f"ttl.copy: tensor tiles {t.tile_shape.height}x{t.tile_shape.width} and DFB '{dfb.name}' "
            f"tiles {dfb.tile.height}x{dfb.tile.width} differ"
        )
    if not _shapes_match(sl, blk.shape):
        n_t, n_b = int(np.prod(sl.shape)), int(np.prod(blk.shape))
        unit = "tile" if tiled else "element"
        if tiled:
            th, tw = t.tile_shape.height, t.tile_shape.width
            elems = sl.full_shape[:-2] + (sl.full_shape[-2] * th, sl.full_shape[-1] * tw)
            what = f"Tensor shape {shape_text(elems)}"
        else:
            what = f"Tensor shape {shape_text(sl.shape)}"
        raise KernelError(
            f"{what} does not match Block shape {shape_text(blk.shape)} "
            f"({unit} counts: {n_t} vs {n_b}): the slice {sl} must cover exactly the block of "
            f"{blk.describe()}"
        )


def _shapes_match(sl: TensorSlice, block_shape: tuple[int, ...]) -> bool:
    """A slice covers a block: the block's shape equals the slice's trailing extents, and any
    leading dimensions of the slice are single indices (spec §Tensor slices: 1x1 blocks may be
    addressed with scalar indices; leading scalar indices squeeze)."""
    full = sl.full_shape
    r = len(block_shape)
    if tuple(sl.shape) == tuple(block_shape):
        return True
    if r > len(full):
        return False
    return tuple(full[len(full) - r :]) == tuple(block_shape) and all(
        e == 1 for e in full[: len(full) - r]
    )


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
    if t.buffer.page_size != t.row_bytes():
        raise KernelError(
            "ttl.copy of a row-major tensor needs whole-row pages (interleaved or height-sharded); "
            "this tensor is width- or block-sharded"
        )
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
    if not blk.is_reserve:
        raise KernelError(
            f"ttl.copy(tensor_slice, block) writes the block, so it must come from reserve(); "
            f"{blk.describe()} comes from wait()"
        )
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
    if blk.dfb.tiled:
        return page_transfer(
            run.core, buf, _tile_pages(sl), blk.addr, to_l1=to_block, what="ttl.copy", run=run
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
    )
