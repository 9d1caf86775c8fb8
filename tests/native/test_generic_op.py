"""``ttnn.generic_op`` descriptors: every bad descriptor is a DescriptorError that says what is
wrong; split_work_to_cores over a CoreRangeSet; kernel source given as text."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tilewright import ttnn
from tilewright.device.coords import CoreCoord, CoreRange, CoreRangeSet
from tilewright.errors import DescriptorError

KERNELS = Path(__file__).resolve().parent / "kernels"


def cores(x0, y0, x1, y1) -> CoreRangeSet:
    return CoreRangeSet([CoreRange(CoreCoord(x0, y0), CoreCoord(x1, y1))])


def cb(index, core_ranges, total=4096, page=2048):
    return ttnn.CBDescriptor(
        total, core_ranges, [ttnn.CBFormatDescriptor(index, ttnn.bfloat16, page)]
    )


def kernel(core_ranges, runtime_args=None, config=None, source="writer_unary.cpp", **kw):
    return ttnn.KernelDescriptor(
        kernel_source=str(KERNELS / source),
        core_ranges=core_ranges,
        runtime_args=runtime_args,
        config=config or ttnn.WriterConfigDescriptor(),
        **kw,
    )


@pytest.fixture
def out(device):
    return ttnn.from_torch(
        torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device
    )


BAD = {
    "overlapping_cbs": (
        lambda: ttnn.ProgramDescriptor(cbs=[cb(0, cores(0, 0, 1, 1)), cb(0, cores(1, 1, 2, 2))]),
        "cbs[1] and cbs[0] both configure circular buffer index 0 on overlapping cores",
    ),
    "cb_index_twice": (
        lambda: ttnn.ProgramDescriptor(
            cbs=[
                ttnn.CBDescriptor(
                    4096,
                    cores(0, 0, 0, 0),
                    [
                        ttnn.CBFormatDescriptor(3, ttnn.bfloat16, 2048),
                        ttnn.CBFormatDescriptor(3, ttnn.float32, 2048),
                    ],
                )
            ]
        ),
        "circular buffer index 3 is used twice in one CBDescriptor",
    ),
    "page_size": (
        lambda: ttnn.ProgramDescriptor(cbs=[cb(0, cores(0, 0, 0, 0), total=3000)]),
        "total_size 3000 B is not a multiple of the page size 2048 B",
    ),
    "args_outside": (
        lambda: ttnn.ProgramDescriptor(
            kernels=[kernel(cores(0, 0, 1, 0), runtime_args=[[[1]], [[2]], [[3]]])]
        ),
        "runtime args for core (2, 0), which is not in the kernel's core ranges",
    ),
    "too_many_args": (
        lambda: ttnn.ProgramDescriptor(
            kernels=[
                kernel(
                    cores(0, 0, 0, 0),
                    runtime_args=[[list(range(300))]],
                    common_runtime_args=list(range(42)),
                )
            ]
        ),
        "core (0, 0) has 300 runtime args and 42 common ones; at most 341",
    ),
    "two_on_one_processor": (
        lambda: ttnn.ProgramDescriptor(
            kernels=[kernel(cores(0, 0, 1, 1)), kernel(cores(1, 1, 3, 3))]
        ),
        "both run on RISCV_0 of overlapping cores",
    ),
    "missing_file": (
        lambda: ttnn.ProgramDescriptor(
            kernels=[kernel(cores(0, 0, 0, 0), source="no_such_kernel.cpp")]
        ),
        "kernel file",
    ),
    "bad_config": (
        lambda: ttnn.ProgramDescriptor(kernels=[kernel(cores(0, 0, 0, 0), config="reader")]),
        "config must be a ReaderConfigDescriptor",
    ),
    "bad_format": (
        lambda: ttnn.ProgramDescriptor(
            cbs=[
                ttnn.CBDescriptor(
                    4096, cores(0, 0, 0, 0), [ttnn.CBFormatDescriptor(0, "bf16", 2048)]
                )
            ]
        ),
        "data format 'bf16' is not a ttnn data type",
    ),
    "bad_runtime_args": (
        lambda: ttnn.ProgramDescriptor(kernels=[kernel(cores(0, 0, 0, 0), runtime_args=7)]),
        "runtime_args must be indexed [x][y]",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_descriptor_is_a_descriptor_error(out, case):
    make, message = BAD[case]
    with pytest.raises(DescriptorError) as info:
        ttnn.generic_op([out], make())
    assert message in info.value.message
    assert info.value.rule == "program-descriptor"
    assert info.value.loc is not None and info.value.loc.file == __file__


def test_generic_op_needs_a_program_descriptor(out):
    with pytest.raises(DescriptorError, match="needs a ttnn.ProgramDescriptor"):
        ttnn.generic_op([out], {"kernels": []})


def test_kernel_source_as_text_and_split_work_over_a_core_range_set(device):
    crs = CoreRangeSet(
        [CoreRange(CoreCoord(0, 0), CoreCoord(1, 0)), CoreRange(CoreCoord(5, 5), CoreCoord(5, 6))]
    )
    n, all_cores, g1, g2, n1, n2 = ttnn.split_work_to_cores(crs, 10)
    assert (n, n1, n2) == (4, 3, 2)
    assert [c for c in g1.cores()] == [CoreCoord(0, 0), CoreCoord(1, 0)]
    assert [c for c in g2.cores()] == [CoreCoord(5, 5), CoreCoord(5, 6)]
    assert all_cores.num_cores() == 4
    values = ttnn.from_torch(
        torch.zeros(1, 8 * 4, dtype=torch.int32), dtype=ttnn.int32, device=device
    )
    source = (
        "#include <cstdint>\n"
        "void kernel_main() {\n"
        "    const uint32_t scratch = get_arg_val<uint32_t>(0);\n"
        "    *reinterpret_cast<uint32_t*>(scratch) = get_arg_val<uint32_t>(1);\n"
        "    noc_async_write(scratch, get_noc_addr_from_bank_id<true>(0, get_arg_val<uint32_t>(2)), 4);\n"
        "}\n"
    )
    l1 = ttnn.from_torch(
        torch.zeros(1, 8, dtype=torch.int32),
        dtype=ttnn.int32,
        device=device,
        memory_config=ttnn.L1_MEMORY_CONFIG,
    )
    rt = ttnn.RuntimeArgs()
    for i, c in enumerate(all_cores.cores()):
        rt[c.x][c.y] = [
            l1.buffer_address(),
            (n1 if g1.contains(c) else n2) * 10 + i,
            values.buffer_address() + 32 * i,
        ]
    desc = ttnn.ProgramDescriptor(
        kernels=[
            ttnn.KernelDescriptor(
                kernel_source=source,
                core_ranges=all_cores,
                runtime_args=rt,
                config=ttnn.ReaderConfigDescriptor(),
            )
        ]
    )
    ttnn.generic_op([l1, values], desc)
    assert ttnn.to_torch(values).reshape(-1)[::8].tolist() == [30, 31, 22, 23]


def test_an_api_tilewright_lacks_is_named_in_the_build_error(out):
    from tilewright.errors import NativeBuildError

    source = "#include <cstdint>\nvoid kernel_main() {\n    llk_unpack_tilizeA_B_init(0, 1);\n}\n"
    desc = ttnn.ProgramDescriptor(
        kernels=[
            ttnn.KernelDescriptor(
                kernel_source=source,
                core_ranges=cores(0, 0, 0, 0),
                config=ttnn.ReaderConfigDescriptor(),
            )
        ]
    )
    with pytest.raises(NativeBuildError) as info:
        ttnn.generic_op([out], desc)
    assert (
        "llk_unpack_tilizeA_B_init is not declared: not a tt-metal kernel API Tilewright provides"
        in str(info.value)
    )
