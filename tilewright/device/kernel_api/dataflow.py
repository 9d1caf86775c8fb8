"""tt-metal's data-movement kernel API (``api/dataflow/dataflow_api.h``) for Python kernels.

Every function acts on the kernel that is running now (``ACTIVE.run``), with the
semantics of the C++ API: runtime and compile-time args, circular buffers, NoC
reads and writes (unicast, page-wise through address generators, multicast),
barriers and semaphores.  L1 addresses are local device addresses; pointers in
native code are the same addresses in host form and are accepted everywhere an
L1 address is.  Semaphore "pointers" are L1 addresses here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tilewright.device import api_messages as M
from tilewright.device.engine import ACTIVE, current_engine
from tilewright.device.formats import TILE_32x32
from tilewright.device.kernel_config import NUM_SEMAPHORES
from tilewright.device.noc import noc_multicast_addr, noc_xy_addr
from tilewright.device.perf import costs, pipeline
from tilewright.device.perf import kernel as noc_time
from tilewright.device.transfer import (
    check_range,
    multicast_targets,
    noc_copy,
    resolve,
)
from tilewright.errors import DeviceError, KernelError, NocError

if TYPE_CHECKING:
    from tilewright.device.device import Core
    from tilewright.device.launch import KernelContext

__all__ = [
    "get_arg_val",
    "get_common_arg_val",
    "get_arg_addr",
    "get_common_arg_addr",
    "get_compile_time_arg_val",
    "get_absolute_logical_x",
    "get_absolute_logical_y",
    "get_relative_logical_x",
    "get_relative_logical_y",
    "my_x",
    "my_y",
    "cb_reserve_back",
    "cb_push_back",
    "cb_wait_front",
    "cb_pop_front",
    "get_write_ptr",
    "get_read_ptr",
    "cb_pages_reservable_at_back",
    "cb_pages_available_at_front",
    "get_tile_size",
    "get_tile_hw",
    "get_tile_num_faces",
    "get_dataformat",
    "get_local_cb_interface",
    "LocalCBInterface",
    "get_noc_addr",
    "get_noc_addr_from_bank_id",
    "get_noc_multicast_addr",
    "noc_async_read",
    "noc_async_read_one_packet",
    "noc_async_write",
    "noc_async_write_one_packet",
    "noc_async_read_page",
    "noc_async_write_page",
    "noc_async_read_tile",
    "noc_async_write_tile",
    "noc_async_read_shard",
    "noc_async_write_shard",
    "noc_async_write_multicast",
    "noc_async_write_multicast_loopback_src",
    "noc_async_read_barrier",
    "noc_async_write_barrier",
    "noc_async_writes_flushed",
    "noc_async_posted_writes_flushed",
    "noc_async_atomic_barrier",
    "noc_async_full_barrier",
    "noc_inline_dw_write",
    "get_semaphore",
    "noc_semaphore_set",
    "noc_semaphore_wait",
    "noc_semaphore_wait_min",
    "noc_semaphore_inc",
    "noc_semaphore_inc_multicast",
    "noc_semaphore_set_remote",
    "noc_semaphore_set_multicast",
    "noc_semaphore_set_multicast_loopback_src",
    "read_l1",
    "write_l1",
    "circular_buffer",
]


def _ctx():
    run = ACTIVE.run
    if run is None:
        raise KernelError("the kernel API can only be called from inside a running kernel")
    return run.context


def _run():
    run = ACTIVE.run
    if run is None:  # checked inline: every kernel API call ticks
        raise KernelError("the kernel API can only be called from inside a running kernel")
    return run


def _tick(cycles: int) -> None:
    run = _run()
    run.clock += cycles
    run.stats_ops += 1


def _noc(ctx, noc: int) -> int:
    """The NoC a transfer uses: the argument, or the kernel's own (tt-metal's default
    ``noc = noc_index``; 0 is also the argument's default here)."""
    return noc or ctx.noc


