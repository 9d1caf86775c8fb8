"""C++ emission and its command: strict-warning builds, `tilewright emit`, `explain --ir`, `run --engine`."""

from __future__ import annotations

import contextlib
import io
import json
import os
from concurrent.futures import ThreadPoolExecutor

import pytest
from click.testing import CliRunner

from tests.compiler.backend.strict_build import strict_build_kernel
from tests.e2e.conftest import EXAMPLES
from tilewright.cli.main import cli
from tilewright.cli.runner import run_program
from tilewright.compiler.backend import engine as backend
from tilewright.device import session

PROGRAMS = [
    "01_fused_eltwise.py",
    "02_matmul_bias.py",
    "03_broadcast_reduce.py",
    "04_unified_add.py",
    "05_pipe_multicast.py",
    "06_semaphore_barrier.py",
    "07_extern_reader/program.py",
    "08_legacy_spellings.py",
]


def _compiled_kernels(programs: list[str]) -> list:
    kernels: list = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: kernels.extend(c.kernels))
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = "native"
    try:
        for name in programs:
            with contextlib.redirect_stdout(io.StringIO()):
                assert run_program(str(EXAMPLES / name), []) == 0
    finally:
        session.OPTIONS.engine = saved
        backend.COMPILE_OBSERVERS.pop()
    return kernels


def test_emitted_cpp_compiles_with_strict_warnings(tmp_path):
    """Every shared example's kernels build with -Wall -Wextra -Werror."""
    kernels = {k.name + str(i): k for i, k in enumerate(_compiled_kernels(PROGRAMS))}

    def check(item):
        name, k = item
        return name, strict_build_kernel(tmp_path, name, k)

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(check, kernels.items()))
    assert len(results) >= 20
    failed = {name: r.stderr for name, r in results if r.returncode}
    assert not failed, failed


def test_emit_writes_cpp_host_description_and_a_generic_op_rerun(tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["emit", "-o", str(out), str(EXAMPLES / "01_fused_eltwise.py")]
    )
    assert result.exit_code == 0, result.output
    folder = out / "fused_relu_mul_add"
    assert sorted(p.name for p in folder.iterdir()) == [
        "compute.cpp", "expected.npz", "inputs.npz", "program.json", "reader.cpp", "run.py",
        "ttlang", "writer.cpp",
    ]  # fmt: skip
    reader = (folder / "reader.cpp").read_text()
    assert '#include "ttlang/support.h"' in reader and "noc_async_read_page(" in reader
    assert f'#line 73 "{EXAMPLES / "01_fused_eltwise.py"}"' in reader
    desc = json.loads((folder / "program.json").read_text())
    assert desc["grid"] == [2, 2]
    assert [k["processor"] for k in desc["kernels"]] == ["ncrisc", "trisc", "brisc"]
    assert desc["kernels"][0]["runtime_arg_names"] == ["a.address", "b.address", "c.address"]
    assert desc["kernels"][1]["compute"]["fp32_dest_acc_en"] is True
    assert [cb["name"] for cb in desc["circular_buffers"]] == ["a_dfb", "b_dfb", "c_dfb", "y_dfb"]
    out_text = io.StringIO()
    cwd = os.getcwd()
    try:
        os.chdir(folder)
        with contextlib.redirect_stdout(out_text):
            assert run_program(str(folder / "run.py"), []) == 0
    finally:
        os.chdir(cwd)
    assert out_text.getvalue().splitlines() == ["PASS fused_relu_mul_add"]


def test_explain_ir_prints_each_kernel_and_the_reason_an_operation_is_interpreted(tmp_path):
    result = CliRunner().invoke(cli, ["explain", "--ir", str(EXAMPLES / "04_unified_add.py")])
    assert result.exit_code == 0, result.output
    assert "kernel IR:" in result.output
    assert "kernel compute : compute @ trisc  dst=4 fp32" in result.output
    assert "cb.wait_front" in result.output and "noc.read_page" in result.output
    result = CliRunner().invoke(
        cli, ["explain", "--ir", str(EXAMPLES / "07_extern_reader/program.py")]
    )
    assert result.exit_code == 0, result.output
    # external calls compile: each is an extern.call with the note of its declared contract
    assert "kernel IR: interpreted" not in result.output
    assert "extern.call" in result.output and "contract-note 0: call at" in result.output


@pytest.mark.parametrize("engine", ["python", "native"])
def test_run_engine_flag(engine):
    result = CliRunner().invoke(
        cli, ["run", "--engine", engine, str(EXAMPLES / "errors/block_state.py")]
    )
    assert result.exit_code == 1
    assert "BlockStateError" in result.output and "block_state.py:52" in result.output
    session.reset()


@pytest.mark.parametrize(
    "words",
    [
        ["PROG", "-o", "OUT"],  # the order the docs and the issue give
        ["PROG", "--output=OUT"],
        ["-o", "OUT", "PROG"],
    ],
)
def test_emit_takes_the_output_before_or_after_the_program(tmp_path, words):
    out = tmp_path / "out"
    prog = str(EXAMPLES / "04_unified_add.py")
    argv = [w.replace("PROG", prog).replace("OUT", str(out)) for w in words]
    result = CliRunner().invoke(cli, ["emit", *argv])
    assert result.exit_code == 0, result.output
    assert any(out.iterdir())


def test_emit_without_an_output_directory_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(cli, ["emit", str(EXAMPLES / "04_unified_add.py")])
    assert result.exit_code == 2
    assert "Missing option '-o' / '--output'" in result.output
