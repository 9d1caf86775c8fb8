"""``tilewright emit``'s ``run.py`` reproduces the operation exactly, and checks that it did.

Before, the emitted ``run.py`` of an operation called with a height-sharded input reran it
on an interleaved tensor of random values and printed a wrong sum without an error, failed
for int32 tensors (``torch.rand`` into int32), and ``emit`` copied a ``ttl.raw.cpp``
source but not the headers it includes.  Now ``program.json`` records each tensor's memory
config (shard spec included) and accessor words, ``inputs.npz`` / ``expected.npz`` the
call's tensors before and after the launch, and ``run.py`` rebuilds the tensors, checks
their placement, reruns and compares bit for bit ("PASS <operation>", or status 1).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from tests.e2e.conftest import EXAMPLES
from tilewright.cli.main import cli
from tilewright.cli.runner import run_program
from tilewright.device import session

DATA = Path(__file__).resolve().parent / "data"


def _emit(program: Path, out: Path) -> None:
    result = CliRunner().invoke(cli, ["emit", "-o", str(out), str(program)])
    session.reset()
    assert result.exit_code == 0, result.output


def _rerun(folder: Path) -> tuple[int, str]:
    text = io.StringIO()
    cwd = os.getcwd()
    try:
        os.chdir(folder)
        with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
            try:
                status = run_program(str(folder / "run.py"), [])
            except SystemExit as exc:  # run.py's sys.exit(message)
                print(exc.code)
                status = 1
    finally:
        os.chdir(cwd)
        session.reset()
    return status, text.getvalue()


def test_a_sharded_bf16_and_an_int32_operation_rerun_exactly(tmp_path, native_cache):
    _emit(DATA / "emit_sharded.py", tmp_path / "out")
    for name in ("double", "copy"):
        folder = tmp_path / "out" / name
        status, text = _rerun(folder)
        assert status == 0 and text.splitlines()[-1] == f"PASS {name}", text


def test_a_rerun_that_differs_is_a_failure(tmp_path, native_cache):
    _emit(DATA / "emit_sharded.py", tmp_path / "out")
    folder = tmp_path / "out" / "double"
    expected = dict(np.load(folder / "expected.npz"))
    expected["y"] = expected["y"] + 1
    np.savez(folder / "expected.npz", **expected)
    status, text = _rerun(folder)
    assert status == 1 and "FAIL double: y differ" in text, text


def test_the_headers_a_raw_cpp_source_includes_are_emitted(tmp_path, native_cache):
    src = tmp_path / "prog"
    (src / "detail").mkdir(parents=True)
    (src / "detail" / "bits.h").write_text(
        "#pragma once\n#include <cstdint>\n"
        "inline uint32_t tw_bits(float f) { return __builtin_bit_cast(uint32_t, f); }\n"
    )
    text = (EXAMPLES / "raw_cpp_template.py").read_text()
    start = text.index('SCALE_TILES = """') + len('SCALE_TILES = """')
    body = text[start : text.index('"""', start)]
    body = body.replace(
        "const uint32_t bits = __builtin_bit_cast(uint32_t, factor);",
        "const uint32_t bits = tw_bits(factor);",
    ).replace("#include <cstdint>\n", '#include <cstdint>\n#include "detail/bits.h"\n', 1)
    (src / "scale_tiles.hpp").write_text(body)
    program = text.replace(
        "    SCALE_TILES,\n", '    __import__("pathlib").Path("scale_tiles.hpp"),\n'
    )
    (src / "program.py").write_text(program)
    _emit(src / "program.py", tmp_path / "out")
    folder = tmp_path / "out" / "scale"
    assert (folder / "detail" / "bits.h").is_file(), sorted(p.name for p in folder.iterdir())
    shutil.rmtree(src)  # the rerun builds from the emitted folder alone
    status, out = _rerun(folder)
    assert status == 0 and out.splitlines()[-1] == "PASS scale", out