# -- args and identity -----------------------------------------------------------------------


def get_arg_val(index: int) -> int:
    """Per-core runtime argument ``index`` (uint32)."""
    ctx = _ctx()
    if not 0 <= index < len(ctx.args):
        raise M.ARG_RANGE(
            index=index, kernel=ctx.kernel.name, core=ctx.core.logical, count=len(ctx.args)
        )
    return ctx.args[index]


def get_common_arg_val(index: int) -> int:
    ctx = _ctx()
    if not 0 <= index < len(ctx.common_args):
        raise M.COMMON_ARG_RANGE(index=index, kernel=ctx.kernel.name, count=len(ctx.common_args))
    return ctx.common_args[index]


def get_arg_addr(index: int) -> int:
    return _ctx().rta_addr + 4 * index


def get_common_arg_addr(index: int) -> int:
    return _ctx().crta_addr + 4 * index


def get_compile_time_arg_val(index: int) -> int:
    ctx = _ctx()
    if not 0 <= index < len(ctx.compile_args):
        raise M.COMPILE_ARG_RANGE(index=index, kernel=ctx.kernel.name, count=len(ctx.compile_args))
    return ctx.compile_args[index]


def get_absolute_logical_x() -> int:
    return _ctx().core.logical.x


def get_absolute_logical_y() -> int:
    return _ctx().core.logical.y


get_relative_logical_x = get_absolute_logical_x
get_relative_logical_y = get_absolute_logical_y


def my_x(noc: int = 0) -> int:
    """This core's NoC x coordinate (``my_x[noc]`` in C++)."""
    return _ctx().core.noc_x


def my_y(noc: int = 0) -> int:
    return _ctx().core.noc_y


# -- circular buffers ----------------------------------------------------------------------


def circular_buffer(cb_id: int):
    """The CircularBuffer object of index ``cb_id`` on this core."""
    ctx = _ctx()
    try:
        cb = ctx.core.cbs[cb_id]
    except (IndexError, TypeError):
        cb = None
    if cb is None:
        raise M.CB_NOT_CONFIGURED(index=cb_id, core=ctx.core.logical)
    return cb


def _cb_call(cb_id: int, num_pages: int, stage: int, method: str) -> None:
    """A CB call on the processor that makes it (compute kernels: unpack waits and pops,
    pack reserves and pushes), which blocks and wakes at that processor's clock."""
    cb = circular_buffer(cb_id)
    run = _run()
    pr = pipeline.enter(run, stage)
    getattr(cb, method)(num_pages)
    pipeline.leave(run, pr, stage)


def cb_reserve_back(cb_id: int, num_pages: int) -> None:
    """Block until ``num_pages`` are free at the back; they are the kernel's reservation."""
    _cb_call(cb_id, num_pages, pipeline.PACK, "reserve_back")


def cb_push_back(cb_id: int, num_pages: int) -> None:
    """Hand ``num_pages`` reserved pages to the consumer (device/cb.py: the checks)."""
    _cb_call(cb_id, num_pages, pipeline.PACK, "push_reserved")


def cb_wait_front(cb_id: int, num_pages: int) -> None:
    """Block until ``num_pages`` are filled at the front (cumulative: waits without pops ask
    for more each time)."""
    _cb_call(cb_id, num_pages, pipeline.UNPACK, "wait_front")


def cb_pop_front(cb_id: int, num_pages: int) -> None:
    """Release ``num_pages`` waited pages to the producer."""
    _cb_call(cb_id, num_pages, pipeline.UNPACK, "pop_waited")


def get_write_ptr(cb_id: int) -> int:
    return circular_buffer(cb_id).wr_ptr


def get_read_ptr(cb_id: int) -> int:
    return circular_buffer(cb_id).rd_ptr


def _reservable(cb, num_pages: int) -> bool:
    if cb.pages_free < num_pages:
        return False
    cb.reserved = max(cb.reserved, num_pages)  # a true answer reserves, as a reserve would
    return True


