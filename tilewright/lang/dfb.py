"""Dataflow buffers and blocks at run time (spec §Dataflow buffers, §Blocks; reference D.1).

A ``DataflowBuffer`` (DFB) is a per-node FIFO ring of ``block_count`` blocks, built
on the node's circular buffer of the same physical index: a block is
``block_pages`` consecutive pages (tiles for tiled DFBs, rows for row-major
ones).  ``reserve()`` / ``wait()`` block like ``cb_reserve_back`` /
``cb_wait_front`` for one more block than the kernel already holds; ``push()`` /
``pop()`` release the oldest held block.  A ``TensorBlock`` is one acquired block:
its L1 address, its state (``blockstate``) and its pending transfers.

The rules checked here are functions of ``lang.rules.dfb`` (the compiler's lowering
checks the same ones): one producer and one consumer kernel per DFB and node (SPSC);
a data-movement kernel holds at most one block of a DFB at a time (it addresses a
DFB through one pointer); blocks are released in acquisition order; a kernel that
ends while holding blocks releases them (the compiler's auto-sync), unless their
state forbids it, which is an error.
"""

from __future__ import annotations

import math
import sys
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np

from tilewright.device.engine import ACTIVE, KernelRun
from tilewright.device.formats import (
    DataFormat,
    TileShape,
    data_type_name,
    decode_block,
    decode_elements,
    encode_block,
    encode_elements,
)
from tilewright.device.perf import pipeline
from tilewright.errors import (
    BlockStateError,
    KernelError,
    SourceLoc,
    user_frame,
    user_location,
)
from tilewright.lang.blockstate import Context, Op, State, check_and_apply, declared_unused
from tilewright.lang.expr import (
    BlockExpr,
    BlockOperators,
    as_value,
    evaluate,
)
from tilewright.lang.rules import dfb as rules

if TYPE_CHECKING:
    from tilewright.device.cb import CircularBuffer
    from tilewright.device.device import Core
    from tilewright.ttnn.types import DataType

__all__ = ["DFB", "DataflowBuffer", "IndexGuard", "TensorBlock", "current_kernel"]


class IndexGuard(Protocol):
    """The run-time check of logical DFBs sharing one physical index (``lang.dfb_share``)."""

    def check_access(self, dfb: DataflowBuffer, what: str) -> None:
        """``what`` touches the index: an error if another sharer is live."""

    def extern_action(self, dfb: DataflowBuffer, kind: str, pages: int) -> None:
        """A declared external protocol action on ``dfb``, reported before it runs."""

    def reset(self, dfb: DataflowBuffer) -> None:
        """The DFB was reset to empty (``ttl.reset_dfbs``): forget what it held."""


def current_kernel(what: str) -> KernelRun:
    """The running KernelRun; an error naming ``what`` outside kernels."""
    run = ACTIVE.run
    if run is None:  # no engine to locate it: the user's line now
        raise KernelError(
            f"{what} can only be used inside a kernel function of a running @ttl.operation",
            loc=user_location(),
        )
    return run


def _is_compute(run: KernelRun) -> bool:
    return run.kernel_context().kernel.kind == "compute"


class DFB:
    """Annotation marker for DFB parameters of expand-only operations (``buf: ttl.DFB``)."""


