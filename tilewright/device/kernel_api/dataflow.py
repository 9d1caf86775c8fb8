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

from tilewright.device.engine import ACTIVE, current_engine
from tilewright.device.formats import TILE_32x32, tile_size_bytes
from tilewright.device.noc import noc_multicast_addr, noc_xy_addr
from tilewright.device.perf import costs, pipeline
from tilewright.device.perf import kernel as noc_time
from tilewright.device.transfer import multicast_targets, noc_copy, resolve
from tilewright.errors import DFBContractError, FormatError, KernelError, NocError

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
    "noc_async_read_set_state",
    "noc_async_read_with_state",
    "noc_async_read_one_packet_set_state",
    "noc_async_read_one_packet_with_state",
    "noc_async_write_set_state",
    "noc_async_write_with_state",
    "noc_async_write_one_packet_set_state",
    "noc_async_write_one_packet_with_state",
    "noc_async_read_set_trid",
    "noc_async_write_set_trid",
    "noc_async_read_barrier_with_trid",
    "noc_async_write_barrier_with_trid",
    "noc_async_write_one_packet_with_trid",
    "noc_async_write_one_packet_with_trid_set_state",
    "noc_async_write_one_packet_with_trid_with_state",
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
    try:
        return ctx.args[index]
    except IndexError:
        raise KernelError(
            f"get_arg_val({index}): kernel {ctx.kernel.name!r} on core {ctx.core.logical} has "
            f"{len(ctx.args)} runtime args"
        ) from None


def get_common_arg_val(index: int) -> int:
    ctx = _ctx()
    try:
        return ctx.common_args[index]
    except IndexError:
        raise KernelError(
            f"get_common_arg_val({index}): kernel {ctx.kernel.name!r} has "
            f"{len(ctx.common_args)} common runtime args"
        ) from None


def get_arg_addr(index: int) -> int:
    return _ctx().rta_addr + 4 * index


def get_common_arg_addr(index: int) -> int:
    return _ctx().crta_addr + 4 * index


def get_compile_time_arg_val(index: int) -> int:
    ctx = _ctx()
    try:
        return ctx.compile_args[index]
    except IndexError:
        raise KernelError(
            f"get_compile_time_arg_val({index}): kernel {ctx.kernel.name!r} has "
            f"{len(ctx.compile_args)} compile-time args"
        ) from None


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
        raise DFBContractError(
            f"circular buffer {cb_id} is not configured on core {ctx.core.logical}"
        )
    return cb


def _cb_call(cb_id: int, num_pages: int, stage: int, method: str) -> None:
    """A CB call on the processor that makes it (compute kernels: unpack waits and pops,
    pack reserves and pushes), which blocks and wakes at that processor's clock."""
    run = _run()
    pr = pipeline.enter(run, stage)
    getattr(circular_buffer(cb_id), method)(num_pages)
    pipeline.leave(run, pr, stage)


def cb_reserve_back(cb_id: int, num_pages: int) -> None:
    _cb_call(cb_id, num_pages, pipeline.PACK, "reserve_back")


def cb_push_back(cb_id: int, num_pages: int) -> None:
    _cb_call(cb_id, num_pages, pipeline.PACK, "push_back")


def cb_wait_front(cb_id: int, num_pages: int) -> None:
    _cb_call(cb_id, num_pages, pipeline.UNPACK, "wait_front")


def cb_pop_front(cb_id: int, num_pages: int) -> None:
    _cb_call(cb_id, num_pages, pipeline.UNPACK, "pop_front")


def get_write_ptr(cb_id: int) -> int:
    return circular_buffer(cb_id).wr_ptr


def get_read_ptr(cb_id: int) -> int:
    return circular_buffer(cb_id).rd_ptr


def cb_pages_reservable_at_back(cb_id: int, num_pages: int) -> bool:
    cb = circular_buffer(cb_id)
    if cb.pages_free >= num_pages:
        return True
    current_engine().poll_yield(cb, ("reserve", num_pages))
    return cb.pages_free >= num_pages


def cb_pages_available_at_front(cb_id: int, num_pages: int) -> bool:
    cb = circular_buffer(cb_id)
    if cb.pages_filled >= num_pages:
        return True
    current_engine().poll_yield(cb, ("wait", num_pages))
    return cb.pages_filled >= num_pages


def get_tile_size(cb_id: int) -> int:
    """Bytes of one tile of the CB's format and tile shape.

    tt-metal reads ``unpack_tile_size[cb]`` from the JIT CB descriptors (digest §4.1, §2.3):
    a property of the format, not of the page size.  A CB whose format has no tile form
    (raw formats) gives its page size.
    """
    cb = circular_buffer(cb_id)
    if cb.data_format is None:
        return cb.page_size
    device = _ctx().device
    try:
        return tile_size_bytes(
            cb.data_format,
            cb.tile or TILE_32x32,
            l1_alignment=device.l1_alignment,
            dram_alignment=device.dram_alignment,
        )
    except FormatError:
        return cb.page_size