def _available(cb, num_pages: int) -> bool:
    if cb.pages_filled < num_pages:
        return False
    cb.waited = max(cb.waited, num_pages)  # a true answer is a wait that returned
    return True


def cb_pages_reservable_at_back(cb_id: int, num_pages: int) -> bool:
    """Whether ``num_pages`` are free now (a false answer lets the other kernels run)."""
    cb = circular_buffer(cb_id)
    if _reservable(cb, num_pages):
        return True
    current_engine().poll_yield(cb, ("reserve", num_pages))
    return _reservable(cb, num_pages)


def cb_pages_available_at_front(cb_id: int, num_pages: int) -> bool:
    """Whether ``num_pages`` are filled now (a false answer lets the other kernels run)."""
    cb = circular_buffer(cb_id)
    if _available(cb, num_pages):
        return True
    current_engine().poll_yield(cb, ("wait", num_pages))
    return _available(cb, num_pages)


def get_tile_size(cb_id: int) -> int:
    """Bytes of one tile of the CB's format and tile shape (``device.cb.unpack_tile_size``:
    tt-metal's ``unpack_tile_size[cb]``, a property of the format, not of the page size)."""
    return circular_buffer(cb_id).tile_bytes


def get_tile_hw(cb_id: int) -> int:
    """Elements of one tile of the CB (``unpack_tile_r_dim * unpack_tile_c_dim``)."""
    return (circular_buffer(cb_id).tile or TILE_32x32).num_elements


def get_tile_num_faces(cb_id: int) -> int:
    """Faces of one tile of the CB (``unpack_tile_num_faces``: 4 for 32x32, 2 for 16x32 ...)."""
    return (circular_buffer(cb_id).tile or TILE_32x32).num_faces


def get_dataformat(cb_id: int):
    return circular_buffer(cb_id).data_format


class LocalCBInterface:
    """A snapshot of a CB interface, as tt-metal's ``LocalCBInterface`` names its fields."""

    __slots__ = (
        "fifo_size",
        "fifo_limit",
        "fifo_page_size",
        "fifo_num_pages",
        "fifo_rd_ptr",
        "fifo_wr_ptr",
        "tiles_acked",
        "tiles_received",
    )

    def __init__(self, cb) -> None:
        self.fifo_size = cb.fifo_size
        self.fifo_limit = cb.fifo_limit
        self.fifo_page_size = cb.page_size
        self.fifo_num_pages = cb.num_pages
        self.fifo_rd_ptr = cb.rd_ptr
        self.fifo_wr_ptr = cb.wr_ptr
        self.tiles_acked = cb.acked
        self.tiles_received = cb.received


def get_local_cb_interface(cb_id: int) -> LocalCBInterface:
    """The CB's interface fields now (read only)."""
    return LocalCBInterface(circular_buffer(cb_id))


# -- NoC addresses -----------------------------------------------------------------------------


def get_noc_addr(*args, noc: int = 0) -> int:
    """``get_noc_addr(x, y, addr)``, ``get_noc_addr(addr)`` or ``get_noc_addr(page_id, addrgen[, offset])``."""
    if len(args) >= 2 and hasattr(args[1], "get_noc_addr"):
        page_id, gen = args[0], args[1]
        offset = args[2] if len(args) > 2 else 0
        return gen.get_noc_addr(page_id, offset)
    if len(args) == 1:
        ctx = _ctx()
        core = ctx.core
        return noc_xy_addr(core.noc_x, core.noc_y, _resolve_local(ctx, args[0]), ctx.device.chip)
    if len(args) == 3:
        x, y, addr = args
        return noc_xy_addr(x, y, addr, _ctx().device.chip)
    raise KernelError(f"get_noc_addr: unsupported arguments {args!r}")


