"""Differential testing: every shared example runs interpreted and compiled, with the same outcome.

Results are compared bit for bit (bf16 words), except where the accumulation order
differs: a matmul block with more than one tile of K accumulates tile products in
float32 DST on the compiled engine, one BLAS call per block in the interpreter
(docs/compiler.md, "Numerics") -- those compare within ``ULPS``.  Diagnostics (the
error type, message, location and notes of a failing example) are identical.
"""

from __future__ import annotations

import contextlib
import io

import pytest
import torch

from tests.e2e.conftest import EXAMPLES
from tilewright.cli.runner import run_program
from tilewright.device import session
from tilewright.errors import format_error

PROGRAMS = [
    "01_fused_eltwise.py",
    "02_matmul_bias.py",
    "03_broadcast_reduce.py",
    "04_unified_add.py",
    "05_pipe_multicast.py",
    "06_semaphore_barrier.py",
    "07_extern_reader/program.py",
    "08_legacy_spellings.py",
    "errors/block_state.py",
    "errors/deadlock.py",
    "errors/extern_bad_args.py",
]
ULPS = {"02_matmul_bias.py": 2}  # K accumulation order (see the module docstring)


@pytest.fixture(autouse=True)
def engine():
    """These tests choose both engines themselves (overrides the e2e parametrisation)."""
    yield None


def _run(program: str, engine: str, monkeypatch) -> tuple[int, str, str, list[torch.Tensor], int]:
    from tilewright import ttnn
    from tilewright.compiler.backend import engine as backend

    results: list[torch.Tensor] = []
    original = ttnn.to_torch

    def record(tensor, *args, **kwargs):
        value = original(tensor, *args, **kwargs)
        results.append(value.clone())
        return value

    monkeypatch.setattr(ttnn, "to_torch", record)
    compiled: list[str] = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: compiled.append(r.name))
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = engine
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = run_program(str(EXAMPLES / program), [])
    finally:
        session.OPTIONS.engine = saved
        backend.COMPILE_OBSERVERS.pop()
        monkeypatch.setattr(ttnn, "to_torch", original)
    return status, out.getvalue(), err.getvalue(), results, len(compiled)


def _words(t: torch.Tensor) -> torch.Tensor:
    return t.view(torch.int16).to(torch.int32) if t.dtype == torch.bfloat16 else t


@pytest.mark.parametrize("program", PROGRAMS)
def test_both_engines_agree(program, monkeypatch):
    py = _run(program, "python", monkeypatch)
    native = _run(program, "native", monkeypatch)
    assert py[4] == 0
    if program != "errors/extern_bad_args.py":  # rejected at decoration: nothing compiles
        assert native[4] >= 1, native[2]
    assert native[0] == py[0], native[2]
    assert native[1] == py[1]  # PASS lines, prints
    assert native[2] == py[2]  # diagnostics: type, message, location, notes
    assert len(native[3]) == len(py[3])
    for a, b in zip(py[3], native[3]):
        assert a.shape == b.shape and a.dtype == b.dtype
        ulps = ULPS.get(program, 0)
        diff = (_words(a) - _words(b)).abs().max().item() if a.numel() else 0
        assert diff <= ulps, f"{program}: results differ by {diff} bf16 ulps (allowed {ulps})"


def test_the_block_state_error_is_raised_by_the_compiled_kernel():
    """The compiled engine reports the interpreter's block-state error from C++ (``fail`` op)."""
    from tilewright.compiler.backend import engine as backend
    from tilewright.compiler.backend.emit import emit_kernel

    sources: list[str] = []
    backend.COMPILE_OBSERVERS.append(
        lambda r, c, p: sources.extend(emit_kernel(k) for k in c.kernels)
    )
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = "native"
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            assert run_program(str(EXAMPLES / "errors/block_state.py"), []) == 1
    finally:
        session.OPTIONS.engine = saved
        backend.COMPILE_OBSERVERS.pop()
    compute = next(s for s in sources if "void MAIN" in s)
    assert (
        'TTLANG_FAIL_RULE(BlockStateError, "block-state", "block \'acc_blk\' (reserved from DFB '
        "'acc_dfb') is read" in compute
    )
    _ = format_error  # the CLI formats both engines' errors the same way
