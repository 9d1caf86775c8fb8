"""``constexpr`` CB descriptors: ``get_tile_size(cb)`` / ``get_dataformat(cb)`` as constant
expressions, from the CB table each kernel's build sees (``device.cb.kernel_cb_table``,
``TW_CB_TABLE`` in ``native/kernels.py``), as tt-metal's JIT build generates it.

A NoC tile transfer in the shape of tt-metal's ``NoC_tile_transfer`` example (DRAM -> core A
-> NoC -> core B -> DRAM) sizes every copy with the constexpr tile size: per data format the
bytes must survive unchanged, which they only do when the build key follows the CB formats
(the same kernel sources are built once per format).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from tilewright import ttnn
from tilewright.device.cb import kernel_cb_table
from tilewright.device.coords import CoreCoord, CoreRange, CoreRangeSet
from tilewright.device.formats import DataFormat
from tilewright.device.program import (
    CircularBufferConfig,
    Program,
    ReaderDataMovementConfig,
    WriterDataMovementConfig,
)
from tilewright.errors import NativeBuildError
from tilewright.native.kernels import NativeKernel

KERNELS = Path(__file__).resolve().parent / "kernels" / "tile_transfer"
A, B = CoreCoord(0, 0), CoreCoord(1, 0)

FORMATS = [
    (ttnn.bfloat16, DataFormat.Float16_b, 2048),
    (ttnn.float32, DataFormat.Float32, 4096),
    (ttnn.bfloat8_b, DataFormat.Bfp8_b, 1088),
]


def one(core: CoreCoord) -> CoreRangeSet:
    return CoreRangeSet([CoreRange(core, core)])


def transfer(device, src, dst, fmt: DataFormat, tile_bytes: int, count: int) -> None:
    both = CoreRangeSet([CoreRange(A, B)])
    program = Program("tile_transfer")
    for index, pages in ((0, 2), (1, 1)):
        cfg = CircularBufferConfig(pages * tile_bytes, {index: fmt}).set_page_size(
            index, tile_bytes
        )
        program.create_circular_buffer(both, cfg)
    free_sem = program.create_semaphore(one(A), 0)
    data_sem = program.create_semaphore(one(B), 0)
    pa = device.worker_core_from_logical_core(A)
    pb = device.worker_core_from_logical_core(B)
    kernels = [
        ("reader_dram.cpp", A, ReaderDataMovementConfig([0]), [src.buffer_address(), count]),
        (
            "sender.cpp",
            A,
            WriterDataMovementConfig([0, 1]),
            [pb.x, pb.y, count, free_sem, data_sem],
        ),
        ("receiver.cpp", B, ReaderDataMovementConfig([1]), [pa.x, pa.y, count, free_sem, data_sem]),
        ("writer_dram.cpp", B, WriterDataMovementConfig([1]), [dst.buffer_address(), count]),
    ]
    for name, core, config, args in kernels:
        handle = program.create_kernel(NativeKernel(KERNELS / name), one(core), config)
        program.set_runtime_args(handle, core, args)
    device.command_queue.enqueue_program(program)


@pytest.mark.parametrize("dtype, fmt, tile_bytes", FORMATS, ids=["bf16", "fp32", "bfp8_b"])
def test_tile_transfer_with_constexpr_tile_size(device, dtype, fmt, tile_bytes):
    torch.manual_seed(3)
    host = torch.randn(64, 128)
    src = ttnn.from_torch(host, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)
    dst = ttnn.from_torch(torch.zeros(64, 128), dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)
    transfer(device, src, dst, fmt, tile_bytes, src.buffer.num_pages)
    expected = ttnn.to_torch(src).float().numpy()
    assert np.array_equal(ttnn.to_torch(dst).float().numpy(), expected)
    assert not np.array_equal(expected, np.zeros_like(expected))


def test_cb_table_of_a_kernel(device):
    """Indices configured on the kernel's cores, with their tile descriptors; an index whose
    format differs between the kernel's cores is left out (no constant for it)."""
    both = CoreRangeSet([CoreRange(A, B)])
    program = Program("table")
    program.create_circular_buffer(
        both, CircularBufferConfig(2176, {3: DataFormat.Bfp8_b}).set_page_size(3, 1088)
    )
    program.create_circular_buffer(
        one(A), CircularBufferConfig(4096, {5: DataFormat.Float16_b}).set_page_size(5, 2048)
    )
    program.create_circular_buffer(
        one(B), CircularBufferConfig(4096, {5: DataFormat.Float32}).set_page_size(5, 4096)
    )
    cbs = program.circular_buffers
    bfp8, bf16 = int(DataFormat.Bfp8_b), int(DataFormat.Float16_b)
    assert kernel_cb_table(device, cbs, one(A)) == (
        (3, bfp8, 1088, 1024, 4),
        (5, bf16, 2048, 1024, 4),
    )
    assert kernel_cb_table(device, cbs, both) == ((3, bfp8, 1088, 1024, 4),)
    assert kernel_cb_table(device, cbs, one(CoreCoord(2, 0))) == ()


CONSTEXPR_UNCONFIGURED = """
void kernel_main() {
    constexpr uint32_t size = get_tile_size(7);
    DPRINT << size << ENDL();
}
"""


def test_constexpr_tile_size_of_an_unconfigured_cb_is_a_build_error(device):
    program = Program("unconfigured")
    program.create_circular_buffer(
        one(A), CircularBufferConfig(2048, {0: DataFormat.Float16_b}).set_page_size(0, 2048)
    )
    program.create_kernel(
        NativeKernel(source=CONSTEXPR_UNCONFIGURED), one(A), ReaderDataMovementConfig()
    )
    with pytest.raises(NativeBuildError) as info:
        device.command_queue.enqueue_program(program)
    message = info.value.message
    assert "cb_not_configured_alike_on_every_core_of_this_kernel" in message
    assert "kernel.cpp:3" in message


RUNTIME_TILE_SIZE = """
void kernel_main() {
    const uint32_t size = get_tile_size(5);
    *reinterpret_cast<volatile uint32_t*>(get_arg_val<uint32_t>(0)) = size;
}
"""


def test_runtime_tile_size_reads_the_cores_own_cb(device):
    """An index whose format differs between the kernel's cores has no constant, and a
    run-time ``get_tile_size`` answers per core (the format's tile size, not the page)."""
    both = CoreRangeSet([CoreRange(A, B)])
    scratch = ttnn.from_torch(
        torch.zeros(1, 256, dtype=torch.int32),
        dtype=ttnn.int32,
        layout=ttnn.ROW_MAJOR_LAYOUT,
        device=device,
        memory_config=ttnn.L1_MEMORY_CONFIG,
    )
    program = Program("per_core")
    program.create_circular_buffer(
        one(A), CircularBufferConfig(4352, {5: DataFormat.Bfp8_b}).set_page_size(5, 4352)
    )
    program.create_circular_buffer(
        one(B), CircularBufferConfig(4096, {5: DataFormat.Float32}).set_page_size(5, 4096)
    )
    handle = program.create_kernel(
        NativeKernel(source=RUNTIME_TILE_SIZE), both, ReaderDataMovementConfig()
    )
    program.set_runtime_args(handle, both, [scratch.buffer_address()])
    device.command_queue.enqueue_program(program)
    words = {c: device.core(c.x, c.y).l1_words(scratch.buffer_address())[0] for c in (A, B)}
    assert words == {A: 1088, B: 4096}