def _resolve_local(ctx, addr: int) -> int:
    """A local L1 address of this core (the check the C++ kernel API makes)."""
    core = ctx.core
    try:
        return ctx.device.resolve_local(core, addr)
    except DeviceError:
        raise M.NOT_L1_ADDRESS(addr=addr, core=core.logical, l1=ctx.device.l1_size) from None


def get_noc_addr_from_bank_id(
    bank_id: int, bank_offset: int, noc: int = 0, dram: bool = True
) -> int:
    """``get_noc_addr_from_bank_id<DRAM>(bank_id, bank_address_offset, noc)``."""
    device = _ctx().device
    if dram:
        if not 0 <= bank_id < device.num_dram_channels:
            raise M.BANK_RANGE(kind="DRAM", bank=bank_id, count=device.num_dram_channels)
        x, y = device.dram_noc_coord(bank_id)
    else:
        if not 0 <= bank_id < device.num_l1_banks:
            raise M.BANK_RANGE(kind="L1", bank=bank_id, count=device.num_l1_banks)
        core = device.cores[bank_id]
        x, y = core.noc_x, core.noc_y
    return noc_xy_addr(x, y, bank_offset, device.chip)


def get_noc_multicast_addr(
    x_start: int, y_start: int, x_end: int, y_end: int, addr: int, noc: int = 0
) -> int:
    return noc_multicast_addr(x_start, y_start, x_end, y_end, addr)


# -- NoC transfers ---------------------------------------------------------------------------


def _local(ctx, addr: int, size: int, what: str) -> tuple:
    core = ctx.core
    local = _resolve_local(ctx, addr)
    if size <= 0 or local + size > ctx.device.l1_size:
        raise M.NOC_LOCAL_RANGE(what=what, start=local, end=local + size, core=core.logical)
    return core.l1, local, core


def noc_async_read(
    src_noc_addr: int,
    dst_local_l1_addr: int,
    size: int,
    noc: int = 0,
    max_page_size: int = 8192 + 1,
    enable_noc_tracing: bool = True,
) -> None:
    """Copy ``size`` bytes from a NoC address (DRAM or L1) into this core's L1.

    ``max_page_size`` / ``enable_noc_tracing`` are tt-metal's template parameters (packet
    splitting and tracing): the emulated NoC moves the bytes the same way regardless."""
    ctx = _ctx()
    what = "noc_async_read"
    src = resolve(ctx.device, src_noc_addr, size, what)
    dst = _local(ctx, dst_local_l1_addr, size, what)
    noc_copy(ctx.device, src, dst, size, what)
    noc_time.read(_run(), ctx.core, src[2], size, _noc(ctx, noc))


def noc_async_read_one_packet(
    src_noc_addr: int,
    dst_local_l1_addr: int,
    size: int,
    noc: int = 0,
    enable_noc_tracing: bool = True,
) -> None:
    """noc_async_read of one packet (at most NOC_MAX_BURST_SIZE bytes on hardware)."""
    noc_async_read(src_noc_addr, dst_local_l1_addr, size, noc)


def noc_async_write(
    src_local_l1_addr: int,
    dst_noc_addr: int,
    size: int,
    noc: int = 0,
    max_page_size: int = 8192 + 1,
    enable_noc_tracing: bool = True,
    posted: bool = False,
) -> None:
    """Copy ``size`` bytes from this core's L1 to a NoC address (template parameters: as
    noc_async_read's; ``posted`` writes are not acknowledged, the emulated NoC lands them
    at issue either way)."""
    ctx = _ctx()
    what = "noc_async_write"
    src = _local(ctx, src_local_l1_addr, size, what)
    dst = resolve(ctx.device, dst_noc_addr, size, what)
    run = _run()
    landed = noc_time.write(run, ctx.core, dst[2], size, _noc(ctx, noc))
    noc_time.wake_at(run, landed, lambda: noc_copy(ctx.device, src, dst, size, what))


