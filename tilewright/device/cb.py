"""Circular buffers with tt-metal semantics.

A circular buffer (CB) is a FIFO of ``num_pages`` pages of ``page_size`` bytes at
L1 address ``fifo_addr`` on one core, shared by the kernels of that core.  State is
what the hardware keeps: 16-bit ``pages_received`` / ``pages_acked`` counters and the
write / read pointers as L1 addresses (tt-metal ``dataflow_api.h``, ``cb_api.h``):

* ``reserve_back(n)`` blocks until ``num_pages - (received - acked) >= n``;
* ``push_back(n)``: ``received += n``, ``wr_ptr += n * page_size``, wrapping to the
  base only when exactly at the limit;
* ``wait_front(n)`` blocks until ``received - acked >= n`` (cumulative);
* ``pop_front(n)``: ``acked += n``, ``rd_ptr`` advances likewise.

What the hardware silently corrupts is an error here: reserving more pages than
exist (would block forever), pushing or popping past the FIFO's end (pushes in one
cycle must sum to the page count), pushing more pages than are free, popping pages
that were never pushed.

The state is a :class:`~tilewright.device.shared.CBState` in shared memory: native
kernels (``tilewright/native/runtime``) run the same protocol on the same fields and
wait on the same lists, with the same messages (:data:`CB_ERRORS`).
"""

from __future__ import annotations

from tilewright.device.engine import ACTIVE, SharedQueue
from tilewright.device.shared import NO_RUN, CBState
from tilewright.errors import DFBContractError, KernelError

__all__ = ["CircularBuffer", "CB_ERRORS", "cb_error"]

_MASK16 = 0xFFFF
_NO_FORMAT = 0xFF


CB_ERRORS: dict[int, str] = {
    1: "cb_reserve_back({cb}, {n}) can never succeed: the buffer has only {pages} pages",
    2: (
        "cb_push_back({cb}, {n}) overflows the buffer: {filled} of {pages} pages are already filled"
    ),
    3: (
        "cb_push_back({cb}, {n}) crosses the end of the FIFO: pushes must sum to exactly "
        "{pages} pages per cycle (write pointer {ptr:#x}, limit {limit:#x})"
    ),
    4: "cb_wait_front({cb}, {n}) can never succeed: the buffer has only {pages} pages",
    5: "cb_pop_front({cb}, {n}) pops pages that were never pushed: only {filled} pages are filled",
    6: (
        "cb_pop_front({cb}, {n}) crosses the end of the FIFO: pops must sum to exactly "
        "{pages} pages per cycle (read pointer {ptr:#x}, limit {limit:#x})"
    ),
}
"""Protocol errors by code (the native runtime reports the same codes)."""


def cb_error(code: int, cb: str, n: int, pages: int, filled: int, ptr: int, limit: int) -> str:
    """The message of protocol error ``code`` on the CB named ``cb``."""
    return CB_ERRORS[code].format(cb=cb, n=n, pages=pages, filled=filled, ptr=ptr, limit=limit)


