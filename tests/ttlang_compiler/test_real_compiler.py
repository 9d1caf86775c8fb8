"""The real TT-Lang compiler (tt-lang 1.1.1) compiles our programs; Tilewright runs its C++.

Few programs, each run through the real compiler once or twice (a run costs seconds: torch's
import, the MLIR pipeline, the native build): ``run --compare`` against Tilewright's own
compiler (bit for bit), ``check`` for a rejection with the compiler's message and the user's
line, the spec's scatter-gather (the compiler accepts it; its code deadlocks), zones of the
kernel profiler header in a trace, and one of tt-lang's own tutorials.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.ttlang_compiler.conftest import PROGRAMS, ROOT, tilewright


@pytest.mark.parametrize(
    "program, options",
    [
        (PROGRAMS / "matmul_acc.py", []),
        (ROOT / "examples" / "05_pipe_multicast.py", []),
        (PROGRAMS / "mesh_add.py", ["--num-devices", "2"]),
    ],
    ids=["matmul", "pipe_multicast", "mesh_spmd"],
)
def test_both_compilers_read_back_identical_bits(real_compiler, program, options):
    result = tilewright("run", *options, "--compare", str(program))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "identical" in result.stdout and "compare: identical" in result.stdout


def test_differences_are_listed_per_tensor_with_the_line_that_read_it(real_compiler):
    # tt-lang's kernel rounds a * b into the 16-bit DST before adding c; Tilewright's
    # compiler rounds the whole expression once, when it is stored.
    program = PROGRAMS / "eltwise_grid.py"
    line = next(i for i, text in enumerate(open(program), 1) if "ttnn.to_torch(y)" in text)
    result = tilewright("run", "--compare", str(program))
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"readback 1 ({program}:{line}, bfloat16 [128, 256]):" in result.stdout
    assert "elements differ; largest |difference| 0.0078125" in result.stdout
    assert "compare: the two compilers' runs differ" in result.stdout


def test_check_reports_a_rejection_with_the_compilers_message_and_the_users_line(real_compiler):
    program = ROOT / "examples" / "01_fused_eltwise.py"
    result = tilewright("check", str(program))
    assert result.returncode == 1
    assert f"{program}:65:22: error: tt-lang 1.1.1 rejects this operation" in result.stderr
    assert "Unknown function: ttl.grid_size" in result.stderr
    assert "grid_x, grid_y = ttl.grid_size(dims=2)" in result.stderr
    assert "check:" in result.stderr and "rejects it" in result.stderr


def test_check_accepts_what_the_compiler_accepts(real_compiler):
    result = tilewright("check", str(PROGRAMS / "matmul_acc.py"))
    assert result.returncode == 0, result.stderr
    assert "tt-lang 1.1.1 accepts every operation the program called" in result.stderr
    assert result.stdout == ""  # the compiler's kernel listings are hidden


def test_spec_scatter_gather_is_accepted_by_tt_lang_but_its_code_deadlocks(real_compiler):
    # Spec §Pipe: every node multicasts to its column, itself included, then receives.  The
    # spec and tt-lang-sim run it, and so does Tilewright's own compiler; tt-lang 1.1.1's
    # senders wait for the other receivers' "ready" before any of them receives.
    program = PROGRAMS / "scatter_gather.py"
    ours = tilewright("run", str(program))
    assert ours.returncode == 0 and "PASS scatter_gather" in ours.stdout, ours.stderr
    theirs = tilewright("run", "--compiler", "ttlang", str(program))
    assert theirs.returncode == 1
    assert "DeadlockError" in theirs.stderr and "12 of 12 kernels blocked" in theirs.stderr
    assert "noc_semaphore_wait at L1" in theirs.stderr and "waits for value == 1" in theirs.stderr


SIGNPOST = """
import torch
import ttl
import ttnn


@ttl.operation(grid=(1, 1))
def double(a: ttnn.Tensor, y: ttnn.Tensor):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, y_dfb.reserve() as o:
            with ttl.signpost("add"):
                o.store(x + x)

    @ttl.datamovement()
    def reader():
        with a_dfb.reserve() as x:
            ttl.copy(a[0, 0], x).wait()

    @ttl.datamovement()
    def writer():
        with y_dfb.wait() as o:
            ttl.copy(o, y[0, 0]).wait()


device = ttnn.open_device(device_id=0)
a = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
y = ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
double(a, y)
assert ttnn.to_torch(y).float().eq(2).all()
ttnn.close_device(device)
"""


def test_signposts_of_the_compilers_kernels_are_zones_in_the_trace(real_compiler, tmp_path):
    program = tmp_path / "signpost.py"
    program.write_text(SIGNPOST)
    trace = tmp_path / "trace.json"
    result = tilewright("run", "--compiler", "ttlang", "--trace", str(trace), str(program))
    assert result.returncode == 0, result.stderr
    names = {e["name"] for e in json.loads(trace.read_text())["traceEvents"] if e.get("ph") == "X"}
    assert "zone ttl_add" in names  # tt-lang names the zone of ttl.signpost("add") ttl_add


def test_a_tt_lang_tutorial_runs(real_compiler):
    python = str(real_compiler.python)
    found = subprocess.run(
        [python, "-c", "import ttl.tutorials, os; print(os.path.dirname(ttl.tutorials.__file__))"],
        capture_output=True,
        text=True,
        check=True,
    )
    tutorial = f"{found.stdout.strip()}/broadcast/single_node_broadcast_multitile_blocks.py"
    result = tilewright("run", "--compiler", "ttlang", tutorial)
    assert result.returncode == 0, result.stderr[-3000:]
