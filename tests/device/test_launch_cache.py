"""The launch cache (device/launch.py): a warm launch of a program reuses its set-up, sees
this launch's runtime args, and sets up again whenever something its set-up depends on
changed."""

from __future__ import annotations

import gc

import pytest
import torch

from tests.device.test_host_program import build_add_program
from tilewright import ttnn
from tilewright.device.engine import current_run
from tilewright.device.formats import DataFormat
from tilewright.device.kernel_api import (
    cb_pop_front,
    cb_push_back,
    cb_reserve_back,
    cb_wait_front,
    get_arg_val,
)
from tilewright.device.launch import LAUNCH_CACHE
from tilewright.device.program import (
    CircularBufferConfig,
    ComputeConfig,
    Program,
    ReaderDataMovementConfig,
)
from tilewright.errors import DeviceError

CORES = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 1))])


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


@pytest.fixture(autouse=True)
def cache_on():
    LAUNCH_CACHE.enabled = True
    yield
    LAUNCH_CACHE.enabled = True


class Counted:
    """The launch cache's hits and misses since ``start``."""

    def __init__(self) -> None:
        self.hits0, self.misses0 = LAUNCH_CACHE.hits, LAUNCH_CACHE.misses

    @property
    def hits(self) -> int:
        return LAUNCH_CACHE.hits - self.hits0

    @property
    def misses(self) -> int:
        return LAUNCH_CACHE.misses - self.misses0


def args_program(args_of, *, page: int = 2048):
    """A program whose kernel records, per core, its runtime args as the kernel API and
    L1 see them; a producer / consumer pair on one CB (its counters must start at 0)."""
    seen: dict[tuple[int, int], tuple[list[int], list[int]]] = {}

    def producer():
        ctx = current_run().kernel_context()
        n = len(ctx.args)
        words = [int(w) for w in ctx.core.l1_words(ctx.rta_addr, n)] if n else []
        seen[(ctx.core.logical.x, ctx.core.logical.y)] = ([get_arg_val(i) for i in range(n)], words)
        for _ in range(3):
            cb_reserve_back(0, 1)
            cb_push_back(0, 1)

    def consumer():
        for _ in range(3):
            cb_wait_front(0, 1)
            cb_pop_front(0, 1)

    program = Program("args")
    cfg = CircularBufferConfig(2 * page, {0: DataFormat.Float16_b}).set_page_size(0, page)
    program.create_circular_buffer(CORES, cfg)
    k = program.create_kernel(producer, CORES, ReaderDataMovementConfig())
    program.create_kernel(consumer, CORES, ComputeConfig())
    for core in CORES.cores():
        program.set_runtime_args(k, core, args_of(core))
    return program, k, seen, cfg


def test_a_second_launch_reuses_the_plan_and_sees_new_arg_values(device):
    program, k, seen, _ = args_program(lambda c: [c.x, c.y, 7])
    count = Counted()
    device.command_queue.enqueue_program(program)
    assert (count.hits, count.misses) == (0, 1)
    assert seen[(1, 0)] == ([1, 0, 7], [1, 0, 7])
    for core in CORES.cores():  # what a warm TT-Lang call does: new values in place
        program.get_runtime_args(k, core)[2] = 100 + core.x + 10 * core.y
    seen.clear()
    result = device.command_queue.enqueue_program(program)
    assert (count.hits, count.misses) == (1, 1)
    assert seen == {
        (x, y): ([x, y, 100 + x + 10 * y], [x, y, 100 + x + 10 * y]) for x in (0, 1) for y in (0, 1)
    }
    assert len(result.stats) == 8 and result.makespan == max(s.cycles for s in result.stats)
    program.set_runtime_args(k, ttnn.CoreCoord(0, 1), [5, 6, 8])  # a new list object
    device.command_queue.enqueue_program(program)
    assert count.hits == 2 and seen[(0, 1)] == ([5, 6, 8], [5, 6, 8])


def test_a_changed_arg_count_sets_up_again(device):
    program, k, seen, _ = args_program(lambda c: [1, 2])
    device.command_queue.enqueue_program(program)
    count = Counted()
    program.set_runtime_args(k, ttnn.CoreCoord(1, 1), [1, 2, 3, 4])
    device.command_queue.enqueue_program(program)
    assert (count.hits, count.misses) == (0, 1)
    assert seen[(1, 1)] == ([1, 2, 3, 4], [1, 2, 3, 4]) and seen[(0, 0)] == ([1, 2], [1, 2])
    program.set_common_runtime_args(k, [9])
    device.command_queue.enqueue_program(program)
    assert (count.hits, count.misses) == (0, 2)
    device.command_queue.enqueue_program(program)
    assert count.hits == 1


def test_a_changed_circular_buffer_sets_up_again(device):
    program, _, _, cfg = args_program(lambda c: [0])
    device.command_queue.enqueue_program(program)
    count = Counted()
    cfg.set_page_size(0, 1024)  # the same config object, now 4 pages
    device.command_queue.enqueue_program(program)
    assert count.misses == 1
    assert device.core(0, 0).cbs[0] is None  # released after the launch
    cfg.total_size = 1 << 21  # beyond L1: the check runs again, the old plan is not used
    with pytest.raises(DeviceError, match="grow to"):
        device.command_queue.enqueue_program(program)


