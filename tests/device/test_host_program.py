"""The host program API end to end: Python reader / add / writer kernels at the tt-metal API level."""

import numpy as np
import pytest
import torch

from tilewright import ttnn
from tilewright.device.formats import DataFormat
from tilewright.device.kernel_api import (
    TensorAccessor,
    TensorAccessorArgs,
    add_tiles,
    cb_pop_front,
    cb_push_back,
    cb_reserve_back,
    cb_wait_front,
    get_arg_val,
    get_read_ptr,
    get_write_ptr,
    noc_async_read_barrier,
    noc_async_read_tile,
    noc_async_write_barrier,
    noc_async_write_tile,
    pack_tile,
    tile_regs_acquire,
    tile_regs_commit,
    tile_regs_release,
    tile_regs_wait,
)
from tilewright.device.kernel_api.accessor import tensor_accessor_args
from tilewright.device.program import (
    CircularBufferConfig,
    ComputeConfig,
    Program,
    ReaderDataMovementConfig,
    WriterDataMovementConfig,
)
from tilewright.errors import DeadlockError, DeviceError

CB_A, CB_B, CB_OUT = 0, 1, 16


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


def reader():
    a_addr, b_addr, start, count = (get_arg_val(i) for i in range(4))
    args_a = TensorAccessorArgs(0)
    args_b = TensorAccessorArgs(args_a.next_compile_time_args_offset())
    a = TensorAccessor(args_a, a_addr, 2048)
    b = TensorAccessor(args_b, b_addr, 2048)
    for t in range(start, start + count):
        cb_reserve_back(CB_A, 1)
        noc_async_read_tile(t, a, get_write_ptr(CB_A))
        cb_reserve_back(CB_B, 1)
        noc_async_read_tile(t, b, get_write_ptr(CB_B))
        noc_async_read_barrier()
        cb_push_back(CB_A, 1)
        cb_push_back(CB_B, 1)


def add():
    count = get_arg_val(0)
    for _ in range(count):
        cb_wait_front(CB_A, 1)
        cb_wait_front(CB_B, 1)
        tile_regs_acquire()
        add_tiles(CB_A, CB_B, 0, 0, 0)
        tile_regs_commit()
        cb_reserve_back(CB_OUT, 1)
        tile_regs_wait()
        pack_tile(0, CB_OUT)
        tile_regs_release()
        cb_push_back(CB_OUT, 1)
        cb_pop_front(CB_A, 1)
        cb_pop_front(CB_B, 1)


def writer():
    out_addr, start, count = (get_arg_val(i) for i in range(3))
    out = TensorAccessor(TensorAccessorArgs(0), out_addr, 2048)
    for t in range(start, start + count):
        cb_wait_front(CB_OUT, 1)
        noc_async_write_tile(t, out, get_read_ptr(CB_OUT))
        noc_async_write_barrier()
        cb_pop_front(CB_OUT, 1)


def build_add_program(device, a, b, out, cores):
    n_tiles = a.buffer.num_pages
    program = Program("eltwise_add")
    for index in (CB_A, CB_B, CB_OUT):
        cfg = CircularBufferConfig(2 * 2048, {index: DataFormat.Float16_b}).set_page_size(
            index, 2048
        )
        program.create_circular_buffer(cores, cfg)
    cta = tensor_accessor_args(a.buffer) + tensor_accessor_args(b.buffer)
    r = program.create_kernel(reader, cores, ReaderDataMovementConfig(cta))
    c = program.create_kernel(add, cores, ComputeConfig())
    w = program.create_kernel(
        writer, cores, WriterDataMovementConfig(tensor_accessor_args(out.buffer))
    )
    coords = cores.cores()
    per, rem = divmod(n_tiles, len(coords))
    start = 0
    for i, core in enumerate(coords):
        count = per + (1 if i < rem else 0)
        program.set_runtime_args(r, core, [a.buffer_address(), b.buffer_address(), start, count])
        program.set_runtime_args(c, core, [count])
        program.set_runtime_args(w, core, [out.buffer_address(), start, count])
        start += count
    return program


def test_add_on_interleaved_dram_tensors_matches_torch(device):
    torch.manual_seed(0)
    a_h = torch.randn(128, 256).to(torch.bfloat16)
    b_h = torch.randn(128, 256).to(torch.bfloat16)
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    a, b = ttnn.from_torch(a_h, **kw), ttnn.from_torch(b_h, **kw)
    out = ttnn.from_torch(torch.zeros(128, 256), **kw)
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(2, 1))])
    result = device.command_queue.enqueue_program(build_add_program(device, a, b, out, cores))
    assert len(result.stats) == 18
    want = (a_h.float() + b_h.float()).to(torch.bfloat16)
    assert torch.equal(ttnn.to_torch(out), want)