def get_tile_hw(cb_id: int) -> int:
    """Elements of one tile of the CB (``unpack_tile_r_dim * unpack_tile_c_dim``)."""
    return (circular_buffer(cb_id).tile or TILE_32x32).num_elements


def get_tile_num_faces(cb_id: int) -> int:
    """Faces of one tile of the CB (``unpack_tile_num_faces``: 4 for 32x32, 2 for 16x32 ...)."""
    return (circular_buffer(cb_id).tile or TILE_32x32).num_faces


def get_dataformat(cb_id: int):
    return circular_buffer(cb_id).data_format


# -- NoC addresses -----------------------------------------------------------------------------


def get_noc_addr(*args, noc: int = 0) -> int:
    """``get_noc_addr(x, y, addr)``, ``get_noc_addr(addr)`` or ``get_noc_addr(page_id, addrgen[, offset])``."""
    if len(args) >= 2 and hasattr(args[1], "get_noc_addr"):
        page_id, gen = args[0], args[1]
        offset = args[2] if len(args) > 2 else 0
        return gen.get_noc_addr(page_id, offset)
    if len(args) == 1:
        core = _ctx().core
        return noc_xy_addr(
            core.noc_x, core.noc_y, core.device.resolve_local(core, args[0]), core.device.chip
        )
    if len(args) == 3:
        x, y, addr = args
        return noc_xy_addr(x, y, addr, _ctx().device.chip)
    raise KernelError(f"get_noc_addr: unsupported arguments {args!r}")


def get_noc_addr_from_bank_id(bank_id: int, bank_offset: int, dram: bool = True) -> int:
    device = _ctx().device
    if dram:
        if not 0 <= bank_id < device.num_dram_channels:
            raise NocError(f"DRAM bank {bank_id} does not exist ({device.num_dram_channels} banks)")
        x, y = device.dram_noc_coord(bank_id)
    else:
        if not 0 <= bank_id < device.num_l1_banks:
            raise NocError(f"L1 bank {bank_id} does not exist ({device.num_l1_banks} banks)")
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
    local = ctx.device.resolve_local(core, addr)
    if size <= 0 or local + size > ctx.device.l1_size:
        raise NocError(
            f"{what}: local L1 range [{local:#x}, {local + size:#x}) is invalid on core {core.logical}"
        )
    return core.l1, local, core


def noc_async_read(src_noc_addr: int, dst_local_l1_addr: int, size: int, noc: int = 0) -> None:
    """Copy ``size`` bytes from a NoC address (DRAM or L1) into this core's L1."""
    ctx = _ctx()
    what = "noc_async_read"
    src = resolve(ctx.device, src_noc_addr, size, what)
    dst = _local(ctx, dst_local_l1_addr, size, what)
    noc_copy(ctx.device, src, dst, size, what)
    noc_time.read(_run(), ctx.core, src[2], size, _noc(ctx, noc))


noc_async_read_one_packet = noc_async_read


def noc_async_write(src_local_l1_addr: int, dst_noc_addr: int, size: int, noc: int = 0) -> None:
    """Copy ``size`` bytes from this core's L1 to a NoC address."""
    ctx = _ctx()
    what = "noc_async_write"
    src = _local(ctx, src_local_l1_addr, size, what)
    dst = resolve(ctx.device, dst_noc_addr, size, what)
    run = _run()
    landed = noc_time.write(run, ctx.core, dst[2], size, _noc(ctx, noc))
    noc_time.wake_at(run, landed, lambda: noc_copy(ctx.device, src, dst, size, what))


noc_async_write_one_packet = noc_async_write


def noc_async_read_page(page_id: int, addrgen, dst_local_l1_addr: int, offset: int = 0) -> None:
    noc_async_read(
        addrgen.get_noc_addr(page_id, offset), dst_local_l1_addr, addrgen.page_size_bytes()
    )