def noc_async_write_one_packet(
    src_local_l1_addr: int,
    dst_noc_addr: int,
    size: int,
    noc: int = 0,
    enable_noc_tracing: bool = True,
    posted: bool = False,
) -> None:
    """noc_async_write of one packet."""
    noc_async_write(src_local_l1_addr, dst_noc_addr, size, noc)


def noc_async_read_page(
    page_id: int, addrgen, dst_local_l1_addr: int, offset: int = 0, noc: int = 0
) -> None:
    noc_async_read(
        addrgen.get_noc_addr(page_id, offset), dst_local_l1_addr, addrgen.page_size_bytes()
    )


def noc_async_write_page(
    page_id: int, addrgen, src_local_l1_addr: int, size: int = 0, offset: int = 0, noc: int = 0
) -> None:
    size = size or addrgen.page_size_bytes()
    noc_async_write(src_local_l1_addr, addrgen.get_noc_addr(page_id, offset), size)


noc_async_read_tile = noc_async_read_page
noc_async_write_tile = noc_async_write_page


def noc_async_read_shard(shard_id: int, accessor, dst_local_l1_addr: int, noc: int = 0) -> None:
    """Read shard ``shard_id`` of a sharded TensorAccessor: aligned page size x shard volume."""
    noc_async_read(accessor.get_shard_noc_addr(shard_id), dst_local_l1_addr, accessor.shard_bytes())


def noc_async_write_shard(shard_id: int, accessor, src_local_l1_addr: int, noc: int = 0) -> None:
    """Write a whole shard of a sharded TensorAccessor from L1."""
    noc_async_write(
        src_local_l1_addr, accessor.get_shard_noc_addr(shard_id), accessor.shard_bytes()
    )


# -- per-run register state ------------------------------------------------------------------


def api_state(ctx) -> dict:
    """Per-kernel-run register state of the kernel API (NoC command buffers, packer flags)."""
    if ctx.api is None:
        ctx.api = {}
    return ctx.api


def _multicast(
    src_local_l1_addr, mcast_addr, size, num_dests, include_self, what, linked=False, noc=0
) -> None:
    ctx = _ctx()
    src = _local(ctx, src_local_l1_addr, size, what)
    cores, local = multicast_targets(ctx.device, ctx.core, mcast_addr, include_self, what)
    if num_dests != len(cores):
        which = " (including the sender)" if include_self else " (excluding the sender)"
        raise M.MCAST_DESTS(what=what, num_dests=num_dests, count=len(cores), which=which)
    for core in cores:
        check_range(ctx.device, core, local, local + size, what)
    run = _run()
    landed = noc_time.multicast(run, ctx.core, cores, size, _noc(ctx, noc), bool(linked))

    def deliver() -> None:
        for core in cores:
            noc_copy(ctx.device, src, (core.l1, local, core), size, what)

    noc_time.wake_at(run, landed, deliver)


def noc_async_write_multicast(
    src_local_l1_addr: int,
    dst_noc_addr_multicast: int,
    size: int,
    num_dests: int,
    linked: bool = False,
    noc: int = 0,
) -> None:
    """Write to every worker in the rectangle except the sender (``num_dests`` excludes it)."""
    _multicast(
        src_local_l1_addr,
        dst_noc_addr_multicast,
        size,
        num_dests,
        False,
        "noc_async_write_multicast",
        linked,
        noc,
    )


def noc_async_write_multicast_loopback_src(
    src_local_l1_addr: int,
    dst_noc_addr_multicast: int,
    size: int,
    num_dests: int,
    linked: bool = False,
    noc: int = 0,
) -> None:
    """Write to every worker in the rectangle including the sender."""
    _multicast(
        src_local_l1_addr,
        dst_noc_addr_multicast,
        size,
        num_dests,
        True,
        "noc_async_write_multicast_loopback_src",
        linked,
        noc,
    )


