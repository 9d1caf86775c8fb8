"""Reduce-scatter as programs on the fabric: chip k ends with part k of the sum.

The input of every chip splits into N chunks along ``dim``.  Chunk ``j``'s partial sum
starts at chip ``j+1`` (its raw chunk), travels forward around the group, each chip adding
its own chunk ``j``, and ends complete at chip ``j`` after N-1 hops:

    part_j = ((x_{j+1} + x_{j+2}) + ... + x_{j+N-1}) + x_j      (indices mod N)

each addition rounded to the tensor's format.  On a ``Linear`` group the closing hop (chip
N-1 to chip 0) is one fabric packet routed back along the line; the order of additions is
the same.  (tt-metal's line reduce-scatter combines partials flowing in from both ends
instead, a different order.)

Per chip, core (0, 0) runs the receiving side and core (1, 0) the sending side:

* **reader** (RISCV_1): waits for each landed piece, moves it into ``cb_recv`` and returns
  the landing slot's credit to the previous chip, then reads the chip's own piece of the
  same chunk into ``cb_local``;
* **compute**: ``cb_sum = cb_recv + cb_local`` per piece;
* **writer** (RISCV_0): stores a partial sum into the intermediate buffer (and tells the
  sender it is ready), or the final sum into the output;
* **sender** (RISCV_0 of core (1, 0)): sends the raw chunk of step 1 from the input, then
  each partial once ready, into the next chip's landing slots, at most ``LANDING_SLOTS``
  pieces ahead of credits.

Partials go through DRAM (the intermediate buffer, as ttnn's ``intermediate_memory_config``),
so no receiving kernel ever waits on a sender and the ring cannot deadlock.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilewright.device.coords import CoreCoord, CoreRange
from tilewright.device.fabric import (
    fabric_unicast_noc_fused_unicast_with_atomic_inc,
    fabric_unicast_noc_unicast_atomic_inc,
)
from tilewright.device.kernel_api.dataflow import (
    cb_pop_front,
    cb_push_back,
    cb_reserve_back,
    cb_wait_front,
    get_arg_val,
    get_read_ptr,
    get_semaphore,
    get_write_ptr,
    noc_semaphore_inc,
    noc_semaphore_wait_min,
)
from tilewright.device.noc import noc_xy_addr
from tilewright.device.program import (
    CircularBufferConfig,
    ComputeConfig,
    DataMovementConfig,
    DataMovementProcessor,
    Program,
    portable,
)
from tilewright.ttnn.ccl.pages import add_pieces, l1_copy, l1_to_pages, page_spans, pages_to_l1
from tilewright.ttnn.ccl.plan import (
    LANDING_SLOTS,
    PIECE_BYTES,
    Group,
    Regions,
    piece_pages,
    slot_pages,
)

__all__ = ["reduce_scatter_programs", "local_sum_programs"]

_RECV_CORE, _SEND_CORE = CoreCoord(0, 0), CoreCoord(1, 0)
_LANDING_CB, _STAGING_CB, _CB_RECV, _CB_LOCAL, _CB_SUM = 0, 1, 2, 3, 4


@dataclass(frozen=True)
class _ChipPlan:
    position: int
    size: int
    in_buf: object
    mid_buf: object
    out_buf: object
    chunk_spans: tuple  # per chunk: its pieces' input pages (ranges or page-id arrays)
    out_spans: tuple  # the output's pieces (page ranges)
    piece: int
    pieces: int  # per chunk
    page_size: int
    landing: int
    staging: int
    sems: tuple[int, int, int]  # landing, credit, ready
    fmt: object
    tile: object
    dram_alignment: int

    def recv_chunk(self, s: int) -> int:
        return (self.position - s - 1) % self.size

    def send_chunk(self, s: int) -> int:
        return (self.position - s) % self.size

    def steps(self):
        """(step, piece, running index) of every piece a chip receives (and sends)."""
        t = 0
        for s in range(1, self.size):
            for m in range(self.pieces):
                yield s, m, t
                t += 1


def _reader(plan: _ChipPlan):
    def rs_reader() -> None:
        prev_id, peer_x, peer_y = get_arg_val(0), get_arg_val(1), get_arg_val(2)
        landing_sem, credit_sem, _ready = (get_semaphore(i) for i in plan.sems)
        nbytes = plan.piece * plan.page_size
        for s, m, t in plan.steps():
            noc_semaphore_wait_min(landing_sem, t + 1)
            cb_reserve_back(_CB_RECV, plan.piece)
            l1_copy(plan.landing + (t % LANDING_SLOTS) * nbytes, get_write_ptr(_CB_RECV), nbytes)
            cb_push_back(_CB_RECV, plan.piece)
            fabric_unicast_noc_unicast_atomic_inc(
                prev_id, noc_xy_addr(peer_x, peer_y, credit_sem), 1
            )
            cb_reserve_back(_CB_LOCAL, plan.piece)
            own = plan.chunk_spans[plan.recv_chunk(s)][m]
            pages_to_l1(plan.in_buf, own, get_write_ptr(_CB_LOCAL))
            cb_push_back(_CB_LOCAL, plan.piece)

    return portable(rs_reader)


def _compute(plan: _ChipPlan):
    def rs_compute() -> None:
        for _s, _m, _t in plan.steps():
            cb_wait_front(_CB_RECV, plan.piece)
            cb_wait_front(_CB_LOCAL, plan.piece)
            cb_reserve_back(_CB_SUM, plan.piece)
            add_pieces(
                get_read_ptr(_CB_RECV),
                get_read_ptr(_CB_LOCAL),
                get_write_ptr(_CB_SUM),
                plan.piece,
                plan.fmt,
                plan.tile,
                plan.dram_alignment,
            )
            cb_push_back(_CB_SUM, plan.piece)
            cb_pop_front(_CB_RECV, plan.piece)
            cb_pop_front(_CB_LOCAL, plan.piece)

    return portable(rs_compute)


def _writer(plan: _ChipPlan):
    def rs_writer() -> None:
        send_x, send_y = get_arg_val(0), get_arg_val(1)
        ready = noc_xy_addr(send_x, send_y, get_semaphore(plan.sems[2]))
        for s, m, _t in plan.steps():
            cb_wait_front(_CB_SUM, plan.piece)
            if s < plan.size - 1:  # a partial sum: the sender forwards it
                ids = plan.chunk_spans[plan.recv_chunk(s)][m]
                l1_to_pages(plan.mid_buf, ids, get_read_ptr(_CB_SUM))
                noc_semaphore_inc(ready, 1)
            else:  # the chip's own part, complete
                l1_to_pages(plan.out_buf, plan.out_spans[m], get_read_ptr(_CB_SUM))
            cb_pop_front(_CB_SUM, plan.piece)

    return portable(rs_writer)


def _sender(plan: _ChipPlan):
    def rs_sender() -> None:
        next_id, peer_x, peer_y = get_arg_val(0), get_arg_val(1), get_arg_val(2)
        landing_sem, credit_sem, ready_sem = (get_semaphore(i) for i in plan.sems)
        nbytes = plan.piece * plan.page_size
        for s, m, t in plan.steps():
            ids = plan.chunk_spans[plan.send_chunk(s)][m]
            if s == 1:
                pages_to_l1(plan.in_buf, ids, plan.staging)
            else:
                noc_semaphore_wait_min(ready_sem, t - plan.pieces + 1)  # its partial is stored
                pages_to_l1(plan.mid_buf, ids, plan.staging)
            if t >= LANDING_SLOTS:
                noc_semaphore_wait_min(credit_sem, t + 1 - LANDING_SLOTS)
            fabric_unicast_noc_fused_unicast_with_atomic_inc(
                next_id,
                plan.staging,
                nbytes,
                noc_xy_addr(peer_x, peer_y, plan.landing + (t % LANDING_SLOTS) * nbytes),
                noc_xy_addr(peer_x, peer_y, landing_sem),
                1,
            )

    return portable(rs_sender)


def reduce_scatter_programs(
    group: Group, inputs: list, intermediates: list, outputs: list, d: int, name: str
) -> list[Program]:
    """One program per chip of ``group`` reduce-scattering ``inputs`` along page dim ``d``."""
    n = group.size
    first = outputs[0]
    grid = first.page_grid()
    chunk_pages = int(np.prod(grid))
    page_size = first.buffer.page_size
    piece = piece_pages(chunk_pages, page_size, PIECE_BYTES // 4)
    chunk_spans = tuple(page_spans(slot_pages(grid, d, k, n), piece) for k in range(n))
    out_spans = page_spans(np.arange(chunk_pages), piece)
    regions = Regions(group.devices)
    slot_bytes = piece * page_size
    landing = regions.take(LANDING_SLOTS * slot_bytes)
    staging = regions.take(slot_bytes)
    cbs = {index: regions.take(2 * slot_bytes) for index in (_CB_RECV, _CB_LOCAL, _CB_SUM)}
    span = CoreRange(_RECV_CORE, _SEND_CORE)
    programs = []
    for i, device in enumerate(group.devices):
        program = Program(f"{name} chip {device.device_id}")
        regions_of = {
            _LANDING_CB: (landing, LANDING_SLOTS * slot_bytes),
            _STAGING_CB: (staging, slot_bytes),
        }
        regions_of.update({index: (addr, 2 * slot_bytes) for index, addr in cbs.items()})
        for index, (addr, size) in regions_of.items():
            cfg = CircularBufferConfig(size, {index: first.data_format}).set_page_size(
                index, page_size
            )
            program.create_circular_buffer(span, cfg.set_address(addr))
        sems = tuple(program.create_semaphore(span, 0) for _ in range(3))
        plan = _ChipPlan(
            i,
            n,
            inputs[i].buffer,
            intermediates[i].buffer,
            outputs[i].buffer,
            chunk_spans,
            out_spans,
            piece,
            chunk_pages // piece,
            page_size,
            landing,
            staging,
            sems,  # type: ignore[arg-type]
            first.data_format,
            first.tile_shape,
            device.dram_alignment,
        )
        prv, nxt = group.devices[(i - 1) % n], group.devices[(i + 1) % n]
        reader = program.create_kernel(
            _reader(plan),
            _RECV_CORE,
            DataMovementConfig(DataMovementProcessor.RISCV_1),
            name="rs_reader",
        )
        peer = prv.worker_core_from_logical_core(_SEND_CORE)
        program.set_runtime_args(reader, _RECV_CORE, [prv.device_id, peer.x, peer.y])
        program.create_kernel(_compute(plan), _RECV_CORE, ComputeConfig(), name="rs_compute")
        writer = program.create_kernel(
            _writer(plan),
            _RECV_CORE,
            DataMovementConfig(DataMovementProcessor.RISCV_0),
            name="rs_writer",
        )
        me = device.worker_core_from_logical_core(_SEND_CORE)
        program.set_runtime_args(writer, _RECV_CORE, [me.x, me.y])
        sender = program.create_kernel(
            _sender(plan),
            _SEND_CORE,
            DataMovementConfig(DataMovementProcessor.RISCV_0),
            name="rs_sender",
        )
        peer = nxt.worker_core_from_logical_core(_RECV_CORE)
        program.set_runtime_args(sender, _SEND_CORE, [nxt.device_id, peer.x, peer.y])
        programs.append(program)
    return programs


def _local_reader(buf, slot_spans, parts: int, piece: int):
    def sum_reader() -> None:
        for m in range(len(slot_spans[0])):
            for j in range(parts):
                cb_reserve_back(_CB_RECV, piece)
                pages_to_l1(buf, slot_spans[j][m], get_write_ptr(_CB_RECV))
                cb_push_back(_CB_RECV, piece)

    return portable(sum_reader)


def _local_compute(pieces: int, parts: int, piece: int, page_size: int, fmt, tile, align: int):
    def sum_compute() -> None:
        for _m in range(pieces):
            cb_reserve_back(_CB_SUM, piece)
            total = get_write_ptr(_CB_SUM)
            for j in range(parts):
                cb_wait_front(_CB_RECV, piece)
                if j == 0:
                    l1_copy(get_read_ptr(_CB_RECV), total, piece * page_size)
                else:
                    add_pieces(total, get_read_ptr(_CB_RECV), total, piece, fmt, tile, align)
                cb_pop_front(_CB_RECV, piece)
            cb_push_back(_CB_SUM, piece)

    return portable(sum_compute)


def _local_writer(buf, out_spans, piece: int):
    def sum_writer() -> None:
        for span in out_spans:
            cb_wait_front(_CB_SUM, piece)
            l1_to_pages(buf, span, get_read_ptr(_CB_SUM))
            cb_pop_front(_CB_SUM, piece)

    return portable(sum_writer)


def local_sum_programs(
    devices, stacked: list, outputs: list, d: int, parts: int, name: str
) -> list[Program]:
    """Per chip, ``output = ((x_0 + x_1) + ...) + x_{parts-1}`` where ``stacked`` holds the
    ``x_j`` side by side along page dim ``d`` (an all-gather's output): no fabric."""
    first = outputs[0]
    grid = first.page_grid()
    pages = int(np.prod(grid))
    page_size = first.buffer.page_size
    piece = piece_pages(pages, page_size, PIECE_BYTES // 4)
    slot_spans = tuple(page_spans(slot_pages(grid, d, k, parts), piece) for k in range(parts))
    out_spans = page_spans(np.arange(pages), piece)
    regions = Regions(devices)
    cbs = {index: regions.take(2 * piece * page_size) for index in (_CB_RECV, _CB_SUM)}
    programs = []
    for device, gathered, out in zip(devices, stacked, outputs):
        program = Program(f"{name} chip {device.device_id}")
        for index, addr in cbs.items():
            cfg = CircularBufferConfig(2 * piece * page_size, {index: first.data_format})
            program.create_circular_buffer(
                _RECV_CORE, cfg.set_page_size(index, page_size).set_address(addr)
            )
        dm0, dm1 = DataMovementProcessor.RISCV_0, DataMovementProcessor.RISCV_1
        program.create_kernel(
            _local_reader(gathered.buffer, slot_spans, parts, piece),
            _RECV_CORE,
            DataMovementConfig(dm1),
            name="sum_reader",
        )
        program.create_kernel(
            _local_compute(
                len(out_spans),
                parts,
                piece,
                page_size,
                first.data_format,
                first.tile_shape,
                device.dram_alignment,
            ),
            _RECV_CORE,
            ComputeConfig(),
            name="sum_compute",
        )
        program.create_kernel(
            _local_writer(out.buffer, out_spans, piece),
            _RECV_CORE,
            DataMovementConfig(dm0),
            name="sum_writer",
        )
        programs.append(program)
    return programs
