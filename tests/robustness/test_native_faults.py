"""Native code that tries to end the process or reach another core's L1.

``exit()``, ``_exit()``, ``quick_exit()``, ``abort()`` and failed ``assert()``s in a C++
kernel or an external C++ function end that run with a located error; the process and
the device keep working.  An L1 range past the end of a core's L1 -- through a pointer
(the identity window) or through a kernel-API call (whose host-form address would reach
the neighbouring core's memory) -- is reported with core, kernel and address, and the
neighbouring cores' L1 is untouched.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from tilewright import ttl, ttnn
from tilewright.device.coords import CoreCoord
from tilewright.device.program import Program, ReaderDataMovementConfig
from tilewright.errors import NativeCrashError, NocError
from tilewright.native.kernels import NativeKernel

HERE = os.path.dirname(os.path.abspath(__file__))
CPP = os.path.join(HERE, "cpp")
CORE = CoreCoord(1, 1)

PRELUDE = (
    "#include <cassert>\n#include <cstdint>\n#include <cstdlib>\n#include <exception>\n#include <unistd.h>\n"
    "#define ARG(i) get_arg_val<uint32_t>(i)\nvoid kernel_main() {\n"
)  # the body is on line 8

EXITS = {
    "exit": ("exit(3);", "native-exit", "called exit(3)"),
    "_exit": ("_exit(4);", "native-exit", "called _exit(4)"),
    "_Exit": ("_Exit(5);", "native-exit", "called _Exit(5)"),
    "quick_exit": ("quick_exit(6);", "native-exit", "called quick_exit(6)"),
    "abort": ("std::abort();", "native-abort", "called abort()"),
    "assert": (
        "assert(get_arg_val<uint32_t>(0) == 7);",
        "native-abort",
        "assertion `get_arg_val<uint32_t>(0) == 7` failed",
    ),
    "terminate": ("std::terminate();", "native-fault", "SIGABRT"),
}


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(device_id=0, board="n150")  # its L1 size is in the tests
    yield dev
    ttnn.close_device(dev)


def _run(device, body: str, name: str = "quitter", core: CoreCoord = CORE, args=(0,)):
    program = Program(name)
    k = program.create_kernel(
        NativeKernel(source=PRELUDE + "    " + body + "\n}\n", name=name),
        core,
        ReaderDataMovementConfig(),
    )
    program.set_runtime_args(k, core, list(args))
    device.command_queue.enqueue_program(program)


def _still_works(device) -> None:
    _run(device, "", "ok")
    t = ttnn.from_torch(torch.arange(16.0).reshape(4, 4), device=device)
    assert torch.equal(ttnn.to_torch(t), torch.arange(16.0).reshape(4, 4))


@pytest.mark.parametrize("case", list(EXITS))
def test_exit_and_abort_in_a_cpp_kernel_end_the_run_at_the_call(device, case):
    body, rule, text = EXITS[case]
    with pytest.raises(NativeCrashError) as info:
        _run(device, body)
    err = info.value
    assert err.rule == rule
    assert "native kernel quitter on core (1, 1)" in err.message and text in err.message
    if case != "terminate":  # abort() inside libstdc++: no kernel line
        assert err.loc is not None and err.loc.file.endswith("kernel.cpp") and err.loc.line == 8
    _still_works(device)


@pytest.mark.parametrize(
    "body",
    [
        "struct R { static int f(int n) { volatile char b[512]; b[0] = char(n); "
        "return f(n + 1) + b[0]; } }; DPRINT << R::f(0) << ENDL();",
        "volatile char big[4 << 20]; big[0] = 1; DPRINT << int(big[0]) << ENDL();",
    ],
    ids=["deep recursion", "a 4 MiB local array"],
)
def test_a_stack_overflow_is_named_as_one(device, body):
    with pytest.raises(NativeCrashError) as info:
        _run(device, body)
    assert "SIGSEGV" in info.value.message and "stack overflow" in info.value.message
    _still_works(device)


@ttl.operation(grid=(1, 1))
def quitting_extern(a: ttnn.Tensor) -> None:
    @ttl.datamovement()
    def dm():
        ttl.call_extern_func("stuck.hpp", "quit", func_args=[9], include_paths=[CPP])  # CALL


def test_exit_in_an_external_function_is_reported_at_the_call(device):
    a = ttnn.from_torch(torch.zeros(32, 32), layout=ttnn.TILE_LAYOUT, device=device)
    with pytest.raises(NativeCrashError) as info:
        quitting_extern(a)
    err = info.value
    assert err.rule == "native-exit"
    assert "called exit(9)" in err.message and "stuck.hpp" in err.message
    with open(__file__) as f:
        call = next(i for i, line in enumerate(f, 1) if "# CALL" in line)
    assert err.loc is not None and err.loc.file == __file__ and err.loc.line == call
    _still_works(device)


# -- L1 bounds: nothing reaches the neighbouring core -----------------------------------------

# (kernel body, error type, rule or None, text): each tries to touch memory past the end of
# its core's L1 (the neighbour's, in the device's arena) or below the firmware boundary.
L1_SIZE = 1499136  # the n150 preset's L1
SLOT = 1507328  # cores' L1s in the arena: L1 rounded up to 64 KiB
OUT_OF_L1 = {
    "pointer past the end": (
        f"*reinterpret_cast<volatile uint32_t*>({L1_SIZE} + 64) = 0xdead;",
        NativeCrashError,
        "native-fault",
        "beyond the 1499136 B of L1",
    ),
    "pointer far past the end": (
        "*reinterpret_cast<volatile uint32_t*>(0x3fff00) = 0xdead;",
        NativeCrashError,
        "native-fault",
        "beyond the 1499136 B of L1",
    ),
    "pointer below the window": (
        "*reinterpret_cast<volatile uint32_t*>(0x8000) = 0xdead;",
        NativeCrashError,
        "native-fault",
        "firmware region",
    ),
    "noc read into past the end": (
        f"noc_async_read(get_noc_addr(0x20000), {L1_SIZE} - 32, 64); noc_async_read_barrier();",
        NocError,
        None,
        "is invalid on core (1, 1)",
    ),
    "noc write to a neighbour past its end": (
        f"noc_async_write(0x20000, get_noc_addr(ARG(1), ARG(2), {L1_SIZE} - 16), 64);",
        NocError,
        None,
        "outside the 1499136 B L1 of core",
    ),
    "semaphore past the end": (
        f"noc_semaphore_set(reinterpret_cast<volatile uint32_t*>({L1_SIZE}), 1);",
        None,
        None,
        None,
    ),
    "multicast semaphore past the end": (
        "noc_semaphore_inc_multicast(get_noc_multicast_addr(ARG(1), ARG(2), ARG(3), ARG(2), "
        f"{SLOT} + 16), 1, 2);",  # the next core's word 4 in host form
        NocError,
        None,
        "is not a valid L1 word",
    ),
}


@pytest.mark.parametrize("case", list(OUT_OF_L1))
def test_an_l1_range_past_the_core_is_reported_and_the_neighbours_are_untouched(device, case):
    body, exc_type, rule, text = OUT_OF_L1[case]
    canary = np.frombuffer(b"TWCANARY" * 512, dtype=np.uint8)  # the first 4 KiB of each core
    for core in device.cores:
        core.l1[:4096] = canary
    right, next_right = device.core(CoreCoord(2, 1)), device.core(CoreCoord(3, 1))
    args = (0, right.noc_x, right.noc_y, next_right.noc_x)  # NoC coordinates of (2, 1), (3, 1)
    with pytest.raises((NativeCrashError, NocError)) as info:
        _run(device, body, "reacher", args=args)
    err = info.value
    if exc_type is not None:
        assert isinstance(err, exc_type), err
        assert text in err.message
    if rule is not None:
        assert err.rule == rule
    assert "core (1, 1)" in err.message or "(1, 1)" in "\n".join(err.__notes__)
    for core in device.cores:  # nobody's L1 start (the neighbour of every core's end) moved
        assert np.array_equal(core.l1[:4096], canary), core.logical
    _still_works(device)
