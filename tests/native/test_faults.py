"""Native faults and the identity-mapped L1: a bad pointer in a C++ kernel is a located error,
never a dead process; an L1 address is a pointer only on the core that runs."""

from __future__ import annotations

import contextlib
import ctypes
import mmap

import pytest
import torch

from tilewright import ttnn
from tilewright.device.coords import CoreCoord
from tilewright.device.program import (
    DataMovementConfig,
    DataMovementProcessor,
    Program,
    ReaderDataMovementConfig,
)
from tilewright.errors import NativeCrashError
from tilewright.native.kernels import NativeKernel

FAULTS = {
    "beyond_l1": (
        "*reinterpret_cast<volatile uint32_t*>(0x200000) = 1;",
        "0x200000, beyond the 1499136 B of L1",
    ),
    "null": (
        "*reinterpret_cast<volatile uint32_t*>(get_arg_val<uint32_t>(0)) = 1;",
        "0x0, below 0x10000: a null pointer",
    ),
    # A host address that is certainly unmapped: the test holds a PROT_NONE page (any fixed
    # address in the host range may be mapped by the time the test runs).
    "host": (
        "*reinterpret_cast<volatile uint32_t*>("
        "(uint64_t(get_arg_val<uint32_t>(2)) << 32) | get_arg_val<uint32_t>(1)) = 1;",
        "not an L1 address",
    ),
    "divide": (
        "volatile uint32_t zero = get_arg_val<uint32_t>(0); DPRINT << 7 / zero << ENDL();",
        "SIGFPE",
    ),
}


@contextlib.contextmanager
def _inaccessible_page():
    """The address of a page mapped PROT_NONE for the block's duration."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
    libc.mmap.argtypes += [ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    addr = libc.mmap(
        None,
        mmap.PAGESIZE,
        0,  # PROT_NONE (not exported by the mmap module)
        mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
        -1,
        0,
    )
    assert addr not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()
    try:
        yield addr
    finally:
        libc.munmap(addr, mmap.PAGESIZE)


@pytest.mark.parametrize("case", list(FAULTS))
def test_a_native_fault_is_reported_with_kernel_core_line_and_address(device, case):
    body, expected = FAULTS[case]
    source = "#include <cstdint>\nvoid kernel_main() {\n    " + body + "\n}\n"
    program = Program("faulty")
    k = program.create_kernel(
        NativeKernel(source=source, name="faulty"), CoreCoord(3, 2), ReaderDataMovementConfig()
    )
    with _inaccessible_page() as page:
        program.set_runtime_args(k, CoreCoord(3, 2), [0, page & 0xFFFFFFFF, page >> 32])
        with pytest.raises(NativeCrashError) as info:
            device.command_queue.enqueue_program(program)
    err = info.value
    assert "native kernel faulty on core (3, 2) faulted with" in err.message
    assert expected in err.message
    assert err.rule == "native-fault"
    assert err.loc is not None and err.loc.file.endswith("kernel.cpp") and err.loc.line == 3
    # the device keeps working
    ok = Program("ok")
    ok.create_kernel(
        NativeKernel(source="void kernel_main() {}\n", name="ok"),
        CoreCoord(0, 0),
        ReaderDataMovementConfig(),
    )
    device.command_queue.enqueue_program(ok)


ISOLATION = r"""
#include <cstdint>
// Every core stores its id at the same L1 address, lets the others run, and reads it back:
// each core sees its own L1.
void kernel_main() {
    const uint32_t scratch = get_arg_val<uint32_t>(0);
    const uint32_t out_addr = get_arg_val<uint32_t>(1);
    const uint32_t id = get_absolute_logical_y() * 8 + get_absolute_logical_x();
    volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(scratch);
    p[0] = id;
    for (int i = 0; i < 3; ++i) {
        cb_reserve_back(0, 1);  // the two kernels of the core alternate; other cores run between
        cb_push_back(0, 1);
        cb_wait_front(0, 1);
        cb_pop_front(0, 1);
    }
    p[1] = p[0] * 1000 + id;
    noc_async_write(scratch + 4, get_noc_addr_from_bank_id<true>(0, out_addr + 32 * id + 4), 4);
    noc_async_write_barrier();
}
"""


def test_each_core_sees_its_own_l1_through_pointers(device):
    from tilewright.device.formats import DataFormat
    from tilewright.device.program import CircularBufferConfig

    cores = ttnn.CoreRangeSet([ttnn.CoreRange(CoreCoord(0, 0), CoreCoord(7, 1))])
    scratch = ttnn.from_torch(
        torch.zeros(1, 16, dtype=torch.int32),
        dtype=ttnn.int32,
        device=device,
        memory_config=ttnn.L1_MEMORY_CONFIG,
    )
    out = ttnn.from_torch(
        torch.zeros(1, 8 * 16, dtype=torch.int32), dtype=ttnn.int32, device=device
    )
    program = Program("isolation")
    program.create_circular_buffer(
        cores, CircularBufferConfig(64, {0: DataFormat.Float16_b}).set_page_size(0, 32)
    )
    for proc in (DataMovementProcessor.RISCV_0, DataMovementProcessor.RISCV_1):
        k = program.create_kernel(NativeKernel(source=ISOLATION), cores, DataMovementConfig(proc))
        program.set_runtime_args(k, cores, [scratch.buffer_address(), out.buffer_address()])
    device.command_queue.enqueue_program(program)
    got = ttnn.to_torch(out).reshape(-1)[1::8].tolist()
    assert got == [i * 1000 + i for i in range(16)]


def test_kernel_api_errors_name_the_kernel_source_line(device):
    from tilewright.errors import NocError

    source = (
        "#include <cstdint>\n"
        "void kernel_main() {\n"
        "    uint64_t dst = get_noc_addr_from_bank_id<true>(0, 8);\n"
        "    noc_async_write(0x20000, dst, 64);  // 0x20000 and 8 differ modulo 32\n"
        "}\n"
    )
    program = Program("misaligned")
    program.create_kernel(NativeKernel(source=source), CoreCoord(0, 0), ReaderDataMovementConfig())
    with pytest.raises(NocError, match="not aligned alike modulo 32") as info:
        device.command_queue.enqueue_program(program)
    assert info.value.loc is not None and info.value.loc.line == 4
