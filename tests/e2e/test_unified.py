"""Unified operations end to end: example 04, and unified rewrites of examples 01 and 02."""

import pathlib

import pytest

from tilewright.cli.runner import run_program

PROGRAMS = pathlib.Path(__file__).resolve().parents[1] / "compiler" / "programs"


def test_example_04_unified_add_passes(run_example):
    status, out, err = run_example("04_unified_add.py")
    assert status == 0, err
    assert out.strip().splitlines()[-1] == "PASS 04_unified_add"


@pytest.mark.parametrize("name", ["unified_eltwise", "unified_matmul"])
def test_unified_rewrites_are_bit_exact_to_the_explicit_examples(capsys, name):
    """The programs run the unified and the explicit form on the same inputs: torch.equal."""
    status = run_program(str(PROGRAMS / f"{name}.py"), [])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert out.strip().splitlines()[-1] == f"SAME {name}"
