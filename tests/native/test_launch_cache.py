"""The launch cache on the native engine: C++ kernels and compiled TT-Lang operations give
the same results and device times on a warm launch as on a fresh one, with other tensors
each call."""

from __future__ import annotations

import pytest
import torch

from tests.native.test_bridge import build_add_program
from tilewright import ttl, ttnn
from tilewright.device import session
from tilewright.device.launch import LAUNCH_CACHE


@pytest.fixture(autouse=True)
def cache_on():
    LAUNCH_CACHE.enabled = True
    yield
    LAUNCH_CACHE.enabled = True


def _dev(device, t: torch.Tensor):
    return ttnn.from_torch(
        t,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=ttnn.DRAM_MEMORY_CONFIG,
    )


def _timeline(result) -> list[tuple[str, str, int, int, int]]:
    return [(s.place, s.kernel, s.cycles, s.blocked_cycles, s.waits) for s in result.stats]


def test_cpp_program_warm_launch_with_other_tensors(device):
    torch.manual_seed(5)
    hosts = [torch.randn(128, 64).to(torch.bfloat16) for _ in range(4)]
    a, b, c, d = (_dev(device, h) for h in hosts)
    out1, out2 = _dev(device, torch.zeros(128, 64)), _dev(device, torch.zeros(128, 64))
    cores = ttnn.CoreGrid(y=2, x=2).to_core_range_set()
    program = build_add_program(a, b, out1, cores)
    LAUNCH_CACHE.enabled = False
    cold = device.command_queue.enqueue_program(program)
    LAUNCH_CACHE.enabled = True
    device.command_queue.enqueue_program(program)  # the plan
    hits = LAUNCH_CACHE.hits
    warm = device.command_queue.enqueue_program(program)
    assert LAUNCH_CACHE.hits == hits + 1
    assert _timeline(warm) == _timeline(cold)  # the same device time, run by run
    want1 = (hosts[0].float() + hosts[1].float()).to(torch.bfloat16)
    assert torch.equal(ttnn.to_torch(out1), want1)
    reader, _, writer = (k.handle for k in program.kernels)
    for core in cores.cores():
        args = program.get_runtime_args(reader, core)
        args[0], args[1] = c.buffer_address(), d.buffer_address()
        program.get_runtime_args(writer, core)[0] = out2.buffer_address()
    device.command_queue.enqueue_program(program)
    assert LAUNCH_CACHE.hits == hits + 2
    assert torch.equal(
        ttnn.to_torch(out2), (hosts[2].float() + hosts[3].float()).to(torch.bfloat16)
    )
    assert torch.equal(ttnn.to_torch(out1), want1)  # untouched by the second launch


def fused_8x8():
    @ttl.operation(grid=(8, 8))
    def fused(a, b, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
        cols = a.shape[1] // 32
        per = (a.shape[0] // 32) * cols // 64

        @ttl.datamovement()
        def reader():
            node = ttl.node(dims=1)
            for i in range(per):
                t = node * per + i
                with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
                    ttl.copy(a[t // cols, t % cols], ab).wait()
                    ttl.copy(b[t // cols, t % cols], bb).wait()

        @ttl.compute()
        def compute():
            for _ in range(per):
                with a_dfb.wait() as x, b_dfb.wait() as w, y_dfb.reserve() as o:
                    o.store(x * w + x)

        @ttl.datamovement()
        def writer():
            node = ttl.node(dims=1)
            for i in range(per):
                t = node * per + i
                with y_dfb.wait() as ob:
                    ttl.copy(ob, y[t // cols, t % cols]).wait()

    return fused


def test_ttl_operation_on_64_nodes_warm_calls_with_other_tensors_and_shapes(device):
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = "native"
    try:
        op = fused_8x8()
        torch.manual_seed(6)

        def call(n: int):
            """One call with new tensors; its result bit for bit as with the cache off."""
            a_h, b_h = torch.randn(n, n), torch.randn(n, n)
            a, b, y = _dev(device, a_h), _dev(device, b_h), _dev(device, torch.zeros(n, n))
            op(a, b, y)
            got = ttnn.to_torch(y)
            a_b, b_b = a_h.to(torch.bfloat16).float(), b_h.to(torch.bfloat16).float()
            assert torch.allclose(got.float(), a_b * b_b + a_b, rtol=0.02, atol=0.05)
            LAUNCH_CACHE.enabled = False
            try:
                fresh = _dev(device, torch.zeros(n, n))
                op(a, b, fresh)
            finally:
                LAUNCH_CACHE.enabled = True
            assert torch.equal(got, ttnn.to_torch(fresh))
            return a, b, y, fresh

        call(256)
        hits = LAUNCH_CACHE.hits
        keep = [call(256) for _ in range(3)]  # new tensors (new addresses) each call
        assert LAUNCH_CACHE.hits == hits + 3
        misses = LAUNCH_CACHE.misses
        call(512)  # another shape: another program, set up from scratch
        assert LAUNCH_CACHE.misses == misses + 1
        call(256)  # back to the first shape's program: its plan again
        assert LAUNCH_CACHE.hits == hits + 4
        del keep
    finally:
        session.OPTIONS.engine = saved


def test_a_header_edited_between_launches_rebuilds_and_sets_up_again(device, tmp_path):
    """A warm launch still checks its kernels' headers: an edit rebuilds the kernel, and
    the launch sets up with the new object instead of reusing the plan's entry points."""
    from tilewright.device.program import Program, ReaderDataMovementConfig
    from tilewright.native.kernels import NativeKernel

    header = tmp_path / "value.hpp"
    header.write_text("#pragma once\ninline uint32_t value() { return 41; }\n")
    (tmp_path / "store.cpp").write_text(
        '#include "value.hpp"\n'
        "void kernel_main() {\n"
        "    *reinterpret_cast<volatile uint32_t*>(get_arg_val<uint32_t>(0)) = value();\n"
        "}\n"
    )
    addr = device.l1_unreserved_base
    program = Program("store")
    k = program.create_kernel(
        NativeKernel(tmp_path / "store.cpp"), ttnn.CoreCoord(0, 0), ReaderDataMovementConfig()
    )
    program.set_runtime_args(k, ttnn.CoreCoord(0, 0), [addr])
    core = device.core(0, 0)
    device.command_queue.enqueue_program(program)
    device.command_queue.enqueue_program(program)
    assert int(core.l1_words(addr)[0]) == 41
    # another size too: the stat signature changes even on a coarse-mtime file system
    header.write_text("#pragma once\ninline uint32_t value() { return 4242; }\n")
    misses = LAUNCH_CACHE.misses
    device.command_queue.enqueue_program(program)
    assert LAUNCH_CACHE.misses == misses + 1
    assert int(core.l1_words(addr)[0]) == 4242
