"""Rules checked when a raw call is bound to its kernel's DFBs (both engines)."""

from __future__ import annotations

import pytest

from tests.raw.conftest import EXAMPLES, line_of

PROGRAM = """
@ttl.raw.ir
def move(src: ttl.raw.DFB, dst: ttl.raw.DFB):
    raw.dfb_wait(src, 1)
    raw.dfb_reserve(dst, TILES)
    raw.tile_regs_acquire()
    raw.copy_tile(src, 0, 0)
    raw.tile_regs_commit()
    raw.tile_regs_wait()
    raw.pack_tile(0, dst, 0)
    raw.tile_regs_release()
    raw.dfb_push(dst, TILES)
    raw.dfb_pop(src, 1)


@ttl.operation(grid=(1, 1))
def op(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        with a_dfb.reserve() as blk:
            ttl.copy(a[0:1, 0:1], blk).wait()

    @ttl.compute()
    def compute():
        CALL

    @ttl.datamovement()
    def writer():
        with out_dfb.wait() as blk:
            ttl.copy(blk, out[0:1, 0:1]).wait()
"""

CALL = "ttl.raw.call(move, a_dfb, out_dfb)  # the call"


@pytest.mark.parametrize("engine", ["python", "native"])
def test_a_computed_action_beyond_the_dfb_capacity(write_program, run_file, engine):
    path = write_program(PROGRAM.replace("TILES", "4").replace("CALL", CALL))
    status, out, err = run_file(path, engine)
    assert status != 0 and "RESULT" not in out
    assert (
        "RawIRError" in err
        and "ttl.raw.call(move) does reserve(out_dfb, 4) but DFB 'out_dfb' holds 2 tiles "
        "(2 blocks of 1)"
        in err
    ), err
    assert f"{path}:{line_of(path, '# the call')}:" in err


def test_the_valid_program_runs_on_both_engines(write_program, run_file):
    path = write_program(PROGRAM.replace("TILES", "1").replace("CALL", CALL))
    for engine in ("python", "native"):
        status, out, err = run_file(path, engine)
        assert status == 0, err
        got, want = out.split()[1:3]
        assert float(got) == float(want)


HELD = """with a_dfb.wait() as held:
            ttl.raw.call(move, a_dfb, out_dfb)  # the call"""


@pytest.mark.parametrize(
    "engine, kind, message",
    [
        (
            "python",
            "RawIRError",
            "ttl.raw.call(move) runs while the kernel holds block",
        ),
        (
            "native",
            "NotCompilableError",
            "ttl.raw.call(move) runs while the kernel holds blocks of DFB(s) it uses (a_dfb)",
        ),
    ],
)
def test_a_call_while_the_kernel_holds_a_block_of_its_dfb(
    write_program, run_file, engine, kind, message
):
    path = write_program(PROGRAM.replace("TILES", "1").replace("CALL", HELD))
    status, out, err = run_file(path, engine)
    assert status != 0 and "RESULT" not in out
    assert kind in err and message in err, err
    assert f"{path}:{line_of(path, '# the call')}:" in err


@pytest.mark.parametrize(
    "engine, kind", [("python", "DFBContractError"), ("native", "NotCompilableError")]
)
def test_a_second_producer_kernel_of_a_dfb_the_raw_call_produces(tmp_path, run_file, engine, kind):
    """The raw call's computed reserve / push make its kernel out_dfb's producer; a data-movement
    kernel that also reserves out_dfb is the second producer, on both engines."""
    text = (EXAMPLES / "raw_scale_copy.py").read_text()
    text = text.replace(
        "        with out_dfb.wait() as o_blk:\n            ttl.copy(o_blk, out[r : r + 1, c : c + 1]).wait()",
        "        with out_dfb.reserve() as o_blk:  # a second producer\n"
        "            ttl.copy(a[r : r + 1, c : c + 1], o_blk).wait()",
    )
    path = tmp_path / "conflict.py"
    path.write_text(text)
    status, out, err = run_file(path, engine)
    assert status != 0 and "PASS" not in out
    assert kind in err and "DFB 'out_dfb' has two producers" in err, err
    assert "'compute' and 'data_movement'" in err
