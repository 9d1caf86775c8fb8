"""The acceptance programs of ../shared/examples (copied into examples/) behave as documented."""

import re
import subprocess
import sys

import pytest

from tests.e2e.conftest import EXAMPLES


@pytest.mark.parametrize(
    "program",
    [
        "01_fused_eltwise.py",
        "02_matmul_bias.py",
        "03_broadcast_reduce.py",
        "05_pipe_multicast.py",
        "06_semaphore_barrier.py",
        "08_legacy_spellings.py",
    ],
)
def test_example_passes(run_example, program):
    status, out, err = run_example(program)
    name = program.removesuffix(".py")
    assert status == 0, err
    assert out.strip().splitlines()[-1] == f"PASS {name}"


def test_deadlock_example_names_both_kernels_and_their_dfbs(run_example):
    status, out, err = run_example("errors/deadlock.py")
    assert status != 0
    assert "PASS" not in out
    assert "deadlock" in err.lower()
    lines = err.splitlines()
    compute = next(line for line in lines if "kernel compute" in line)
    mover = next(line for line in lines if "kernel mover" in line)
    assert "node (0, 0)" in compute and "deadlock.py:50" in compute
    assert "in_dfb.wait()" in compute and "0 filled blocks (capacity 2 blocks)" in compute
    assert "node (0, 0)" in mover and "deadlock.py:56" in mover
    assert "out_dfb.wait()" in mover and "0 filled blocks (capacity 2 blocks)" in mover


def test_block_state_example_is_diagnosed_at_line_52(run_example):
    status, out, err = run_example("errors/block_state.py")
    assert status != 0
    assert "BlockStateError" in err
    assert re.search(r"block_state\.py:52", err)
    assert "acc_blk" in err and "acc_dfb" in err
    assert "MW" in err and "must-write" in err
    assert "kernel compute" in err and "node (0, 0)" in err


def test_cli_runs_a_program_as_a_subprocess(tmp_path):
    """`python -m tilewright run` resolves `import ttl` / `import ttnn` and exits 0."""
    prog = tmp_path / "hello.py"
    prog.write_text(
        "import ttl, ttnn, sys\n"
        "import tilewright\n"
        "assert ttl is tilewright.ttl and ttnn is tilewright.ttnn\n"
        "print('args', sys.argv[1:])\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "tilewright", "run", str(prog), "a", "--b"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "args ['a', '--b']" in result.stdout


def test_cli_error_exit_status_and_no_traceback():
    result = subprocess.run(
        [sys.executable, "-m", "tilewright", "run", str(EXAMPLES / "errors" / "block_state.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "block_state.py:52" in result.stderr