class CircularBuffer(CBState):
    """The runtime state of one circular-buffer index on one core.

    ``CircularBuffer(core, index, ...)`` owns its state (tests, standalone use);
    :meth:`in_shared` places it in a device's shared CB table.
    """

    # Slots, not an instance dict: attribute and field access both stay fast (~3x).
    __slots__ = (
        "core",
        "index",
        "name",
        "data_format",
        "tile",
        "_front",
        "_back",
        "front_q",
        "back_q",
    )

    def __init__(
        self,
        core,
        index: int,
        fifo_addr: int,
        fifo_size: int,
        page_size: int,
        data_format=None,
        tile=None,
        name: str | None = None,
    ) -> None:
        super().__init__()
        self._setup(core, index, fifo_addr, fifo_size, page_size, data_format, tile, name)

    @classmethod
    def in_shared(cls, table, offset: int, *args, **kwargs) -> CircularBuffer:
        """A CB whose state is the ``CBState`` at byte ``offset`` of ``table``."""
        cb = cls.from_buffer(table, offset)
        cb._setup(*args, **kwargs)
        return cb

    def _setup(
        self,
        core,
        index: int,
        fifo_addr: int,
        fifo_size: int,
        page_size: int,
        data_format=None,
        tile=None,
        name: str | None = None,
    ) -> None:
        self.core = core
        self.index = index
        self.name = name or f"cb {index}"
        self.data_format = data_format
        self.tile = tile
        self.fifo_addr = fifo_addr
        self.fifo_size = fifo_size
        self.page_size = page_size
        self.num_pages = self._pages = fifo_size // page_size
        self.fifo_limit = self._limit = fifo_addr + self._pages * page_size
        self._base = fifo_addr
        self._page_size = page_size
        self.format_code = _NO_FORMAT if data_format is None else int(data_format)
        if tile is not None:
            self.tile_h, self.tile_w, self.tile_faces = tile.height, tile.width, tile.num_faces
        else:
            self.tile_h, self.tile_w, self.tile_faces = 32, 32, 4
        self.received = self.acked = 0
        self.wr_ptr = self.rd_ptr = fifo_addr
        self.pack_counter = 0
        self._front = self.front_waiters  # cached views: a nested field access builds one
        self._back = self.back_waiters
        self._front.head = self._front.tail = self._back.head = self._back.tail = NO_RUN
        self.front_q = SharedQueue(self._front)
        self.back_q = SharedQueue(self._back)
        self.configured = 1

    # -- occupancy -----------------------------------------------------------------------

    @property
    def pages_filled(self) -> int:
        return (self.received - self.acked) & _MASK16

    @property
    def pages_free(self) -> int:
        return self.num_pages - ((self.received - self.acked) & _MASK16)

    def _error(self, code: int, n: int, ptr: int = 0) -> DFBContractError:
        return DFBContractError(
            cb_error(code, self.name, n, self.num_pages, self.pages_filled, ptr, self.fifo_limit)
        )

    # -- producer ------------------------------------------------------------------------

    def reserve_back(self, n: int) -> None:
        num_pages = self._pages
        if n > num_pages:
            raise self._error(1, n)
        while num_pages - ((self.received - self.acked) & _MASK16) < n:
            engine = ACTIVE.engine  # not current_engine(): a call less on the hot path
            if engine is None:
                raise KernelError(f"cb_reserve_back({self.name}, {n}) waits outside a kernel")
            engine.block(self.back_q, self, ("reserve", n))

    def push_back(self, n: int) -> None:
        filled = (self.received - self.acked) & _MASK16
        if filled + n > self._pages:
            raise self._error(2, n)
        wr = self.wr_ptr + n * self._page_size
        limit = self._limit
        if wr == limit:
            wr = self._base
        elif wr > limit:
            raise self._error(3, n, self.wr_ptr)
        self.wr_ptr = wr
        self.received = (self.received + n) & _MASK16
        self.pack_counter = 0
        if self._front.head != NO_RUN:
            self.front_q.wake()

    # -- consumer ------------------------------------------------------------------------

    def wait_front(self, n: int) -> None:
        if n > self._pages:
            raise self._error(4, n)
        while ((self.received - self.acked) & _MASK16) < n:
            engine = ACTIVE.engine  # not current_engine(): a call less on the hot path
            if engine is None:
                raise KernelError(f"cb_wait_front({self.name}, {n}) waits outside a kernel")
            engine.block(self.front_q, self, ("wait", n))

    def pop_front(self, n: int) -> None:
        filled = (self.received - self.acked) & _MASK16
        if n > filled:
            raise self._error(5, n)
        rd = self.rd_ptr + n * self._page_size
        limit = self._limit
        if rd == limit:
            rd = self._base
        elif rd > limit:
            raise self._error(6, n, self.rd_ptr)
        self.rd_ptr = rd
        self.acked = (self.acked + n) & _MASK16
        if self._back.head != NO_RUN:
            self.back_q.wake()

    # -- diagnostics ---------------------------------------------------------------------

    def describe_wait(self, detail) -> str:
        op, n = detail
        call = "cb_reserve_back" if op == "reserve" else "cb_wait_front"
        return (
            f"{call}({self.name}, {n}): {self.pages_filled} of {self.num_pages} pages filled "
            f"(received {self.received}, acked {self.acked})"
        )

    def __repr__(self) -> str:
        return (
            f"<CircularBuffer {self.name} @ {self.fifo_addr:#x} {self.num_pages}x{self.page_size}B "
            f"filled={self.pages_filled}>"
        )