def test_add_on_sharded_l1_tensor_matches_torch(device):
    torch.manual_seed(1)
    a_h = torch.randn(256, 64).to(torch.bfloat16)
    b_h = torch.randn(256, 64).to(torch.bfloat16)
    grid = ttnn.CoreGrid(y=1, x=4)
    sharded = ttnn.create_sharded_memory_config((256, 64), grid, ttnn.ShardStrategy.HEIGHT)
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    a = ttnn.from_torch(a_h, memory_config=sharded, **kw)
    b = ttnn.from_torch(b_h, memory_config=ttnn.DRAM_MEMORY_CONFIG, **kw)
    out = ttnn.from_torch(torch.zeros(256, 64), memory_config=ttnn.DRAM_MEMORY_CONFIG, **kw)
    cores = grid.to_core_range_set()
    device.command_queue.enqueue_program(build_add_program(device, a, b, out, cores))
    want = (a_h.float() + b_h.float()).to(torch.bfloat16)
    assert torch.equal(ttnn.to_torch(out), want)
    a.deallocate()


def test_two_kernels_waiting_on_each_other_are_a_deadlock(device):
    def first():
        cb_wait_front(0, 1)
        cb_reserve_back(1, 1)
        cb_push_back(1, 1)

    def second():
        cb_wait_front(1, 1)
        cb_reserve_back(0, 1)
        cb_push_back(0, 1)

    program = Program("cyclic")
    core = ttnn.CoreCoord(0, 0)
    for index in (0, 1):
        program.create_circular_buffer(
            core,
            CircularBufferConfig(4096, {index: DataFormat.Float16_b}).set_page_size(index, 2048),
        )
    program.create_kernel(first, core, ReaderDataMovementConfig())
    program.create_kernel(second, core, ComputeConfig())
    with pytest.raises(DeadlockError) as info:
        device.command_queue.enqueue_program(program)
    msg = str(info.value)
    assert "kernel first (ncrisc)" in msg and "kernel second (trisc)" in msg
    assert "cb_wait_front(cb 0, 1): 0 of 2 pages filled" in msg
    assert "cb_wait_front(cb 1, 1): 0 of 2 pages filled" in msg
    assert "test_host_program.py:" in msg


def test_two_kernels_on_one_processor_is_an_error(device):
    program = Program()
    program.create_kernel(lambda: None, ttnn.CoreCoord(0, 0), ReaderDataMovementConfig(), name="k1")
    program.create_kernel(lambda: None, ttnn.CoreCoord(0, 0), ReaderDataMovementConfig(), name="k2")
    with pytest.raises(DeviceError, match="both run on processor ncrisc"):
        device.command_queue.enqueue_program(program)


def test_circular_buffers_beyond_l1_are_an_error(device):
    program = Program()
    cfg = CircularBufferConfig(1 << 21, {0: DataFormat.Float16_b}).set_page_size(0, 2048)
    program.create_circular_buffer(ttnn.CoreCoord(0, 0), cfg)
    program.create_kernel(lambda: None, ttnn.CoreCoord(0, 0), ReaderDataMovementConfig())
    with pytest.raises(DeviceError, match="grow to"):
        device.command_queue.enqueue_program(program)


def test_semaphores_multicast_and_barrier(device):
    from tilewright.device.kernel_api import (
        get_noc_addr,
        get_noc_multicast_addr,
        get_semaphore,
        my_x,
        my_y,
        noc_semaphore_inc,
        noc_semaphore_set,
        noc_semaphore_set_multicast,
        noc_semaphore_wait,
        read_l1,
    )

    seen = {}

    def worker():
        x = get_arg_val(0)
        sem = get_semaphore(0)
        if x == 0:
            noc_semaphore_wait(sem, 3)  # all others arrived
            noc_semaphore_set(get_semaphore(1), 7)
            first = device.core(1, 0)
            last = device.core(3, 0)
            mcast = get_noc_multicast_addr(
                first.noc_x, first.noc_y, last.noc_x, last.noc_y, get_semaphore(1)
            )
            noc_semaphore_set_multicast(get_semaphore(1), mcast, 3)
        else:
            root = device.core(0, 0)
            noc_semaphore_inc(get_noc_addr(root.noc_x, root.noc_y, sem), 1)
            noc_semaphore_wait(get_semaphore(1), 7)
        seen[(my_x(), my_y())] = int(read_l1(get_semaphore(1), 1, np.uint32)[0])

    program = Program()
    cores = ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(3, 0))
    program.create_semaphore(cores, 0)
    program.create_semaphore(cores, 0)
    k = program.create_kernel(worker, cores, ReaderDataMovementConfig())
    for x in range(4):
        program.set_runtime_args(k, ttnn.CoreCoord(x, 0), [x])
    device.command_queue.enqueue_program(program)
    assert sorted(seen.values()) == [7, 7, 7, 7]