def noc_async_read_barrier(noc: int = 0) -> None:
    """Wait for the kernel's transfers on its NoC to complete.  Reads and writes alike: the
    native runtime sees one barrier call (kernels that read do not also write, as a rule)."""
    ctx = _ctx()
    noc_time.barrier(_run(), ctx.core, _noc(ctx, noc))


def noc_async_write_barrier(noc: int = 0) -> None:
    ctx = _ctx()
    noc_time.barrier(_run(), ctx.core, _noc(ctx, noc))


noc_async_writes_flushed = noc_async_write_barrier
noc_async_posted_writes_flushed = noc_async_write_barrier
noc_async_atomic_barrier = noc_async_write_barrier
noc_async_full_barrier = noc_async_write_barrier


def noc_inline_dw_write(noc_addr: int, value: int, be: int = 0xF, noc: int = 0) -> None:
    ctx = _ctx()
    mem, local, owner = resolve(ctx.device, noc_addr, 4, "noc_inline_dw_write")
    if isinstance(owner, int):
        raise M.NO_DRAM_TARGET(what="noc_inline_dw_write")
    word = mem[local : local + 4].view(np.uint32)
    old = int(word[0])
    mask = 0
    for i in range(4):
        if be >> i & 1:
            mask |= 0xFF << (8 * i)
    word[0] = (old & ~mask) | (value & mask)
    run = _run()
    landed = noc_time.write(run, ctx.core, owner, 4, _noc(ctx, noc))
    noc_time.wake_at(run, landed, lambda: owner.notify_write(local, local + 4))


# -- semaphores -------------------------------------------------------------------------------


def get_semaphore(sem_id: int) -> int:
    """L1 address of semaphore ``sem_id`` on this core."""
    device = _ctx().device
    if not 0 <= sem_id < NUM_SEMAPHORES:
        raise M.SEMAPHORE_ID(id=sem_id, last=NUM_SEMAPHORES - 1)
    return device.semaphore_address(sem_id)


class _SemaphoreWait:
    """Describes a semaphore wait in a deadlock report."""

    __slots__ = ()

    def describe_wait(self, detail) -> str:
        core, addr, op, value = detail
        current = int(core.l1_words(addr)[0])
        rel = "==" if op == "eq" else ">="
        return (
            f"noc_semaphore_wait at L1 {addr:#x}: waits for value {rel} {value}, value is {current}"
        )


_SEM_WAIT = _SemaphoreWait()


def wait_word(core: Core, local: int, op: str, value: int) -> None:
    """Block until the L1 word at ``local`` satisfies ``op`` (``eq`` / ``ge``) ``value``."""
    word = core.l1_words(local)
    while True:
        current = int(word[0])
        if current == value if op == "eq" else current >= value:
            return
        current_engine().block(core.watch(local), _SEM_WAIT, (core, local, op, value))


def _word(ctx: KernelContext, addr: int) -> tuple[Core, int]:
    core = ctx.core
    if not 0 <= addr < ctx.device.l1_size or addr % 4 or addr + 4 > ctx.device.l1_size:
        raise M.SEMAPHORE_WORD(addr=addr)
    return core, addr


def noc_semaphore_set(sem_addr: int, value: int) -> None:
    ctx = _ctx()
    core, local = _word(ctx, sem_addr)
    core.l1_words(local)[0] = value & 0xFFFFFFFF
    core.notify_write(local, local + 4)
    _tick(costs.SEMAPHORE_OP)


def noc_semaphore_wait(sem_addr: int, value: int) -> None:
    """Spin (block) until ``*sem_addr == value``."""
    ctx = _ctx()
    _tick(costs.SEMAPHORE_OP)
    wait_word(*_word(ctx, sem_addr), "eq", value & 0xFFFFFFFF)


def noc_semaphore_wait_min(sem_addr: int, value: int) -> None:
    """Spin (block) until ``*sem_addr >= value``."""
    ctx = _ctx()
    _tick(costs.SEMAPHORE_OP)
    wait_word(*_word(ctx, sem_addr), "ge", value & 0xFFFFFFFF)