class DataflowBuffer:
    """A dataflow buffer of one node (``ttl.make_dataflow_buffer_like`` / ``ttl.make_dfb``)."""

    share_guard: IndexGuard | None = None
    """The run-time check of the DFBs sharing this one's physical index (``dfb_share``), if any."""

    def __init__(
        self,
        *,
        name: str,
        core: Core,
        index: int,
        shape: tuple[int, ...],
        block_count: int,
        data_format: DataFormat,
        dtype: DataType,
        tile: TileShape,
        tiled: bool,
        page_size: int,
        elem_size: int,
        loc: SourceLoc | None = None,
    ) -> None:
        self.name = name
        self.core = core
        self.index = index
        self.shape = tuple(shape)
        self.block_count = block_count
        self.data_format = data_format
        self.dtype = dtype
        self.tile = tile
        self.tiled = tiled
        self.page_size = page_size
        self.elem_size = elem_size
        self.block_pages = math.prod(self.shape) if tiled else math.prod(self.shape[:-1])
        self.block_bytes = self.block_pages * page_size
        self.loc = loc
        self._cb = None
        self._reserved: deque[TensorBlock] = deque()
        self._waited: deque[TensorBlock] = deque()
        self._producer = None
        self._consumer = None
        self.address: int | None = None  # filled by the program builder (for explain / diagnostics)

    # -- facts -------------------------------------------------------------------------------

    @property
    def capacity_tiles(self) -> int:
        return self.block_pages * self.block_count

    @property
    def total_bytes(self) -> int:
        return self.block_bytes * self.block_count

    def held_blocks(self) -> list:
        """Blocks acquired and not released yet (reserved ones first), for resets and sharing checks."""
        return [*self._reserved, *self._waited]

    def circular_buffer(self) -> CircularBuffer:
        """This node's circular buffer of the DFB's physical index (valid while its launch runs)."""
        return self._circular()

    def _circular(self):
        cb = self._cb
        if cb is None:
            cb = self.core.cbs[self.index]
            if cb is None:
                raise KernelError(
                    f"DFB '{self.name}' has no circular buffer on node {self.core.logical}"
                )
            self._cb = cb
        return cb

    def filled_blocks(self) -> int:
        return self._circular().pages_filled // self.block_pages

    # -- acquire -----------------------------------------------------------------------------

    def _role(self, run, producer: bool) -> None:
        """``run`` takes the producer (or consumer) side: the SPSC rule."""
        attr = "_producer" if producer else "_consumer"
        owner = getattr(self, attr)
        if owner is None:
            setattr(self, attr, run)
        else:
            side = rules.RESERVE if producer else rules.WAIT
            rules.check_role(self, side, self.core.logical, owner, run)

    def reserve(self, *args: object, **kwargs: object) -> TensorBlock:
        """Acquire the next free block (blocking); it starts in state MW."""
        return self._acquire(_PRODUCER, args, kwargs)

    def wait(self, *args: object, **kwargs: object) -> TensorBlock:
        """Acquire the next filled block (blocking); it starts in state MR."""
        return self._acquire(_CONSUMER, args, kwargs)

    def _acquire(self, acq: _Side, args, kwargs) -> TensorBlock:
        side = acq.side
        if args or kwargs:
            rules.check_acquire_args(side, len(args), tuple(kwargs))
        run = current_kernel(f"{self.name}.{side.method}()")
        self._role(run, side.producer)
        held = self._reserved if side.producer else self._waited
        compute = _is_compute(run)
        cb = self._circular()
        need = (len(held) + 1) * self.block_pages
        rules.check_acquire(self, side, run.name, compute, held, need, cb.num_pages)
        stage = pipeline.PACK if side.producer else pipeline.UNPACK
        pr = pipeline.enter(run, stage)  # a cb_reserve_back / cb_wait_front's time
        engine = ACTIVE.engine
        if engine is None:  # `run` is running, so its engine is active
            raise KernelError(f"{self.name}.{side.method}() runs outside a launch")
        if side.producer:
            while cb.pages_free < need:
                engine.block(cb.back_q, self, ("reserve", need))
            addr = cb.wr_ptr
        else:
            while cb.pages_filled < need:
                engine.block(cb.front_q, self, ("wait", need))
            addr = cb.rd_ptr
        pipeline.leave(run, pr, stage)
        addr += len(held) * self.block_bytes
        if addr >= cb.fifo_limit:
            addr -= cb.fifo_limit - cb.fifo_addr
        block = TensorBlock(
            self, addr, acq.compute_context if compute else acq.dm_context, run, acq.initial
        )
        held.append(block)
        return block

    # -- release -----------------------------------------------------------------------------

    def _release(self, block: TensorBlock, op: Op) -> None:
        push = op == Op.PUSH
        held = self._reserved if block.is_reserve else self._waited
        position = _position(held, block) if block.is_reserve == push else None
        rules.check_release_order(block, position, held[0] if held else None, push)
        block.complete_transfers()
        check_and_apply(block, op)
        held.popleft()
        cb = self._circular()
        stage = pipeline.PACK if op == Op.PUSH else pipeline.UNPACK
        pr = pipeline.enter(block.run, stage)  # a cb_push_back / cb_pop_front's time
        if op == Op.PUSH:
            cb.push_back(self.block_pages)
        else:
            cb.pop_front(self.block_pages)
        pipeline.leave(block.run, pr, stage)

    def push(self) -> None:
        """Legacy buffer-level push (spec < 0.7): push the oldest reserved block."""
        rules.check_legacy_release(self, True, len(self._reserved))
        self._reserved[0].push()

    def pop(self) -> None:
        """Legacy buffer-level pop (spec < 0.7): pop the oldest waited block."""
        rules.check_legacy_release(self, False, len(self._waited))
        self._waited[0].pop()

    def release_held(self, run: KernelRun) -> None:
        """At kernel exit: release what ``run`` still holds, as the compiler's auto-sync does."""
        for held, op in ((self._reserved, Op.PUSH), (self._waited, Op.POP)):
            while held and held[0].run is run:
                self._release(held[0], op)

    # -- diagnostics ---------------------------------------------------------------------------

    def describe_wait(self, detail: object) -> str:
        op, _need = cast(tuple[str, int], detail)  # what _acquire passed to engine.block
        return wait_text(op, self.name, self.block_pages, self.block_count, self._circular())

    def waits_as(self) -> DfbWaits:
        """What a worker process needs to describe this DFB's waits (tilewright.distributed)."""
        return DfbWaits(self.name, self.index, self.block_pages, self.block_count)

    def __repr__(self) -> str:
        return (
            f"<DataflowBuffer {self.name} shape={self.shape} block_count={self.block_count} "
            f"{data_type_name(self.dtype)} on node {self.core.logical}>"
        )

    def __str__(self) -> str:  # what `print(dfb)` shows in a kernel (DPRINT metadata)
        return (
            f"DFB {self.name}: index {self.index}, shape {self.shape}, block_count "
            f"{self.block_count}, {data_type_name(self.dtype)}, {self.block_bytes} B per block"
        )


