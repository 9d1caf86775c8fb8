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
"""

from __future__ import annotations

from tilewright.device.engine import ACTIVE, WaitQueue
from tilewright.errors import DFBContractError, KernelError

__all__ = ["CircularBuffer"]

_MASK16 = 0xFFFF


class CircularBuffer:
    """The runtime state of one circular-buffer index on one core."""

    __slots__ = (
        "core",
        "index",
        "name",
        "fifo_addr",
        "fifo_size",
        "fifo_limit",
        "num_pages",
        "page_size",
        "data_format",
        "tile",
        "received",
        "acked",
        "wr_ptr",
        "rd_ptr",
        "pack_counter",
        "back_q",
        "front_q",
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
        self.core = core
        self.index = index
        self.name = name or f"cb {index}"
        self.fifo_addr = fifo_addr
        self.fifo_size = fifo_size
        self.page_size = page_size
        self.num_pages = fifo_size // page_size
        self.fifo_limit = fifo_addr + self.num_pages * page_size
        self.data_format = data_format
        self.tile = tile
        self.received = 0
        self.acked = 0
        self.wr_ptr = fifo_addr
        self.rd_ptr = fifo_addr
        self.pack_counter = 0
        self.back_q = WaitQueue()
        self.front_q = WaitQueue()

    # -- occupancy -----------------------------------------------------------------------

    @property
    def pages_filled(self) -> int:
        return (self.received - self.acked) & _MASK16

    @property
    def pages_free(self) -> int:
        return self.num_pages - ((self.received - self.acked) & _MASK16)

    # -- producer ------------------------------------------------------------------------

    def reserve_back(self, n: int) -> None:
        if n > self.num_pages:
            raise DFBContractError(
                f"cb_reserve_back({self.name}, {n}) can never succeed: "
                f"the buffer has only {self.num_pages} pages"
            )
        while self.num_pages - ((self.received - self.acked) & _MASK16) < n:
            engine = ACTIVE.engine  # not current_engine(): a call less on the hot path
            if engine is None:
                raise KernelError(f"cb_reserve_back({self.name}, {n}) waits outside a kernel")
            engine.block(self.back_q, self, ("reserve", n))

    def push_back(self, n: int) -> None:
        filled = (self.received - self.acked) & _MASK16
        if filled + n > self.num_pages:
            raise DFBContractError(
                f"cb_push_back({self.name}, {n}) overflows the buffer: "
                f"{filled} of {self.num_pages} pages are already filled"
            )
        wr = self.wr_ptr + n * self.page_size
        if wr == self.fifo_limit:
            wr = self.fifo_addr
        elif wr > self.fifo_limit:
            raise DFBContractError(
                f"cb_push_back({self.name}, {n}) crosses the end of the FIFO: pushes must "
                f"sum to exactly {self.num_pages} pages per cycle (write pointer "
                f"{self.wr_ptr:#x}, limit {self.fifo_limit:#x})"
            )
        self.wr_ptr = wr
        self.received = (self.received + n) & _MASK16
        self.pack_counter = 0
        if self.front_q.waiters:
            self.front_q.wake()

    # -- consumer ------------------------------------------------------------------------

    def wait_front(self, n: int) -> None:
        if n > self.num_pages:
            raise DFBContractError(
                f"cb_wait_front({self.name}, {n}) can never succeed: "
                f"the buffer has only {self.num_pages} pages"
            )
        while ((self.received - self.acked) & _MASK16) < n:
            engine = ACTIVE.engine  # not current_engine(): a call less on the hot path
            if engine is None:
                raise KernelError(f"cb_wait_front({self.name}, {n}) waits outside a kernel")
            engine.block(self.front_q, self, ("wait", n))

    def pop_front(self, n: int) -> None:
        filled = (self.received - self.acked) & _MASK16
        if n > filled:
            raise DFBContractError(
                f"cb_pop_front({self.name}, {n}) pops pages that were never pushed: "
                f"only {filled} pages are filled"
            )
        rd = self.rd_ptr + n * self.page_size
        if rd == self.fifo_limit:
            rd = self.fifo_addr
        elif rd > self.fifo_limit:
            raise DFBContractError(
                f"cb_pop_front({self.name}, {n}) crosses the end of the FIFO: pops must "
                f"sum to exactly {self.num_pages} pages per cycle (read pointer "
                f"{self.rd_ptr:#x}, limit {self.fifo_limit:#x})"
            )
        self.rd_ptr = rd
        self.acked = (self.acked + n) & _MASK16
        if self.back_q.waiters:
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
