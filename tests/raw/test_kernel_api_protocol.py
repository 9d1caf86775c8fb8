"""The kernel API's protocol rules in raw IR functions: the same error on both engines.

The Python engine runs a raw function through the Python kernel API (the IR interpreter),
the compiled engine through the C++ runtime (or, for a push / pop the lowering can see,
ahead of time): a push beyond the reservation, a pop beyond the waited pages, a pack into
a slot outside the reservation and a read outside the waited pages report the same class,
message and line on both (issue 26: the first ran silently with half the output garbage on
the Python engine, the pack swapped output tiles on every engine).
"""

from __future__ import annotations

import pytest

from tests.raw.conftest import line_of

PROGRAM = """
@ttl.raw.ir
def move(src: ttl.raw.DFB, dst: ttl.raw.DFB):
    raw.dfb_wait(src, WAIT)
    raw.dfb_reserve(dst, 1)
    raw.tile_regs_acquire()
    raw.copy_tile(src, READ, 0)  # the read
    raw.tile_regs_commit()
    raw.tile_regs_wait()
    raw.pack_tile(0, dst, SLOT)  # the pack
    raw.tile_regs_release()
    raw.dfb_push(dst, PUSH)  # the push
    raw.dfb_pop(src, POP)  # the pop


@ttl.operation(grid=(1, 1))
def op(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        for _ in range(2):
            with a_dfb.reserve() as blk:
                ttl.copy(a[0:1, 0:1], blk).wait()

    @ttl.compute()
    def compute():
        ttl.raw.call(move, a_dfb, out_dfb)

    @ttl.datamovement()
    def writer():
        with out_dfb.wait() as blk:
            ttl.copy(blk, out[0:1, 0:1]).wait()
"""

VALID = {"WAIT": "1", "READ": "0", "SLOT": "0", "PUSH": "1", "POP": "1"}

CASES = {
    "push_beyond_reservation": (
        {"PUSH": "2", "POP": "1"},
        "DFBContractError",
        "cb_push_back(out_dfb, 2) pushes more pages than are reserved: cb_reserve_back reserved 1",
        "# the push",
    ),
    "pop_beyond_wait": (
        {"POP": "2"},
        "DFBContractError",
        "cb_pop_front(a_dfb, 2) pops more pages than were waited for: cb_wait_front waited for 1",
        "# the pop",
    ),
    "pack_outside_reservation": (
        {"SLOT": "1"},
        "DFBContractError",
        "pack_tile into out_dfb: tile slot 1 is outside the 1 reserved pages at the back",
        "# the pack",
    ),
    "read_outside_wait": (
        {"READ": "1"},
        "KernelError",
        "tile 1 of a_dfb is not available: 1 pages are waited at the front",
        "# the read",
    ),
}


def _program(**values: str) -> str:
    text = PROGRAM
    for key, value in {**VALID, **values}.items():
        text = text.replace(key, value)
    return text


@pytest.mark.parametrize("engine", ["python", "native"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_protocol_break_is_the_same_error_on_both_engines(write_program, run_file, engine, case):
    values, kind, message, marker = CASES[case]
    path = write_program(_program(**values))
    status, out, err = run_file(path, engine)
    assert status != 0 and "RESULT" not in out, out
    assert f"{kind}: {path}:{line_of(path, marker)}: error: {message}" in err, err


def test_the_valid_program_runs_on_both_engines(write_program, run_file):
    path = write_program(_program())
    for engine in ("python", "native"):
        status, out, err = run_file(path, engine)
        assert status == 0, err
