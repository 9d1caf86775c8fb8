"""``tilewright emit`` over the whole program corpus (issue 21, "Done when").

For every program of ``tests/corpus.py`` (the list ``benchmarks/bench_coverage.py``
measures): ``tilewright emit`` runs it compiled and must give the program's normal
output (the same stdout as ``tilewright run`` under the default engine, which checks
its results against its goldens); every emitted kernel builds with ``-Wall -Wextra
-Werror`` through the project's C++ compiler (``strict_build``); every emitted
``run.py`` reruns the operation through ``ttnn.generic_op`` on our device and matches
the original launch bit for bit (it prints ``PASS <operation>``).

Programs whose run is an error by design (``errors/``) are emitted too: emit must stop
with the program's own diagnostic, the same message and line as the normal run.

Cost: a program costs 2-8 s here (two runs of it, a rerun per operation, a strict
build per kernel), the corpus about 2-4 min on a warm build cache.  The default suite
keeps one program per family of constructs (``REPRESENTATIVE``: explicit
elementwise, matmul, broadcast/reduce, unified, pipes, semaphores, external calls, raw
IR, helper generators, a signpost zone, an error program; about 40-60 s on a warm
cache); the others are marked ``slow`` -- they still run in the full suite
(``./dev test``), ``-m "not slow"`` skips them.  A shared example identical to its copy in ``examples/`` is the same program and
is run once (the test asserts they are identical).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests import corpus
from tests.compiler.backend.strict_build import strict_build_emitted
from tilewright.cli.main import cli
from tilewright.cli.runner import run_program
from tilewright.device import session

PROGRAMS, _NOTE = corpus.listing()

REPRESENTATIVE = {
    "examples/01_fused_eltwise.py",
    "examples/02_matmul_bias.py",
    "examples/03_broadcast_reduce.py",
    "examples/04_unified_add.py",
    "examples/05_pipe_multicast.py",
    "examples/06_semaphore_barrier.py",
    "examples/07_extern_reader/program.py",
    "examples/demo.py",
    "examples/raw_scale_copy.py",
    "examples/errors/block_state.py",
    "tests/e2e inline: test_trace_line46.py",  # a signpost zone (its span's empty format)
}

# What emit cannot express (docs/compiler.md, "C++ emission"): the program runs under the
# default engine (interpreted), and emit stops with the construct and its line.
EMIT_REFUSED: dict[str, str] = {}  # none today (scatter_gather compiles: staged pipes)

# Wall-clock figures a program prints (examples/demo.py times its calls) are the only
# output that differs from run to run.
_TIME = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|us|s)\b")


def _same_as_example(program: corpus.Program) -> Path | None:
    """The ``examples/`` file a shared example is a copy of, if it is one."""
    if program.group != "shared_examples" or program.path is None:
        return None
    twin = corpus.ROOT / "examples" / program.path.relative_to(corpus.SHARED)
    return twin if twin.is_file() else None


def _params() -> list:
    return [
        pytest.param(
            program,
            id=program.name,
            marks=[] if program.name in REPRESENTATIVE else [pytest.mark.slow],
        )
        for program in PROGRAMS
        if _same_as_example(program)
        is None  # a byte-identical copy is emitted under its twin's name
    ]


def _run(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    """``tilewright ARGV`` in this process (exit status, stdout, stderr), from ``cwd``."""
    here = os.getcwd()
    try:
        os.chdir(cwd)
        result = CliRunner().invoke(cli, argv)
    finally:
        os.chdir(here)
        session.reset()
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def _rerun(folder: Path) -> tuple[int, str]:
    text = io.StringIO()
    here = os.getcwd()
    try:
        os.chdir(folder)
        with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
            try:
                status = run_program(str(folder / "run.py"), [])
            except SystemExit as exc:  # run.py's sys.exit(message)
                print(exc.code)
                status = 1
    finally:
        os.chdir(here)
        session.reset()
    return status, text.getvalue()


def _diagnostic(stderr: str) -> list[str]:
    """The error lines of a failed run (``tilewright run`` / ``emit`` print the error last)."""
    return [line for line in stderr.splitlines() if "Error" in line or ".py:" in line]


def test_the_corpus_is_the_coverage_benchmarks():
    """One list: bench_coverage reads tests/corpus.py (and no list of its own)."""
    bench = (corpus.ROOT / "benchmarks" / "bench_coverage.py").read_text()
    assert "corpus.listing()" in bench and "rglob" not in bench
    names = [p.name for p in PROGRAMS]
    assert len(names) == len(set(names))
    assert REPRESENTATIVE <= set(names), REPRESENTATIVE - set(names)
    assert set(EMIT_REFUSED) <= set(names), set(EMIT_REFUSED) - set(names)
    for program in PROGRAMS:  # the shared copies left out of the emit test are exact copies
        twin = _same_as_example(program)
        if twin is not None:
            assert program.path is not None and program.path.read_bytes() == twin.read_bytes()


@pytest.mark.parametrize("program", _params())
def test_emit_builds_strictly_and_reruns_through_generic_op(program, tmp_path):
    src = program.materialise(tmp_path)
    out = tmp_path / "emitted"
    normal = _run(["run", str(src)], src.parent)
    status, stdout, stderr = _run(["emit", "-o", str(out), str(src)], src.parent)
    if normal[0] != 0:  # an error program: emit stops with the same diagnostic
        assert status == normal[0], stderr
        assert _diagnostic(stderr) == _diagnostic(normal[2]) != [], stderr
        return
    refused = EMIT_REFUSED.get(program.name)
    if refused is not None:
        assert status == 1 and f"NotCompilableError: {src.parent}/{refused}" in stderr, stderr
        return
    assert status == 0, stderr
    assert _TIME.sub("<time>", stdout) == _TIME.sub("<time>", normal[1])
    folders = sorted(p for p in out.iterdir() if p.is_dir()) if out.is_dir() else []
    assert folders, f"{program.name}: nothing emitted\n{stderr}"
    jobs = []
    for folder in folders:
        desc = json.loads((folder / "program.json").read_text())
        jobs += [(folder, k) for k in desc["kernels"]]
    with ThreadPoolExecutor(max_workers=2) as pool:
        built = list(pool.map(lambda job: (job, strict_build_emitted(*job)), jobs))
    failed = {f"{f.name}/{k['source']}": r.stderr for (f, k), r in built if r.returncode}
    assert not failed, failed
    for folder in folders:
        code, text = _rerun(folder)
        operation = json.loads((folder / "program.json").read_text())["operation"]
        assert code == 0 and text.splitlines()[-1] == f"PASS {operation}", text
