"""Helpers to run example programs in-process, as `tilewright run` does."""

from __future__ import annotations

import pathlib

import pytest

from tilewright.cli.runner import run_program

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture
def run_example(capsys):
    """Run examples/<name> in-process; return (exit status, stdout, stderr)."""

    def run(name: str, *args: str):
        status = run_program(str(EXAMPLES / name), list(args))
        out, err = capsys.readouterr()
        return status, out, err

    return run


@pytest.fixture(autouse=True, params=["python", "auto"], ids=["interpreted", "compiled"])
def engine(request):
    """Every example here runs interpreted, and compiled where it compiles (``auto``)."""
    from tilewright.device import session

    saved = session.OPTIONS.engine
    session.OPTIONS.engine = request.param
    yield request.param
    session.OPTIONS.engine = saved
