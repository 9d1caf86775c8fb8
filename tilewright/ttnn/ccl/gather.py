"""All-gather as programs on the fabric: every chip ends with every chip's shard.

Per chip and direction (``+1``: toward the next chip, ``-1``: toward the previous one) a
receiver and a sender kernel run on one core (``+1`` on core (0, 0), ``-1`` on (1, 0)),
as tt-metal's bidirectional ring/line all-gather:

* shard ``j`` travels ``H(j)`` hops in each direction -- on a ring ``ceil((N-1)/2)``
  forward and ``floor((N-1)/2)`` backward, on a line to both ends;
* the **sender** first copies the chip's own shard into its place of the output, then
  sends its own shard's pieces, then forwards, piece by piece, every received shard that
  has hops left -- read back from the output once the receiver reports it landed.  A
  piece goes into one of the next chip's landing slots with one fabric write that also
  increments the next chip's landing semaphore; a sender runs at most
  ``LANDING_SLOTS`` pieces ahead of the credits the next chip returns;
* the **receiver** waits for each piece on its landing semaphore, writes it into the
  output, returns a credit to the previous chip over the fabric and tells its own sender
  that the piece arrived.

Receivers never wait on anything but arrivals, so the chain cannot deadlock.
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
    get_arg_val,
    get_semaphore,
    my_x,
    my_y,
    noc_semaphore_inc,
    noc_semaphore_wait_min,
)
from tilewright.device.noc import noc_xy_addr
from tilewright.device.program import (
    CircularBufferConfig,
    DataMovementConfig,
    DataMovementProcessor,
    Program,
    portable,
)
from tilewright.ttnn.ccl.pages import l1_to_pages, page_spans, pages_to_l1
from tilewright.ttnn.ccl.plan import (
    LANDING_SLOTS,
    PIECE_BYTES,
    Group,
    Regions,
    piece_pages,
    slot_pages,
)

__all__ = ["gather_programs"]

_CORES = {1: CoreCoord(0, 0), -1: CoreCoord(1, 0)}
_LANDING_CB, _STAGING_CB = 0, 1


@dataclass(frozen=True)
class _Direction:
    """One direction's traffic at one chip: pieces (shard, piece) received and sent."""

    step: int
    recv: tuple[tuple[int, int], ...]
    send: tuple[tuple[int, int, int], ...]  # (shard, piece, arrivals needed; 0 = own input)
    prev: int  # group positions of the neighbours
    next: int


def _hops(group: Group, step: int, j: int) -> int:
    n = group.size
    if group.ring:
        return (n - 1 + (step > 0)) // 2 if step > 0 else (n - 1) // 2
    return n - 1 - j if step > 0 else j


def _distance(group: Group, step: int, j: int, i: int) -> int:
    n = group.size
    return ((i - j) * step) % n if group.ring else (i - j) * step


def _direction(group: Group, step: int, i: int, pieces: int) -> _Direction | None:
    n = group.size
    shards = sorted(
        (
            j
            for j in range(n)
            if j != i and 1 <= _distance(group, step, j, i) <= _hops(group, step, j)
        ),
        key=lambda j: _distance(group, step, j, i),
    )
    recv = tuple((j, m) for j in shards for m in range(pieces))
    send: list[tuple[int, int, int]] = []
    if _hops(group, step, i) >= 1:
        send += [(i, m, 0) for m in range(pieces)]
    for t, (j, m) in enumerate(recv):
        if _distance(group, step, j, i) < _hops(group, step, j):
            send.append((j, m, t + 1))
    if not recv and not send:
        return None
    return _Direction(step, recv, tuple(send), (i - step) % n, (i + step) % n)


@dataclass(frozen=True)
class _ChipPlan:
    """Everything one chip's kernels need that is fixed when the program is built."""

    position: int
    in_buf: object
    out_buf: object
    in_spans: tuple  # the input's pieces (page ranges)
    out_spans: tuple  # per shard: its pieces' output pages (ranges or page-id arrays)
    piece: int
    page_size: int
    landing: int
    staging: int


def _receiver(plan: _ChipPlan, d: _Direction):
    def gather_receiver() -> None:
        prev_id, peer_x, peer_y = get_arg_val(0), get_arg_val(1), get_arg_val(2)
        landing_sem, credit_sem, arrived_sem = get_semaphore(0), get_semaphore(1), get_semaphore(2)
        me = noc_xy_addr(my_x(), my_y(), arrived_sem)
        slot_bytes = plan.piece * plan.page_size
        for t, (j, m) in enumerate(d.recv):
            noc_semaphore_wait_min(landing_sem, t + 1)
            slot = plan.landing + (t % LANDING_SLOTS) * slot_bytes
            l1_to_pages(plan.out_buf, plan.out_spans[j][m], slot)
            fabric_unicast_noc_unicast_atomic_inc(
                prev_id, noc_xy_addr(peer_x, peer_y, credit_sem), 1
            )
            noc_semaphore_inc(me, 1)

    return portable(gather_receiver)