def test_noc_addresses_name_their_chip_and_cross_chip_access_is_an_error():
    from tilewright.device.device import Mesh
    from tilewright.device.kernel_api import get_noc_addr, noc_async_read
    from tilewright.device.noc import chip_tag, decode_unicast, noc_chip_tag
    from tilewright.errors import NocError
    from tilewright.target import board_preset

    mesh = Mesh(board_preset("n300").system_desc)
    seen = {}
    try:
        chip0, chip1 = mesh.devices

        def kernel():
            addr = get_noc_addr(1, 0, 0x20000)  # hand-given coords, on this kernel's chip
            seen["tag"] = noc_chip_tag(addr)
            seen["xyl"] = decode_unicast(addr)
            remote = addr & ~(0xF << 60) | (chip_tag(0) << 60)  # name chip 0 explicitly
            noc_async_read(remote, 0x20000, 32)

        program = Program()
        program.create_kernel(kernel, ttnn.CoreCoord(0, 0), ReaderDataMovementConfig())
        with pytest.raises(NocError, match="targets chip 0 from chip 1"):
            chip1.command_queue.enqueue_program(program)
        assert seen == {"tag": chip_tag(1), "xyl": (1, 0, 0x20000)}

    finally:
        mesh.close()


def test_chip_tags_name_every_chip_they_stand_for():
    from tilewright.device.noc import chip_tag, chips_with_tag

    assert [chip_tag(c) for c in (0, 1, 14, 15, 16, 31)] == [1, 2, 15, 1, 2, 2]
    assert chips_with_tag(chip_tag(1), 2) == "chip 1"
    assert chips_with_tag(chip_tag(1), 32) == "chip 1, 16 or 31"
    assert chips_with_tag(chip_tag(3), 32) == "chip 3 or 18"


def test_common_runtime_args_and_compile_time_args(device):
    from tilewright.device.kernel_api import get_common_arg_val, get_compile_time_arg_val

    seen = []

    def kernel():
        seen.append(
            (
                get_arg_val(0),
                get_common_arg_val(0),
                get_common_arg_val(1),
                get_compile_time_arg_val(1),
            )
        )

    program = Program()
    cores = ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 0))
    k = program.create_kernel(kernel, cores, ReaderDataMovementConfig([5, 6]))
    program.set_runtime_args(k, ttnn.CoreCoord(0, 0), [10])
    program.set_runtime_args(k, ttnn.CoreCoord(1, 0), [11])
    program.set_common_runtime_args(k, [7, 8])
    device.command_queue.enqueue_program(program)
    assert sorted(seen) == [(10, 7, 8, 6), (11, 7, 8, 6)]


def test_write_multicast_reach_and_num_dests(device):
    from tilewright.device.kernel_api import (
        get_noc_multicast_addr,
        noc_async_write_multicast,
        noc_async_write_multicast_loopback_src,
        read_l1,
        write_l1,
    )
    from tilewright.errors import NocError

    got = {}

    def sender():
        x = get_arg_val(0)
        if x == 0:
            write_l1(0x30000, np.arange(8, dtype=np.uint32))
            a, b = device.core(0, 0), device.core(2, 0)
            mc = get_noc_multicast_addr(a.noc_x, a.noc_y, b.noc_x, b.noc_y, 0x30000)
            noc_async_write_multicast(0x30000, mc, 32, 2)  # excludes the sender: 2 destinations
            with pytest.raises(NocError, match="num_dests is 3 but the rectangle reaches 2"):
                noc_async_write_multicast(0x30000, mc, 32, 3)
            noc_async_write_multicast_loopback_src(0x30000, mc, 32, 3)

    def reader():
        got[get_arg_val(0)] = read_l1(0x30000, 8, np.uint32).tolist()

    p1 = Program()
    cores = ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(2, 0))
    k = p1.create_kernel(sender, cores, ReaderDataMovementConfig())
    for x in range(3):
        p1.set_runtime_args(k, ttnn.CoreCoord(x, 0), [x])
    device.command_queue.enqueue_program(p1)
    p2 = Program()
    k = p2.create_kernel(reader, cores, ReaderDataMovementConfig())
    for x in range(3):
        p2.set_runtime_args(k, ttnn.CoreCoord(x, 0), [x])
    device.command_queue.enqueue_program(p2)
    assert got == {x: list(range(8)) for x in range(3)}