def wait_text(op: str, name: str, block_pages: int, block_count: int, cb) -> str:
    """A blocked ``reserve()`` / ``wait()`` of DFB ``name`` over circular buffer ``cb``, in
    the words of a deadlock report."""
    filled = cb.pages_filled // block_pages
    free = cb.pages_free // block_pages
    if op == "reserve":
        return (
            f"{name}.reserve(): {name} has {free} free of {block_count} blocks "
            f"({filled} filled, waiting for the consumer to pop); capacity {block_count} blocks"
        )
    return f"{name}.wait(): {name} holds {filled} filled blocks (capacity {block_count} blocks)"


@dataclass(frozen=True, slots=True)
class DfbWaits:
    """A DFB as a compiled kernel's wait description reads it, without the DFB: in a worker
    process (``tilewright.distributed``) the circular buffer is the replica core's."""

    name: str
    index: int
    block_pages: int
    block_count: int

    def on(self, core) -> _BoundDfbWaits:
        return _BoundDfbWaits(self, core)


@dataclass(frozen=True, slots=True)
class _BoundDfbWaits:
    dfb: DfbWaits
    core: Any  # the replica's Core

    def describe_wait(self, detail: object) -> str:
        op, _need = cast(tuple[str, int], detail)
        d = self.dfb
        return wait_text(op, d.name, d.block_pages, d.block_count, self.core.cbs[d.index])