def noc_semaphore_inc(noc_addr: int, incr: int, noc: int = 0, posted: bool = False) -> None:
    """Atomic 32-bit add at a remote (or local) L1 word."""
    ctx = _ctx()
    mem, local, owner = resolve(ctx.device, noc_addr, 4, "noc_semaphore_inc")
    if isinstance(owner, int):
        raise M.NO_DRAM_TARGET(what="noc_semaphore_inc")
    if local % 4:
        raise M.SEMAPHORE_ALIGN(what="noc_semaphore_inc", addr=local)
    run = _run()
    landed = noc_time.write(run, ctx.core, owner, 4, _noc(ctx, noc))
    noc_time.wake_at(run, landed, lambda: owner.atomic_add(local, incr))


def noc_semaphore_inc_multicast(
    noc_addr_multicast: int, incr: int, num_dests: int, noc: int = 0
) -> None:
    """Atomic add on every worker of the rectangle except the sender."""
    ctx = _ctx()
    what = "noc_semaphore_inc_multicast"
    cores, local = multicast_targets(ctx.device, ctx.core, noc_addr_multicast, False, what)
    if num_dests != len(cores):
        raise M.MCAST_DESTS(what=what, num_dests=num_dests, count=len(cores), which="")
    if local % 4 or local + 4 > ctx.device.l1_size:
        raise M.SEMAPHORE_WORD(addr=local)
    run = _run()
    landed = noc_time.multicast(run, ctx.core, cores, 4, _noc(ctx, noc), False)

    def deliver() -> None:
        for core in cores:
            core.atomic_add(local, incr)

    noc_time.wake_at(run, landed, deliver)


def noc_semaphore_set_remote(src_local_l1_addr: int, dst_noc_addr: int, noc: int = 0) -> None:
    """4-byte write of a local word to a remote address."""
    noc_async_write(src_local_l1_addr, dst_noc_addr, 4)


def noc_semaphore_set_multicast(
    src_local_l1_addr: int,
    dst_noc_addr_multicast: int,
    num_dests: int,
    linked: bool = False,
    noc: int = 0,
) -> None:
    _multicast(
        src_local_l1_addr,
        dst_noc_addr_multicast,
        4,
        num_dests,
        False,
        "noc_semaphore_set_multicast",
        linked,
        noc,
    )


def noc_semaphore_set_multicast_loopback_src(
    src_local_l1_addr: int,
    dst_noc_addr_multicast: int,
    num_dests: int,
    linked: bool = False,
    noc: int = 0,
) -> None:
    _multicast(
        src_local_l1_addr,
        dst_noc_addr_multicast,
        4,
        num_dests,
        True,
        "noc_semaphore_set_multicast_loopback_src",
        linked,
        noc,
    )


# -- direct L1 access (what C++ does through pointers) -------------------------------------


def read_l1(addr: int, count: int, dtype=np.uint8) -> np.ndarray:
    """A copy of ``count`` elements of ``dtype`` at local L1 address ``addr``."""
    ctx = _ctx()
    dt = np.dtype(dtype)
    local = ctx.device.resolve_local(ctx.core, addr)
    n = count * dt.itemsize
    if local + n > ctx.device.l1_size:
        raise NocError(f"read_l1: [{local:#x}, {local + n:#x}) is outside L1")
    return ctx.core.l1[local : local + n].view(dt).copy()


def write_l1(addr: int, values) -> None:
    """Store an array into this core's L1 at ``addr`` (wakes semaphore watchers)."""
    ctx = _ctx()
    data = np.ascontiguousarray(values).view(np.uint8).reshape(-1)
    local = ctx.device.resolve_local(ctx.core, addr)
    if local + data.size > ctx.device.l1_size:
        raise NocError(f"write_l1: [{local:#x}, {local + data.size:#x}) is outside L1")
    ctx.core.l1[local : local + data.size] = data
    ctx.core.notify_write(local, local + data.size)
