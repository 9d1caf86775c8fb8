"""Fixtures for tests/raw: the shared native build cache and a device; helpers of the IR
flavour's tests (write a program, run it in-process)."""

import textwrap
from pathlib import Path

import pytest

from tests.native_fixtures import device, native_cache  # noqa: F401
from tilewright.cli.runner import run_program
from tilewright.device import session

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

HEADER = """\
import torch

import ttl
import ttnn

raw = ttl.raw
"""

SCALE_COPY = """
@ttl.raw.ir
def scale_copy(src: ttl.raw.DFB, dst: ttl.raw.DFB, factor: ttl.raw.f32, n: ttl.raw.index):
    with raw.for_(n):
        raw.dfb_wait(src, 1)
        raw.dfb_reserve(dst, 1)
        raw.tile_regs_acquire()
        raw.copy_tile(src, 0, 0)
        raw.mul_scalar(0, factor)
        raw.tile_regs_commit()
        raw.tile_regs_wait()
        raw.pack_tile(0, dst, 0)
        raw.tile_regs_release()
        raw.dfb_push(dst, 1)
        raw.dfb_pop(src, 1)
"""
"""The scale-and-copy loop of examples/raw_scale_copy.py, as test programs include it."""

RUN_ONE_TILE = """
device = ttnn.open_device(device_id=0)
try:
    torch.manual_seed(0)
    a_host = (4.0 * torch.rand(32, 32) - 2.0).to(torch.bfloat16)
    a_t = ttnn.from_torch(a_host, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out_t = ttnn.from_torch(torch.zeros(32, 32, dtype=torch.bfloat16), dtype=ttnn.bfloat16,
                            layout=ttnn.TILE_LAYOUT, device=device)
    op(a_t, out_t)
    print("RESULT", float(ttnn.to_torch(out_t).float().sum()), float(a_host.float().sum()))
finally:
    ttnn.close_device(device)
"""


@pytest.fixture
def write_program(tmp_path):
    """Write a program (HEADER + dedented ``body`` [+ RUN_ONE_TILE]); its path."""

    def write(body: str, *, run: bool = True, name: str = "prog.py") -> Path:
        path = tmp_path / name
        path.write_text(HEADER + textwrap.dedent(body) + (RUN_ONE_TILE if run else ""))
        return path

    return write


@pytest.fixture
def run_file(capsys):
    """Run a program file in-process under ``engine``; (status, stdout, stderr)."""

    def run(path: Path, engine: str = "auto", *args: str):
        saved = session.OPTIONS.engine
        session.OPTIONS.engine = engine
        try:
            status = run_program(str(path), list(args))
        finally:
            session.OPTIONS.engine = saved
        out, err = capsys.readouterr()
        return status, out, err

    return run


def line_of(path: Path, marker: str) -> int:
    """The 1-based line of ``path`` that contains ``marker``."""
    for i, text in enumerate(path.read_text().splitlines(), 1):
        if marker in text:
            return i
    raise AssertionError(f"{marker!r} not in {path}")