@dataclass(frozen=True, slots=True)
class _Side:
    """An acquisition side (``rules.Side``) with the block contexts and initial state."""

    side: rules.Side
    compute_context: Context
    dm_context: Context
    initial: State


_PRODUCER = _Side(rules.RESERVE, Context.CK_RESERVE, Context.DM_RESERVE, State.MW)
_CONSUMER = _Side(rules.WAIT, Context.CK_WAIT, Context.DM_WAIT, State.MR)


def _position(held: deque, block: TensorBlock) -> int | None:
    for i, b in enumerate(held):
        if b is block:
            return i
    return None


class TensorBlock(BlockOperators):
    """One acquired block of a DFB (spec ``ttl.Block``); Python operators build expressions."""

    __slots__ = ("dfb", "addr", "context", "run", "state", "ror", "pending", "__weakref__")

    def __init__(
        self, dfb: DataflowBuffer, addr: int, context: Context, run: KernelRun, state: State
    ) -> None:
        self.dfb = dfb
        self.addr = addr
        self.context = context
        self.run = run
        self.state = state
        self.ror = 0
        self.pending: list = []  # transfers not waited yet

    # -- facts -------------------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        return self.dfb.shape

    @property
    def dtype(self):
        return self.dfb.dtype

    @property
    def tile(self):
        return self.dfb.tile

    @property
    def nbytes(self) -> int:
        return self.dfb.block_bytes

    @property
    def is_reserve(self) -> bool:
        return self.context in (Context.DM_RESERVE, Context.CK_RESERVE)

    def memory(self) -> np.ndarray:
        """The block's bytes in L1 (a view)."""
        return self.dfb.core.l1[self.addr : self.addr + self.dfb.block_bytes]

    def describe(self) -> str:
        """ "block 'x' (reserved from DFB 'y')", the variable name found only now, on error."""
        name = _variable_name(self)
        acq = "reserved from" if self.is_reserve else "waited from"
        who = f"block '{name}'" if name else "a block"
        return f"{who} ({acq} DFB '{self.dfb.name}')"

    # -- data ------------------------------------------------------------------------------

    def values(self) -> np.ndarray:
        """Decode the block to float32 (logical element layout), without a state change."""
        dfb = self.dfb
        if dfb.tiled:
            *batch, rows, cols = dfb.shape
            r = rows * math.prod(batch)
            mat = decode_block(self.memory(), dfb.data_format, dfb.tile, r, cols)
            th, tw = dfb.tile.height, dfb.tile.width
            return mat.reshape(*batch, rows * th, cols * tw) if batch else mat
        count = math.prod(dfb.shape)
        return (
            decode_elements(self.memory(), dfb.data_format, count)
            .reshape(dfb.shape)
            .astype(np.float32)
        )

    def _value_shape(self) -> tuple[int, ...]:
        """The shape of the block's values (what ``values()`` decodes to)."""
        dfb = self.dfb
        if not dfb.tiled:
            return tuple(dfb.shape)
        *batch, rows, cols = dfb.shape
        return (*batch, rows * dfb.tile.height, cols * dfb.tile.width)

    def write_values(self, values: np.ndarray) -> None:
        dfb = self.dfb
        if dfb.tiled:
            th, tw = dfb.tile.height, dfb.tile.width
            mat = values.reshape(-1, values.shape[-1]) if values.ndim > 2 else values
            if mat.shape[0] % th or mat.shape[1] % tw:
                raise BlockStateError(
                    f"value of shape {values.shape} is not a whole number of tiles"
                )
            data = encode_block(mat, dfb.data_format, dfb.tile)
        else:
            data = encode_elements(values.reshape(-1), dfb.data_format)
        self.memory()[:] = data
        self.dfb.core.notify_write(self.addr, self.addr + data.size)

    def as_block_value(self) -> BlockExpr:
        """The block as an operand of an expression: a read (state transition STORE_SRC)."""
        page = self.dfb.block_bytes // max(1, self.dfb.block_pages)
        return BlockExpr(self.read(), self.shape, self.tile, leaf_bytes=page, tiled=self.dfb.tiled)

    def read(self) -> np.ndarray:
        """Read the block as an operand (state transition STORE_SRC)."""
        self._compute_only(rules.READ)
        check_and_apply(self, Op.STORE_SRC)
        return self.values()

    def store(self, expr: BlockOperators, acc: bool = False) -> None:
        """Materialise a block expression into this block (spec ``Block.store``)."""
        self._compute_only(rules.STORE)
        if acc and self.state != State.MW:  # legacy store(expr, acc=True) (spec < 0.12):
            self.__iadd__(expr)  # accumulates into what earlier stores wrote;
            return  # the first store into a fresh reserve (MW) assigns, as the simulator does
        value = as_value(expr, self.shape)
        rules.check_store_shape(self, value.shape, self.shape)
        # e.g. tiles into a row-major block
        rules.check_store_layout(self, value.data.shape, self._value_shape(), self.dfb.tiled)
        check_and_apply(self, Op.STORE_DST)
        self.write_values(value.data)
        page = self.dfb.block_bytes // max(1, self.dfb.block_pages)
        pipeline.store_block(self.run, value.work, value.leaf_bytes, self.dfb.block_pages, page)

    def __iadd__(self, expr):
        """``block += expr``: read, add, write back (packer accumulation on reserved blocks)."""
        total = evaluate("add", self, expr)
        self.store(total)
        return self

    # -- release -----------------------------------------------------------------------------

    def push(self, *, kernel: object = None) -> None:
        """Publish a reserved block to the consumer (non-blocking)."""
        self.dfb._release(self, Op.PUSH)

    def pop(self, *, kernel: object = None) -> None:
        """Free a waited block for the producer (non-blocking).

        ``kernel=`` names the logical kernel of an otherwise-unused transaction
        (reference C.10): such a block may be popped without being read, as the compiler
        accepts (``unused = dfb.wait(); unused.pop(kernel=...)``).  Without it a block
        must be read first (state MR, the simulator's rule).
        """
        if kernel is not None:  # the transaction is declared unused: nothing to read
            self.state = declared_unused(self.state, self.is_reserve)
        self.dfb._release(self, Op.POP)

    def __enter__(self) -> TensorBlock:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None or self.state == State.OS:
            return
        if self.is_reserve:
            self.push()
        else:
            self.pop()

    # -- transfers -------------------------------------------------------------------------

    def complete_transfers(self) -> None:
        """Wait every transfer still pending on the block (an unwaited copy completes here)."""
        while self.pending:
            self.pending[0].wait()

    def _compute_only(self, what: str) -> None:
        run = ACTIVE.run
        if run is not None:
            rules.check_compute_only(what, run.name, run.kernel_context().kernel.kind == "compute")

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<TensorBlock of {self.dfb.name} @ {self.addr:#x} {self.state.name}>"

    def __str__(self) -> str:  # `print(blk)` in a kernel: the tile contents
        with np.printoptions(precision=4, threshold=64, edgeitems=4, linewidth=120):
            return f"{self.describe()} [{self.state.name}]:\n{self.values()}"


def _variable_name(block: TensorBlock) -> str | None:
    """The user's variable holding ``block``: scan the user's frames (errors only).

    First the running stack, then -- for a suspended kernel in a deadlock report --
    the frames of the block's kernel greenlet.
    """
    g = block.run.greenlet if block.run is not None else None
    for start in (sys._getframe(1), getattr(g, "gr_frame", None)):
        frame = user_frame(start)
        while frame is not None:
            for name, value in frame.f_locals.items():
                if value is block:
                    return name
            frame = user_frame(frame.f_back)
    return None
