"""The ctypes bridge and the kernel-API headers: C++ tt-metal kernels on the host program API."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from tilewright import ttnn
from tilewright.device.formats import DataFormat
from tilewright.device.kernel_api.accessor import tensor_accessor_args
from tilewright.device.program import (
    CircularBufferConfig,
    ComputeConfig,
    DataMovementConfig,
    DataMovementProcessor,
    Program,
    ReaderDataMovementConfig,
    WriterDataMovementConfig,
)
from tilewright.errors import DeadlockError, KernelError
from tilewright.native import include_dir
from tilewright.native.kernels import NativeKernel

CPP = Path(__file__).resolve().parent / "cpp"
INCLUDE = Path(include_dir())
CB_A, CB_B, CB_OUT = 0, 1, 16


def build_add_program(a, b, out, cores):
    program = Program("native_eltwise_add")
    for index in (CB_A, CB_B, CB_OUT):
        cfg = CircularBufferConfig(2 * 2048, {index: DataFormat.Float16_b}).set_page_size(
            index, 2048
        )
        program.create_circular_buffer(cores, cfg)
    cta = [CB_A, CB_B, *tensor_accessor_args(a.buffer), *tensor_accessor_args(b.buffer)]
    r = program.create_kernel(
        NativeKernel(CPP / "reader.cpp"), cores, ReaderDataMovementConfig(cta)
    )
    c = program.create_kernel(NativeKernel(CPP / "add.cpp"), cores, ComputeConfig())
    w = program.create_kernel(
        NativeKernel(CPP / "writer.cpp"),
        cores,
        WriterDataMovementConfig(tensor_accessor_args(out.buffer)),
    )
    coords = cores.cores()
    per, rem = divmod(a.buffer.num_pages, len(coords))
    start = 0
    for i, core in enumerate(coords):
        count = per + (1 if i < rem else 0)
        program.set_runtime_args(r, core, [a.buffer_address(), b.buffer_address(), start, count])
        program.set_runtime_args(c, core, [count])
        program.set_runtime_args(w, core, [out.buffer_address(), start, count])
        start += count
    return program


@pytest.mark.parametrize("sharded_a", [False, True], ids=["interleaved", "sharded"])
def test_cpp_reader_compute_writer_match_torch(device, sharded_a):
    torch.manual_seed(0)
    a_h, b_h = torch.randn(256, 64).to(torch.bfloat16), torch.randn(256, 64).to(torch.bfloat16)
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    grid = ttnn.CoreGrid(y=1, x=4)
    a_cfg = (
        ttnn.create_sharded_memory_config((256, 64), grid, ttnn.ShardStrategy.HEIGHT)
        if sharded_a
        else ttnn.DRAM_MEMORY_CONFIG
    )
    a = ttnn.from_torch(a_h, memory_config=a_cfg, **kw)
    b = ttnn.from_torch(b_h, memory_config=ttnn.DRAM_MEMORY_CONFIG, **kw)
    out = ttnn.from_torch(torch.zeros(256, 64), memory_config=ttnn.DRAM_MEMORY_CONFIG, **kw)
    device.command_queue.enqueue_program(build_add_program(a, b, out, grid.to_core_range_set()))
    assert torch.equal(ttnn.to_torch(out), (a_h.float() + b_h.float()).to(torch.bfloat16))
    a.deallocate()


def test_many_kernels_blocked_inside_native_code_at_once(device):
    """64 cores x 2 kernels exchange 40 pages through one-page CBs: every page blocks natively."""
    pages = 40
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(7, 7))])
    program = Program("pingpong")
    program.create_circular_buffer(
        cores, CircularBufferConfig(64, {0: DataFormat.UInt32}).set_page_size(0, 64)
    )
    program.create_semaphore(cores, 0)
    kernel = NativeKernel(CPP / "pingpong.cpp")
    p = program.create_kernel(
        kernel,
        cores,
        DataMovementConfig(DataMovementProcessor.RISCV_1, defines=(("PRODUCER", "1"),)),
        name="producer",
    )
    c = program.create_kernel(
        kernel,
        cores,
        DataMovementConfig(DataMovementProcessor.RISCV_0, defines=(("PRODUCER", "0"),)),
        name="consumer",
    )
    program.set_runtime_args(p, cores, [pages])
    program.set_runtime_args(c, cores, [pages])
    result = device.command_queue.enqueue_program(program)
    assert len(result.stats) == 128 and all(s.waits > 0 for s in result.stats)
    for x in range(8):
        for y in range(8):
            core = device.core(x, y)
            got = int(core.l1_words(device.semaphore_address(0))[0])
            assert got == sum(range(pages)) + pages * x


def test_semaphores_multicast_and_dprint(device, capsys):
    row = 6
    cores = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 2), ttnn.CoreCoord(row - 1, 2))])
    program = Program("barrier")
    program.create_semaphore(cores, 0)
    program.create_semaphore(cores, 0)
    k = program.create_kernel(NativeKernel(CPP / "barrier.cpp"), cores, ReaderDataMovementConfig())
    first, last = device.core(0, 2), device.core(row - 1, 2)
    program.set_runtime_args(k, cores, [last.noc_x, first.noc_y, first.noc_x, row - 1])
    device.command_queue.enqueue_program(program)
    assert int(first.l1_words(device.semaphore_address(1))[0]) == row - 1
    assert f"sender saw {row - 1} answers" in capsys.readouterr().out


def test_deadlock_inside_native_code_is_reported_and_unwound(device):
    program = Program("stuck")
    core = ttnn.CoreCoord(3, 3)
    program.create_circular_buffer(
        core, CircularBufferConfig(2048, {0: DataFormat.Float16_b}).set_page_size(0, 2048)
    )
    program.create_kernel(
        NativeKernel(CPP / "deadlock.cpp"), core, ReaderDataMovementConfig(), name="stuck"
    )
    with pytest.raises(DeadlockError) as info:
        device.command_queue.enqueue_program(program)
    assert "kernel stuck (ncrisc)" in str(info.value) and "cb_wait_front(cb 0, 1)" in str(
        info.value
    )
    assert "0 of 1 pages filled" in str(info.value)
    assert f"blocked at {CPP / 'deadlock.cpp'}:14" in str(info.value)  # the C++ line that waits
    # The engine unwound the native frames (GreenletExit through the C++): the device still runs.
    test_many_kernels_blocked_inside_native_code_at_once(device)


def test_cpp_exception_in_a_native_kernel(device, tmp_path):
    src = tmp_path / "thrower.cpp"
    src.write_text(
        '#include <stdexcept>\n#include "api/dataflow/dataflow_api.h"\n'
        'void kernel_main() { throw std::logic_error("kaboom"); }\n'
    )
    program = Program("thrower")
    program.create_kernel(NativeKernel(src), ttnn.CoreCoord(0, 0), ReaderDataMovementConfig())
    with pytest.raises(
        KernelError, match=re.escape("a C++ exception escaped native kernel thrower: kaboom")
    ):
        device.command_queue.enqueue_program(program)


def test_bad_handle_is_a_kernel_error(device, tmp_path):
    src = tmp_path / "badhandle.cpp"
    src.write_text(
        '#include "api/dataflow/dataflow_api.h"\n'
        "void kernel_main() { TensorAccessor<tw::RuntimeDistribution> t(tw::HandleTag{}, 99);\n"
        "  (void)t.get_noc_addr(0); }\n"
    )
    program = Program("badhandle")
    program.create_kernel(NativeKernel(src), ttnn.CoreCoord(0, 0), ReaderDataMovementConfig())
    with pytest.raises(KernelError, match="tensor-accessor handle 99, which is not valid here"):
        device.command_queue.enqueue_program(program)


def test_compute_api_in_a_data_movement_kernel_cannot_compile(device, tmp_path):
    from tilewright.errors import NativeBuildError

    src = tmp_path / "mixed.cpp"
    src.write_text(
        '#include "api/compute/compute_kernel_api.h"\n#include "api/dataflow/dataflow_api.h"\n'
        "namespace NAMESPACE { void MAIN {} }\n"
    )
    program = Program("mixed")
    program.create_kernel(NativeKernel(src), ttnn.CoreCoord(0, 0), ComputeConfig())
    with pytest.raises(
        NativeBuildError,
        match="is the data-movement kernel API; a compute kernel cannot include it",
    ):
        device.command_queue.enqueue_program(program)


# -- the headers and the bridge table agree (one source of truth each) -------------------------


def header_texts():
    return {p.relative_to(INCLUDE).as_posix(): p.read_text() for p in INCLUDE.rglob("*.h")}


def test_both_header_spellings_exist():
    files = header_texts()
    for rel in files:
        if rel.startswith("api/compute/") and rel != "api/compute/eltwise_unary/sfpu.h":
            old = "compute_kernel_api/" + rel[len("api/compute/") :]
            if rel != "api/compute/compute_kernel_api.h":
                assert old in files, old
    for spelled in (
        "dataflow_api.h",
        "api/dataflow/dataflow_api.h",
        "compute_kernel_api.h",
        "api/compute/compute_kernel_api.h",
        "debug/dprint.h",
        "api/debug/dprint.h",
        "api/tensor/tensor_accessor.h",
        "api/tensor/local_tensor_accessor.h",
        "api/tensor/noc_traits.h",
        "hostdevcommon/kernel_structs.h",
    ):
        assert spelled in files, spelled
