"""A fixed-seed slice of the standing hostile-input driver, in CI.

``benchmarks/bench_hostile_inputs.py --quick`` for the categories of issue 26 that run
in seconds (aliasing, captured-value mutation, integer overflow, generic_op descriptor
fuzzing, huge shapes): every input ends in a clean Tilewright error or is handled
correctly -- no traceback, hang, crash or silent wrong answer.  The whole driver (all
categories, full counts) is a benchmark, run by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SLICE = ["aliasing", "captured", "overflow", "generic_op", "huge_shapes"]


@pytest.fixture(scope="module")
def driver():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_hostile_inputs
    finally:
        sys.path.remove(str(BENCHMARKS))
    return bench_hostile_inputs


@pytest.mark.parametrize("category", SLICE)
def test_the_quick_slice_has_no_traceback_hang_crash_or_wrong_answer(
    driver, category, native_cache
):
    report = driver.run_category(category, quick=True)
    assert report["tried"] > 0
    bad = {k: report[k] for k in ("traceback", "hang", "died", "wrong") if report[k]}
    assert not bad, report["problems"]