def test_an_l1_buffer_allocated_since_sets_up_again(device):
    # CBs must stay below the lowest L1 buffer: a buffer allocated after the first launch
    # moves that limit, so a warm launch checks the clash again
    page = 2048
    top = device.l1_size - device.l1_small_size
    align = device.l1_alignment
    start = -(-device.l1_unreserved_base // align) * align
    pages = (top - start) // page  # the CBs end less than a page below the top
    program, _, _, _ = args_program(lambda c: [0], page=page)
    program.circular_buffers[0][1].total_size = pages * page
    device.command_queue.enqueue_program(program)
    count = Counted()
    sharded = ttnn.create_sharded_memory_config(
        (64, 32), ttnn.CoreGrid(y=1, x=2), ttnn.ShardStrategy.HEIGHT
    )
    held = ttnn.from_torch(
        torch.zeros(64, 32),
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=sharded,
    )
    try:
        with pytest.raises(DeviceError, match="clash with L1"):
            device.command_queue.enqueue_program(program)
        assert count.hits == 0
    finally:
        held.deallocate()
    # the buffer is gone: the first launch's plan fits again
    device.command_queue.enqueue_program(program)
    assert (count.hits, count.misses) == (1, 0)


def test_a_failed_launch_drops_the_plan(device):
    fail = {"now": False}

    def kernel():
        if fail["now"]:
            raise ValueError("kernel failure")

    program = Program("fails")
    program.create_kernel(kernel, CORES, ReaderDataMovementConfig())
    device.command_queue.enqueue_program(program)
    fail["now"] = True
    with pytest.raises(ValueError, match="kernel failure"):
        device.command_queue.enqueue_program(program)
    fail["now"] = False
    count = Counted()
    device.command_queue.enqueue_program(program)
    assert (count.hits, count.misses) == (0, 1)


def test_different_tensors_through_one_program_give_their_own_results(device):
    """The reader / compute / writer program of test_host_program: CB state restored, the
    new tensors' addresses written as runtime args; results as a fresh launch gives."""
    torch.manual_seed(3)
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    hosts = [torch.randn(64, 128).to(torch.bfloat16) for _ in range(4)]
    a, b, c, d = (ttnn.from_torch(h, **kw) for h in hosts)
    out1 = ttnn.from_torch(torch.zeros(64, 128), **kw)
    out2 = ttnn.from_torch(torch.zeros(64, 128), **kw)
    program = build_add_program(device, a, b, out1, CORES)
    device.command_queue.enqueue_program(program)
    count = Counted()
    device.command_queue.enqueue_program(program)  # the same tensors again
    reader, _, writer = (k.handle for k in program.kernels)
    for core in CORES.cores():
        r = program.get_runtime_args(reader, core)
        r[0], r[1] = c.buffer_address(), d.buffer_address()
        program.get_runtime_args(writer, core)[0] = out2.buffer_address()
    device.command_queue.enqueue_program(program)
    assert (count.hits, count.misses) == (2, 0)
    assert torch.equal(
        ttnn.to_torch(out1), (hosts[0].float() + hosts[1].float()).to(torch.bfloat16)
    )
    assert torch.equal(
        ttnn.to_torch(out2), (hosts[2].float() + hosts[3].float()).to(torch.bfloat16)
    )


def test_the_cache_switched_off_sets_up_every_launch(device):
    program, _, _, _ = args_program(lambda c: [0])
    LAUNCH_CACHE.enabled = False
    count = Counted()
    for _ in range(2):
        device.command_queue.enqueue_program(program)
    assert (count.hits, count.misses) == (0, 0)


def test_a_closed_device_forgets_its_plans():
    from tilewright.device.device import Device

    dev = Device(device_id=1)
    program, _, _, _ = args_program(lambda c: [0])
    dev.command_queue.enqueue_program(program)
    assert id(program) in dev.launch_plans
    dev.close()
    assert not dev.launch_plans


def test_a_dead_program_leaves_no_plan(device):
    program, _, _, _ = args_program(lambda c: [0])
    device.command_queue.enqueue_program(program)
    pid = id(program)
    assert pid in device.launch_plans
    del program
    gc.collect()
    assert pid not in device.launch_plans


def test_a_cb_over_another_l1_buffer_sets_up_again(device):
    """A globally allocated CB aliases an L1 buffer: pointed at another buffer (or the same
    buffer object at another address), the launch places the CB over the new one."""
    seen: list[int] = []

    def kernel():
        seen.append(current_run().core.cbs[0].fifo_addr)

    def l1_tensor():
        sharded = ttnn.create_sharded_memory_config(
            (128, 32), ttnn.CoreGrid(y=2, x=2), ttnn.ShardStrategy.HEIGHT
        )
        return ttnn.from_torch(
            torch.zeros(128, 32),
            dtype=ttnn.bfloat16,
            layout=ttnn.TILE_LAYOUT,
            device=device,
            memory_config=sharded,
        )

    first, second = l1_tensor(), l1_tensor()
    try:
        program = Program("global_cb")
        cfg = CircularBufferConfig(1024, {0: DataFormat.Float16_b}).set_page_size(0, 1024)
        cfg.set_globally_allocated_address(first.buffer)
        program.create_circular_buffer(CORES, cfg)
        program.create_kernel(kernel, ttnn.CoreCoord(0, 0), ReaderDataMovementConfig())
        device.command_queue.enqueue_program(program)
        device.command_queue.enqueue_program(program)
        count = Counted()
        cfg.set_globally_allocated_address(second.buffer)
        device.command_queue.enqueue_program(program)
        assert (count.hits, count.misses) == (0, 1)
        assert seen == [first.buffer.address] * 2 + [second.buffer.address]
        assert first.buffer.address != second.buffer.address
    finally:
        first.deallocate()
        second.deallocate()