def _sender(plan: _ChipPlan, d: _Direction | None, copy_own: bool):
    def gather_sender() -> None:
        if copy_own:  # the chip's own shard into its place of the output
            for src, dst in zip(plan.in_spans, plan.out_spans[plan.position]):
                pages_to_l1(plan.in_buf, src, plan.staging)
                l1_to_pages(plan.out_buf, dst, plan.staging)
        if d is None:
            return
        next_id, peer_x, peer_y = get_arg_val(0), get_arg_val(1), get_arg_val(2)
        landing_sem, credit_sem, arrived_sem = get_semaphore(0), get_semaphore(1), get_semaphore(2)
        slot_bytes = plan.piece * plan.page_size
        for t, (j, m, needed) in enumerate(d.send):
            if needed == 0:
                nbytes = pages_to_l1(plan.in_buf, plan.in_spans[m], plan.staging)
            else:
                noc_semaphore_wait_min(arrived_sem, needed)
                nbytes = pages_to_l1(plan.out_buf, plan.out_spans[j][m], plan.staging)
            if t >= LANDING_SLOTS:
                noc_semaphore_wait_min(credit_sem, t + 1 - LANDING_SLOTS)
            slot = plan.landing + (t % LANDING_SLOTS) * slot_bytes
            fabric_unicast_noc_fused_unicast_with_atomic_inc(
                next_id,
                plan.staging,
                nbytes,
                noc_xy_addr(peer_x, peer_y, slot),
                noc_xy_addr(peer_x, peer_y, landing_sem),
                1,
            )

    return portable(gather_sender)


def gather_programs(group: Group, inputs: list, outputs: list, d: int, name: str) -> list[Program]:
    """One program per chip of ``group`` gathering ``inputs`` (per chip) along page dim ``d``."""
    n = group.size
    first = inputs[0]
    grid = first.page_grid()
    shard_pages = int(np.prod(grid))
    page_size = first.buffer.page_size
    piece = piece_pages(shard_pages, page_size, PIECE_BYTES)
    pieces = shard_pages // piece
    in_spans = page_spans(np.arange(shard_pages), piece)
    out_spans = tuple(page_spans(slot_pages(grid, d, k, n), piece) for k in range(n))
    regions = Regions(group.devices)
    landing = regions.take(LANDING_SLOTS * piece * page_size)
    staging = regions.take(piece * page_size)
    programs = []
    for i, device in enumerate(group.devices):
        plan = _ChipPlan(
            i,
            inputs[i].buffer,
            outputs[i].buffer,
            in_spans,
            out_spans,
            piece,
            page_size,
            landing,
            staging,
        )
        program = Program(f"{name} chip {device.device_id}")
        dirs = {s: _direction(group, s, i, pieces) if n > 1 else None for s in (1, -1)}
        span = CoreRange(_CORES[1], _CORES[-1])
        fmt = first.data_format
        for index, addr, size in (
            (_LANDING_CB, landing, LANDING_SLOTS * piece * page_size),
            (_STAGING_CB, staging, piece * page_size),
        ):
            cfg = CircularBufferConfig(size, {index: fmt}).set_page_size(index, page_size)
            program.create_circular_buffer(span, cfg.set_address(addr))
        for _ in range(3):  # landing, credit, arrived
            program.create_semaphore(span, 0)
        owner = 1 if dirs[1] is not None or dirs[-1] is None else -1  # who copies the own shard
        for step in (1, -1):
            direction = dirs[step]
            core = _CORES[step]
            if direction is None and step != owner:
                continue
            send = program.create_kernel(
                _sender(plan, direction, step == owner),
                core,
                DataMovementConfig(DataMovementProcessor.RISCV_0),
                name=f"gather_sender{'+' if step > 0 else '-'}",
            )
            if direction is None:
                continue
            nxt = group.devices[direction.next]
            prv = group.devices[direction.prev]
            peer = nxt.worker_core_from_logical_core(core)
            program.set_runtime_args(send, core, [nxt.device_id, peer.x, peer.y])
            recv = program.create_kernel(
                _receiver(plan, direction),
                core,
                DataMovementConfig(DataMovementProcessor.RISCV_1),
                name=f"gather_receiver{'+' if step > 0 else '-'}",
            )
            peer = prv.worker_core_from_logical_core(core)
            program.set_runtime_args(recv, core, [prv.device_id, peer.x, peer.y])
        programs.append(program)
    return programs
