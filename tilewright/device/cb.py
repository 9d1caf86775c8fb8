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

The kernel API also follows the pages its own ``cb_reserve_back`` / ``cb_wait_front``
calls open (``reserved`` / ``waited``, cumulative as the calls are: ``reserve_back(n)``
guarantees ``n`` free pages from the write pointer) and holds the calls after them to
those pages -- what a race on hardware, or garbage in the output, would otherwise be:

* ``cb_push_back(cb, n)`` with fewer than ``n`` pages reserved;
* ``cb_pop_front(cb, n)`` with fewer than ``n`` pages waited for;
* packing (``pack_tile``, ``tilize_block`` ...) into a tile slot outside the reservation;
* reading a tile (``copy_tile``, ``add_tiles`` ...) outside the waited pages.

A kernel that opened nothing -- a sharded CB whose pages are already in L1 and are
pushed without a reserve (tt-metal's sharded readers do that), a TT-Lang block the
language layer holds -- is checked against the buffer's occupancy instead (free pages
to write, filled pages to read).  The rules are functions (:func:`push_limit`, ...) the
compiler also applies ahead of time to raw IR functions.

The state is a :class:`~tilewright.device.shared.CBState` in shared memory: native
kernels (``tilewright/native/runtime``) run the same protocol on the same fields and
wait on the same lists, with the same messages (:mod:`tilewright.device.api_messages`).
"""

from __future__ import annotations

from tilewright.device import api_messages as M
from tilewright.device.engine import ACTIVE, SharedQueue
from tilewright.device.formats import TILE_32x32, tile_size_bytes
from tilewright.device.shared import NO_RUN, CBState
from tilewright.errors import FormatError, KernelError

__all__ = [
    "CircularBuffer",
    "check_pop",
    "check_push",
    "read_limit",
    "write_limit",
]

_MASK16 = 0xFFFF
_NO_FORMAT = 0xFF


def unpack_tile_size(
    data_format, tile, page_size: int, *, l1_alignment: int = 16, dram_alignment: int = 32
) -> int:
    """``get_tile_size(cb)``: bytes of one tile of the CB's format and tile shape.

    tt-metal reads ``unpack_tile_size[cb]`` from the CB descriptors its JIT build generates
    (reference digest §4.1, §2.3): a property of the format, not of the page size.  A CB
    whose format has no tile form (no format, raw formats) gives its page size.  The
    Python kernel API, the native runtime (``CBState.tile_bytes``) and the kernel build's
    constexpr CB table all read this one definition.
    """
    if data_format is None:
        return page_size
    try:
        return tile_size_bytes(
            data_format,
            tile or TILE_32x32,
            l1_alignment=l1_alignment,
            dram_alignment=dram_alignment,
        )
    except FormatError:
        return page_size


def check_push(cb: object, n: int, reserved: int) -> int:
    """``cb_push_back(cb, n)`` with ``reserved`` pages reserved: the reservation after it.

    Raises the push-beyond-reservation error when the kernel reserved some pages but
    fewer than ``n`` (a push with nothing reserved is an unreserved push: sharded CBs).
    """
    if 0 < reserved < n:
        raise M.CB_PUSH_UNRESERVED(cb=cb, n=n, reserved=reserved)
    return max(reserved - n, 0)


def check_pop(cb: object, n: int, waited: int) -> int:
    """``cb_pop_front(cb, n)`` with ``waited`` pages waited for: the waited pages after it."""
    if 0 < waited < n:
        raise M.CB_POP_UNWAITED(cb=cb, n=n, waited=waited)
    return max(waited - n, 0)


def read_limit(cb: CBState) -> int:
    """Pages at the front a kernel may read: the waited ones (filled ones if it waited
    for none)."""
    return cb.waited or (cb.received - cb.acked) & _MASK16


def write_limit(cb: CBState) -> int:
    """Pages at the back a kernel may write: the reserved ones (free ones if it reserved
    none)."""
    return cb.reserved or cb.num_pages - ((cb.received - cb.acked) & _MASK16)


def kernel_cb_table(device, circular_buffers, cores) -> tuple[tuple[int, int, int, int, int], ...]:
    """The CB descriptors a kernel's build sees: ``(index, format code, tile bytes, tile
    elements, faces)`` for each CB index configured on any of the kernel's ``cores``.

    tt-metal's JIT build generates them into each kernel (``chlkc_unpack_data_format.h``,
    ``chlkc_unpack_tile_dims.h`` ...: ``unpack_src_format[]``, ``unpack_tile_size[]``), from
    every CB on the kernel's core ranges, and hashes them into the kernel's build key; that
    is what makes ``constexpr uint32_t s = get_tile_size(cb);`` legal.  An index whose
    descriptor differs between the kernel's cores is left out (tt-metal keeps whichever
    its loop saw last, wrong on the other cores): a constexpr use of it is a build error
    here, a run-time call reads the core's own CB.  ``circular_buffers``: the program's
    ``(CoreRangeSet, CircularBufferConfig)`` list.
    """
    align = {"l1_alignment": device.l1_alignment, "dram_alignment": device.dram_alignment}
    seen: dict[int, set[tuple[int, int, int, int]]] = {}
    for where, cfg in circular_buffers:
        if not any(ra.intersects(rb) for ra in where for rb in cores):
            continue
        for index, fmt in cfg.data_formats.items():
            tile = cfg.tiles.get(index) or TILE_32x32
            size = unpack_tile_size(fmt, tile, cfg.page_sizes[index], **align)
            code = _NO_FORMAT if fmt is None else int(fmt)
            seen.setdefault(index, set()).add((code, size, tile.num_elements, tile.num_faces))
    return tuple((i, *next(iter(d))) for i, d in sorted(seen.items()) if len(d) == 1)


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
        device = getattr(core, "device", None)
        align = {}
        if device is not None:
            align = {"l1_alignment": device.l1_alignment, "dram_alignment": device.dram_alignment}
        self.tile_bytes = unpack_tile_size(data_format, tile, page_size, **align)
        self.received = self.acked = 0
        self.wr_ptr = self.rd_ptr = fifo_addr
        self.pack_counter = self.reserved = self.waited = 0
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

    # -- producer ------------------------------------------------------------------------

    def reserve_back(self, n: int) -> None:
        """``cb_reserve_back``: block until ``n`` pages are free; they are then reserved."""
        num_pages = self._pages
        if n > num_pages:
            raise M.CB_RESERVE_NEVER(cb=self, n=n, pages=num_pages)
        while num_pages - ((self.received - self.acked) & _MASK16) < n:
            engine = ACTIVE.engine  # not current_engine(): a call less on the hot path
            if engine is None:
                raise KernelError(f"cb_reserve_back({self.name}, {n}) waits outside a kernel")
            engine.block(self.back_q, self, ("reserve", n))
        if n > self.reserved:
            self.reserved = n

    def push_reserved(self, n: int) -> None:
        """``cb_push_back``: hand over ``n`` pages the kernel API reserved (or, with nothing
        reserved, ``n`` pages filled another way)."""
        filled = (self.received - self.acked) & _MASK16
        if filled + n > self._pages:
            raise M.CB_PUSH_OVERFLOW(cb=self, n=n, filled=filled, pages=self._pages)
        self.reserved = check_push(self, n, self.reserved)
        self._advance_write(n)

    def push_back(self, n: int) -> None:
        """Hand ``n`` pages to the consumer (the FIFO mechanics; TT-Lang blocks push here)."""
        filled = (self.received - self.acked) & _MASK16
        if filled + n > self._pages:
            raise M.CB_PUSH_OVERFLOW(cb=self, n=n, filled=filled, pages=self._pages)
        self._advance_write(n)

    def _advance_write(self, n: int) -> None:
        wr = self.wr_ptr + n * self._page_size
        limit = self._limit
        if wr == limit:
            wr = self._base
        elif wr > limit:
            raise M.CB_PUSH_WRAP(cb=self, n=n, pages=self._pages, ptr=self.wr_ptr, limit=limit)
        self.wr_ptr = wr
        self.received = (self.received + n) & _MASK16
        self.pack_counter = 0
        if self._front.head != NO_RUN:
            self.front_q.wake()

    # -- consumer ------------------------------------------------------------------------

    def wait_front(self, n: int) -> None:
        """``cb_wait_front``: block until ``n`` pages are filled; they are then waited."""
        if n > self._pages:
            raise M.CB_WAIT_NEVER(cb=self, n=n, pages=self._pages)
        while ((self.received - self.acked) & _MASK16) < n:
            engine = ACTIVE.engine  # not current_engine(): a call less on the hot path
            if engine is None:
                raise KernelError(f"cb_wait_front({self.name}, {n}) waits outside a kernel")
            engine.block(self.front_q, self, ("wait", n))
        if n > self.waited:
            self.waited = n

    def pop_waited(self, n: int) -> None:
        """``cb_pop_front``: release ``n`` pages the kernel API waited for (or, with nothing
        waited, ``n`` filled pages)."""
        filled = (self.received - self.acked) & _MASK16
        if n > filled:
            raise M.CB_POP_UNPUSHED(cb=self, n=n, filled=filled)
        self.waited = check_pop(self, n, self.waited)
        self._advance_read(n)

    def pop_front(self, n: int) -> None:
        """Release ``n`` pages to the producer (the FIFO mechanics; TT-Lang blocks pop here)."""
        filled = (self.received - self.acked) & _MASK16
        if n > filled:
            raise M.CB_POP_UNPUSHED(cb=self, n=n, filled=filled)
        self._advance_read(n)

    def _advance_read(self, n: int) -> None:
        rd = self.rd_ptr + n * self._page_size
        limit = self._limit
        if rd == limit:
            rd = self._base
        elif rd > limit:
            raise M.CB_POP_WRAP(cb=self, n=n, pages=self._pages, ptr=self.rd_ptr, limit=limit)
        self.rd_ptr = rd
        self.acked = (self.acked + n) & _MASK16
        if self._back.head != NO_RUN:
            self.back_q.wake()

    def reset_interface(self) -> None:
        """Empty the interface: pointers to the base, counters and the protocol state to 0."""
        self.wr_ptr = self.rd_ptr = self.fifo_addr
        self.received = self.acked = 0
        self.pack_counter = self.reserved = self.waited = 0

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
