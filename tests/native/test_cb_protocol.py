"""The kernel API's circular-buffer protocol rules (device/cb.py), on both kernel APIs.

Each case is one compute kernel written twice -- C++ (a native kernel) and Python (the same
calls) -- between a Python reader that pushes two tiles into c_0 and nothing else: a
push beyond the reservation, a pop beyond the waited pages, a pack into a slot outside the
reservation and a read outside the waited pages are errors with the same class, message
and rule on both, located at the call; what tt-metal programs legitimately do (pages
reserved by several calls, pushes in parts, a sharded CB pushed without a reserve, a
non-blocking test instead of a wait) runs.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from tilewright.device import cb as cb_rules
from tilewright.device import kernel_api as k
from tilewright.device.coords import CoreCoord
from tilewright.device.formats import DataFormat, encode_elements
from tilewright.device.program import (
    CircularBufferConfig,
    ComputeConfig,
    Program,
    ReaderDataMovementConfig,
)
from tilewright.errors import DFBContractError, KernelError
from tilewright.native.kernels import NativeKernel

CORE = CoreCoord(0, 0)
BF16 = DataFormat.Float16_b


def _run(device, compute):
    program = Program("protocol")
    for index in (0, 16):
        program.create_circular_buffer(
            CORE, CircularBufferConfig(4 * 2048, {index: BF16}).set_page_size(index, 2048)
        )
    tiles = encode_elements(np.ones(2 * 1024, dtype=np.float32), BF16)

    def reader():
        k.cb_reserve_back(0, 2)
        k.write_l1(k.get_write_ptr(0), tiles)
        k.cb_push_back(0, 2)

    program.create_kernel(reader, CORE, ReaderDataMovementConfig())
    program.create_kernel(compute, CORE, ComputeConfig(), name="compute")
    device.command_queue.enqueue_program(program)


# (C++ body, Python body); the last statement is the one that must fail (or not).
CASES = {
    "push_beyond_reservation": (
        "cb_reserve_back(16, 1);\n    cb_push_back(16, 2);",
        lambda: (k.cb_reserve_back(16, 1), k.cb_push_back(16, 2)),
        DFBContractError,
        "cb_push_back(cb 16, 2) pushes more pages than are reserved: cb_reserve_back reserved 1",
        "cb-push-reserved",
    ),
    "pop_beyond_wait": (
        "cb_wait_front(0, 1);\n    cb_pop_front(0, 2);",
        lambda: (k.cb_wait_front(0, 1), k.cb_pop_front(0, 2)),
        DFBContractError,
        "cb_pop_front(cb 0, 2) pops more pages than were waited for: cb_wait_front waited for 1",
        "cb-pop-waited",
    ),
    "pack_outside_reservation": (
        "cb_reserve_back(16, 1);\n    tile_regs_acquire();\n    pack_tile<true>(0, 16, 1);",
        lambda: (k.cb_reserve_back(16, 1), k.tile_regs_acquire(), k.pack_tile(0, 16, 1, True)),
        DFBContractError,
        "pack_tile into cb 16: tile slot 1 is outside the 1 reserved pages at the back",
        "cb-pack-reserved",
    ),
    "sequential_pack_beyond_reservation": (
        "cb_reserve_back(16, 1);\n    tile_regs_acquire();\n    pack_tile(0, 16);\n    pack_tile(0, 16);",
        lambda: (
            k.cb_reserve_back(16, 1),
            k.tile_regs_acquire(),
            k.pack_tile(0, 16),
            k.pack_tile(0, 16),
        ),
        DFBContractError,
        "pack_tile into cb 16: tile slot 1 is outside the 1 reserved pages at the back",
        "cb-pack-reserved",
    ),
    "read_outside_wait": (
        "cb_wait_front(0, 1);\n    tile_regs_acquire();\n    copy_tile(0, 1, 0);",
        lambda: (k.cb_wait_front(0, 1), k.tile_regs_acquire(), k.copy_tile(0, 1, 0)),
        KernelError,
        "tile 1 of cb 0 is not available: 1 pages are waited at the front",
        "cb-read-waited",
    ),
    # -- what tt-metal programs do, accepted --------------------------------------------------
    "reserve_cumulative_then_push": (
        "cb_reserve_back(16, 1);\n    cb_reserve_back(16, 2);\n    cb_push_back(16, 2);",
        lambda: (k.cb_reserve_back(16, 1), k.cb_reserve_back(16, 2), k.cb_push_back(16, 2)),
        None,
        "",
        "",
    ),  # fmt: skip
    "push_in_parts": (
        "cb_reserve_back(16, 3);\n    cb_push_back(16, 1);\n    cb_push_back(16, 1);\n    cb_push_back(16, 1);",
        lambda: (k.cb_reserve_back(16, 3), *(k.cb_push_back(16, 1) for _ in range(3))),
        None,
        "",
        "",
    ),  # fmt: skip
    "sharded_push_without_reserve": (
        "cb_push_back(16, 4);",
        lambda: k.cb_push_back(16, 4),
        None,
        "",
        "",
    ),  # fmt: skip
    "wait_in_parts_then_pops": (
        "cb_wait_front(0, 1);\n    cb_wait_front(0, 2);\n    cb_pop_front(0, 1);\n    cb_pop_front(0, 1);",
        lambda: (
            k.cb_wait_front(0, 1),
            k.cb_wait_front(0, 2),
            k.cb_pop_front(0, 1),
            k.cb_pop_front(0, 1),
        ),
        None,
        "",
        "",
    ),  # fmt: skip
    "available_then_read_and_pop": (
        "while (!cb_pages_available_at_front(0, 2)) {}\n    tile_regs_acquire();\n    copy_tile(0, 1, 0);\n    cb_pop_front(0, 2);",
        lambda: (
            k.cb_pages_available_at_front(0, 2),
            k.tile_regs_acquire(),
            k.copy_tile(0, 1, 0),
            k.cb_pop_front(0, 2),
        ),
        None,
        "",
        "",
    ),  # fmt: skip
}


def _cpp(body: str) -> str:
    return f"#include <cstdint>\nvoid kernel_main() {{\n    {body}\n}}\n"


@pytest.mark.parametrize("engine", ["cpp", "python"])
@pytest.mark.parametrize("case", list(CASES))
def test_protocol_rule_on_both_kernel_apis(device, case, engine):
    cpp_body, py_body, error, message, rule = CASES[case]
    source = _cpp(cpp_body)
    kernel = NativeKernel(source=source, name="compute") if engine == "cpp" else py_body
    if error is None:
        _run(device, kernel)
        return
    with pytest.raises(error) as info:
        _run(device, kernel)
    err = info.value
    assert message in err.message and err.rule == rule, err.message
    if engine == "cpp":  # the C++ line of the failing call (the body's last statement)
        assert err.loc is not None and err.loc.line == source.count("\n") - 1, err.loc
    else:
        assert err.loc is not None and err.loc.file == inspect.getsourcefile(_run)


def test_the_rules_are_functions_the_compiler_can_call():
    assert cb_rules.check_push("out", 2, 2) == 0
    assert cb_rules.check_push("out", 1, 0) == 0  # nothing reserved: an unreserved push
    assert cb_rules.check_push("out", 1, 3) == 2
    with pytest.raises(DFBContractError, match=r"cb_push_back\(out, 2\) pushes more pages"):
        cb_rules.check_push("out", 2, 1)
    assert cb_rules.check_pop("in", 1, 2) == 1
    with pytest.raises(DFBContractError, match=r"cb_pop_front\(in, 3\) pops more pages"):
        cb_rules.check_pop("in", 3, 2)