def noc_async_write_page(
    page_id: int, addrgen, src_local_l1_addr: int, size: int = 0, offset: int = 0
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


# -- stateful NoC transfers ----------------------------------------------------------------
#
# tt-metal's *_set_state programs a NoC command buffer with the target node (the upper
# bits of the 64-bit NoC address) and, for one-packet forms, the size; *_with_state then
# issues a transfer that supplies only the 32-bit local address (and the size, for the
# general forms).  Same copy semantics as noc_async_read / noc_async_write.  A with_state
# call with no set_state before it (on that NoC) would reuse whatever the command buffer
# last held; here it is a NocError.

_LO32 = 0xFFFFFFFF
MAX_TRANSACTION_ID = 0xF
"""Transaction ids are 4-bit fields of the NoC command (``NOC_MAX_TRANSACTION_ID``)."""


def api_state(ctx) -> dict:
    """Per-kernel-run register state of the kernel API (NoC command buffers, packer flags)."""
    if ctx.api is None:
        ctx.api = {}
    return ctx.api


def _set_state(kind: str, noc_addr: int, size: int, noc: int) -> None:
    api_state(_ctx()).setdefault("noc", {})[(kind, noc)] = (int(noc_addr), int(size))
    _tick(costs.SET_STATE_OP)


def _state_addr(kind: str, local_addr: int, noc: int) -> tuple[int, int]:
    """(NoC address, size) from the command buffer ``noc_async_<kind>_set_state`` programmed."""
    state = api_state(_ctx()).get("noc", {}).get((kind, noc))
    if state is None:
        raise NocError(
            f"noc_async_{kind}_with_state: no noc_async_{kind}_set_state on NoC {noc} before it; "
            "the command buffer holds no target "
            "(hardware would reuse whatever the last transfer left in it)"
        )
    base, size = state
    return (base & ~_LO32) | (int(local_addr) & _LO32), size


def noc_async_read_set_state(src_noc_addr: int, noc: int = 0) -> None:
    """Program the read command buffer with the source node of ``src_noc_addr``."""
    _set_state("read", src_noc_addr, 0, noc)


def noc_async_read_with_state(
    src_local_addr: int, dst_local_l1_addr: int, size: int, noc: int = 0
) -> None:
    """Read ``size`` bytes from ``src_local_addr`` on the node set by noc_async_read_set_state."""
    src, _ = _state_addr("read", src_local_addr, noc)
    noc_async_read(src, dst_local_l1_addr, size, noc)


def noc_async_read_one_packet_set_state(src_noc_addr: int, size: int, noc: int = 0) -> None:
    """Program the read command buffer with the source node and the packet size."""
    _set_state("read_one_packet", src_noc_addr, size, noc)


def noc_async_read_one_packet_with_state(
    src_local_addr: int, dst_local_l1_addr: int, noc: int = 0
) -> None:
    """Read one packet (the size given to the set_state) from ``src_local_addr``."""
    src, size = _state_addr("read_one_packet", src_local_addr, noc)
    noc_async_read(src, dst_local_l1_addr, size, noc)


def noc_async_write_set_state(dst_noc_addr: int, noc: int = 0) -> None:
    """Program the write command buffer with the destination node of ``dst_noc_addr``."""
    _set_state("write", dst_noc_addr, 0, noc)


def noc_async_write_with_state(
    src_local_l1_addr: int, dst_local_addr: int, size: int, noc: int = 0
) -> None:
    """Write ``size`` bytes to ``dst_local_addr`` on the node set by noc_async_write_set_state."""
    dst, _ = _state_addr("write", dst_local_addr, noc)
    noc_async_write(src_local_l1_addr, dst, size, noc)


def noc_async_write_one_packet_set_state(dst_noc_addr: int, size: int, noc: int = 0) -> None:
    """Program the write command buffer with the destination node and the packet size."""
    _set_state("write_one_packet", dst_noc_addr, size, noc)


def noc_async_write_one_packet_with_state(
    src_local_l1_addr: int, dst_local_addr: int, noc: int = 0
) -> None:
    """Write one packet (the size given to the set_state) to ``dst_local_addr``."""
    dst, size = _state_addr("write_one_packet", dst_local_addr, noc)
    noc_async_write(src_local_l1_addr, dst, size, noc)


def _check_trid(trid: int, what: str) -> int:
    if not 0 <= trid <= MAX_TRANSACTION_ID:
        raise NocError(
            f"{what}: transaction id {trid} does not fit the NoC's 4-bit field "
            f"(0..{MAX_TRANSACTION_ID})"
        )
    return trid


def noc_async_read_set_trid(trid: int, noc: int = 0) -> None:
    """Tag the following reads with transaction id ``trid`` (0..15)."""
    api_state(_ctx())[("read_trid", noc)] = _check_trid(trid, "noc_async_read_set_trid")
    _tick(costs.SET_STATE_OP)


def noc_async_write_set_trid(trid: int, noc: int = 0) -> None:
    """Tag the following writes with transaction id ``trid`` (0..15)."""
    api_state(_ctx())[("write_trid", noc)] = _check_trid(trid, "noc_async_write_set_trid")
    _tick(costs.SET_STATE_OP)


def noc_async_read_barrier_with_trid(trid: int, noc: int = 0) -> None:
    """Wait for the reads tagged ``trid`` (the emulated NoC completes every read at issue)."""
    _check_trid(trid, "noc_async_read_barrier_with_trid")
    noc_async_read_barrier(noc)


def noc_async_write_barrier_with_trid(trid: int, noc: int = 0) -> None:
    """Wait for the writes tagged ``trid`` to be acknowledged."""
    _check_trid(trid, "noc_async_write_barrier_with_trid")
    noc_async_write_barrier(noc)


def noc_async_write_one_packet_with_trid(
    src_local_l1_addr: int, dst_noc_addr: int, size: int, trid: int, cmd_buf: int = 0, noc: int = 0
) -> None:
    """One-packet write tagged with transaction id ``trid``."""
    _check_trid(trid, "noc_async_write_one_packet_with_trid")
    noc_async_write(src_local_l1_addr, dst_noc_addr, size, noc)


def noc_async_write_one_packet_with_trid_set_state(
    dst_noc_addr: int, cmd_buf: int = 0, noc: int = 0
) -> None:
    """Program the (trid) write command buffer with the destination node."""
    _set_state("write_one_packet_with_trid", dst_noc_addr, 0, noc)


def noc_async_write_one_packet_with_trid_with_state(
    src_local_l1_addr: int,
    dst_local_addr: int,
    size: int,
    trid: int,
    cmd_buf: int = 0,
    noc: int = 0,
) -> None:
    """One-packet write tagged ``trid`` to ``dst_local_addr`` on the node of the set_state."""
    _check_trid(trid, "noc_async_write_one_packet_with_trid_with_state")
    dst, _ = _state_addr("write_one_packet_with_trid", dst_local_addr, noc)
    noc_async_write(src_local_l1_addr, dst, size, noc)


def _multicast(
    src_local_l1_addr, mcast_addr, size, num_dests, include_self, what, linked=False, noc=0
) -> None:
    ctx = _ctx()
    src = _local(ctx, src_local_l1_addr, size, what)
    cores, local = multicast_targets(ctx.device, ctx.core, mcast_addr, include_self, what)
    if num_dests != len(cores):
        raise NocError(
            f"{what}: num_dests is {num_dests} but the rectangle reaches {len(cores)} cores "
            f"({'including' if include_self else 'excluding'} the sender)"
        )
    run = _run()
    landed = noc_time.multicast(run, ctx.core, cores, size, _noc(ctx, noc), bool(linked))

    def deliver() -> None:
        for core in cores:
            dst_local = ctx.device.resolve_local(core, local)
            noc_copy(ctx.device, src, (core.l1, dst_local, core), size, what)

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
        raise NocError("noc_inline_dw_write cannot target DRAM")
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
    return _ctx().device.semaphore_address(sem_id)


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


def _word(ctx: KernelContext, addr: int) -> tuple[Core, int]:
    core = ctx.core
    local = ctx.device.resolve_local(core, addr)
    if local % 4 or local + 4 > ctx.device.l1_size:
        raise NocError(f"semaphore address {addr:#x} is not a valid L1 word")
    return core, local


def wait_word(core: Core, local: int, op: str, value: int) -> None:
    """Block until the L1 word at ``local`` satisfies ``op`` (``eq`` / ``ge``) ``value``."""
    word = core.l1_words(local)
    while True:
        current = int(word[0])
        if current == value if op == "eq" else current >= value:
            return
        current_engine().block(core.watch(local), _SEM_WAIT, (core, local, op, value))


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


def _atomic_add(core, local: int, incr: int) -> None:
    word = core.l1_words(local)
    word[0] = (int(word[0]) + incr) & 0xFFFFFFFF
    core.notify_write(local, local + 4)


def noc_semaphore_inc(noc_addr: int, incr: int, noc: int = 0, posted: bool = False) -> None:
    """Atomic 32-bit add at a remote (or local) L1 word."""
    ctx = _ctx()
    mem, local, owner = resolve(ctx.device, noc_addr, 4, "noc_semaphore_inc")
    if isinstance(owner, int):
        raise NocError("noc_semaphore_inc cannot target DRAM")
    if local % 4:
        raise NocError(f"noc_semaphore_inc: address {local:#x} is not word aligned")
    run = _run()
    landed = noc_time.write(run, ctx.core, owner, 4, _noc(ctx, noc))
    noc_time.wake_at(run, landed, lambda: _atomic_add(owner, local, incr))


def noc_semaphore_inc_multicast(
    noc_addr_multicast: int, incr: int, num_dests: int, noc: int = 0
) -> None:
    """Atomic add on every worker of the rectangle except the sender."""
    ctx = _ctx()
    what = "noc_semaphore_inc_multicast"
    cores, local = multicast_targets(ctx.device, ctx.core, noc_addr_multicast, False, what)
    if num_dests != len(cores):
        raise NocError(
            f"{what}: num_dests is {num_dests} but the rectangle reaches {len(cores)} cores"
        )
    run = _run()
    landed = noc_time.multicast(run, ctx.core, cores, 4, _noc(ctx, noc), False)

    def deliver() -> None:
        for core in cores:
            _atomic_add(core, ctx.device.resolve_local(core, local), incr)

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
