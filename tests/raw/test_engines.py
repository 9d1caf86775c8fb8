"""``ttl.raw.call`` on both engines and through ``tilewright emit``: same results."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess

import pytest
import torch
from click.testing import CliRunner

from tests.raw.conftest import EXAMPLES, line_of
from tilewright.cli.main import cli
from tilewright.cli.runner import run_program
from tilewright.compiler.backend import engine as backend
from tilewright.compiler.backend.build import INCLUDE_DIR
from tilewright.compiler.backend.emit import emit_kernel
from tilewright.device import session
from tilewright.native.kernels import kernel_source
from tilewright.native.runtime import generated_dir
from tilewright.native.toolchain import INCLUDE_DIR as API_DIR

ENGINES = ["python", "native"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("example", ["raw_scale_copy.py", "raw_sfpu.py"])
def test_examples_pass_on_both_engines(run_file, example, engine):
    status, out, err = run_file(EXAMPLES / example, engine)
    assert status == 0, err
    assert out.strip().splitlines()[-1] == f"PASS {example[:-3]}"


EMITTED = {
    "raw_scale_copy.py": ("raw_scale", "a", "out", (64, 256), lambda x: 1.5 * x),
    "raw_sfpu.py": ("exp_relu", "x", "y", (128, 128), lambda x: torch.exp(x) + 0.5 * torch.relu(x)),
}


@pytest.mark.parametrize("example", sorted(EMITTED))
def test_emit_writes_a_static_inline_function_and_the_rerun_computes_it(tmp_path, example):
    op, src, dst, shape, fn = EMITTED[example]
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["emit", "-o", str(out), str(EXAMPLES / example)])
    assert result.exit_code == 0, result.output
    folder = out / op
    compute = (folder / "compute.cpp").read_text()
    name = "raw_scale_copy_1" if example == "raw_scale_copy.py" else "raw_exp_plus_half_relu_1"
    assert f"static inline void {name}() {{" in compute
    assert compute.index("static inline") < compute.index("void MAIN {")
    assert f"    {name}();" in compute.split("void MAIN {")[1]
    if example == "raw_scale_copy.py":
        assert "mul_unary_tile(0, ttlang::f32_bits(1.5f));" in compute
        assert f'#line 53 "{EXAMPLES / example}"' in compute  # copy_tile's line
    else:
        assert "exp_tile(0);" in compute and "add_binary_tile(0, 1, 0);" in compute
    # the rerun starts from the call's own inputs and checks every tensor, bit for bit,
    # against the call's results (host.RUNNER)
    assert _rerun(folder).splitlines() == [f"PASS {op}"]


def _rerun(folder) -> str:
    text = io.StringIO()
    cwd = os.getcwd()
    try:
        os.chdir(folder)
        with contextlib.redirect_stdout(text):
            assert run_program(str(folder / "run.py"), []) == 0
    finally:
        os.chdir(cwd)
    return text.getvalue()


def test_emitted_functions_compile_with_strict_warnings(tmp_path):
    kernels: list = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: kernels.extend(c.kernels))
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = "native"
    try:
        for name in ("raw_scale_copy.py", "raw_sfpu.py"):
            with contextlib.redirect_stdout(io.StringIO()):
                assert run_program(str(EXAMPLES / name), []) == 0
        with contextlib.redirect_stdout(io.StringIO()):
            assert run_program(str(_reader_program(tmp_path)), []) == 0
    finally:
        session.OPTIONS.engine = saved
        backend.COMPILE_OBSERVERS.pop()
    with_functions = [k for k in kernels if k.functions]
    assert len(with_functions) >= 3
    for i, k in enumerate(with_functions):
        path = tmp_path / f"k{i}.cpp"
        path.write_text(kernel_source(None, k.kind, k.compile_args, text=emit_kernel(k)))
        cmd = [
            "c++", "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
            "-isystem", str(API_DIR), "-isystem", str(generated_dir()), f"-I{INCLUDE_DIR}",
            str(path),
        ]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


READER = """
import torch

import ttl
import ttnn

raw = ttl.raw
COLS = 4


@ttl.raw.ir
def read_row(t: ttl.raw.TensorAccessor, dst: ttl.raw.DFB, first: ttl.raw.u32, n: ttl.raw.index) -> ttl.raw.i32:
    done = raw.local(0, ttl.raw.i32)
    with raw.for_(n) as i:
        raw.dfb_reserve(dst, 1)
        raw.read_page(t, first + raw.cast(i, ttl.raw.u32), raw.write_ptr(dst))
        raw.read_barrier()
        raw.dfb_push(dst, 1)
        done.set(done + 1)
    return done * 10 + raw.cast(raw.core_x(), ttl.raw.i32)


@ttl.operation(grid=(2, 1))
def op(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        x = ttl.node(dims=1)
        got = ttl.raw.call(read_row, a, a_dfb, x * COLS, COLS)  # the reader call
        # got == COLS * 10 + x: write that many tiles (all COLS of them) back
        for j in range(got - COLS * 10 - x, COLS):
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[x : x + 1, j : j + 1]).wait()

    @ttl.compute()
    def compute():
        for _ in range(COLS):
            with a_dfb.wait() as i_blk, o_dfb.reserve() as o_blk:
                o_blk.store(i_blk + i_blk)


device = ttnn.open_device(device_id=0)
try:
    torch.manual_seed(1)
    a_host = (4.0 * torch.rand(64, 128) - 2.0).to(torch.bfloat16)
    a_t = ttnn.from_torch(a_host, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out_t = ttnn.from_torch(torch.zeros(64, 128, dtype=torch.bfloat16), dtype=ttnn.bfloat16,
                            layout=ttnn.TILE_LAYOUT, device=device)
    op(a_t, out_t)
    assert torch.equal(ttnn.to_torch(out_t).float(), a_host.float() * 2), "mismatch"
    print("PASS reader")
finally:
    ttnn.close_device(device)
"""


def _reader_program(tmp_path):
    path = tmp_path / "reader.py"
    path.write_text(READER)
    return path


@pytest.mark.parametrize("engine", ENGINES)
def test_a_data_movement_function_with_an_accessor_a_run_time_scalar_and_a_result(
    tmp_path, run_file, engine
):
    status, out, err = run_file(_reader_program(tmp_path), engine)
    assert status == 0, err
    assert out.strip() == "PASS reader"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_run_time_argument_out_of_range_fails_at_the_call_on_both_engines(
    tmp_path, run_file, engine
):
    path = tmp_path / "range.py"
    path.write_text(READER.replace("x * COLS, COLS)", "x * COLS - 1, COLS)"))
    status, out, err = run_file(path, engine)
    assert status != 0 and "PASS" not in out
    assert "KernelError" in err
    assert (
        "ttl.raw.call(read_row): argument 3 ('first') = -1 at run time is not a valid ttl.raw.u32"
        in err
    )
    assert f"{path}:{line_of(path, '# the reader call')}" in err
