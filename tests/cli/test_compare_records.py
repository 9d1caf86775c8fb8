"""Readbacks (what a program reads back, recorded for `run --compare`) and their comparison;
the tt-lang environment's stamp."""

from __future__ import annotations

import json

import numpy as np
import torch

from tilewright.cli import ttlang_env
from tilewright.cli.compare import compare_readbacks
from tilewright.ttnn import readback


def test_readbacks_round_trip_through_a_file_bit_for_bit(tmp_path):
    readback.start()
    bits = torch.tensor([[1.0, -2.5], [3.0, float("nan")]], dtype=torch.bfloat16)
    try:
        readback.note(bits)  # NOTE-LINE
        readback.note(np.arange(6, dtype=np.int32).reshape(2, 3))
        path = str(tmp_path / "r.npz")
        readback.save(path)
    finally:
        readback.stop()
    loaded = readback.load(path)
    assert [r.dtype for r in loaded] == ["bfloat16", np.dtype(np.int32).str]
    assert loaded[0].data == bits.view(torch.int16).numpy().tobytes()
    line = next(i for i, text in enumerate(open(__file__), 1) if "# NOTE-LINE" in text)
    assert loaded[0].where == f"{__file__}:{line}"
    assert np.array_equal(loaded[1].values(), np.arange(6).reshape(2, 3))


def test_comparison_lists_identical_and_differing_readbacks():
    def rec(values, where="prog.py:3"):
        t = torch.tensor(values, dtype=torch.bfloat16)
        return readback.Readback(
            where, "bfloat16", tuple(t.shape), t.view(torch.int16).numpy().tobytes()
        )

    lines = compare_readbacks(
        [rec([1.0, 2.0]), rec([1.0, 2.0, 3.0]), rec([0.0])],
        [rec([1.0, 2.0]), rec([1.0, 2.015625, 3.0])],
    )
    assert lines[0] == "readback 1 (prog.py:3, bfloat16 [2]): identical"
    assert lines[1] == (
        "readback 2 (prog.py:3, bfloat16 [3]): 1 of 3 elements differ; largest |difference| "
        "0.015625 at [1] (Tilewright 2.0, real compiler 2.015625)"
    )
    assert "only the run with Tilewright's compiler read it" in lines[2]


def test_an_environment_is_current_only_with_the_stamp_of_what_it_should_hold(tmp_path):
    env = tmp_path / "env"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").write_text("")
    assert ttlang_env.find(env) is None  # no stamp: not made (or interrupted)
    stamp = env / ".tilewright-ttlang-env.json"
    stamp.write_text(json.dumps({**ttlang_env.SPEC.stamp(), "version": 0}))
    assert ttlang_env.find(env) is None  # made for another spec: made again
    stamp.write_text(json.dumps(ttlang_env.SPEC.stamp()))
    assert ttlang_env.find(env) == ttlang_env.TtlangEnv(env)
    assert "tt-lang==1.1.1" in ttlang_env.SPEC.stamp()["packages"]


def test_an_environment_holding_more_than_it_should_is_current(tmp_path):
    # A dependency Tilewright dropped (ml_dtypes, issue 22) does not remake the environment
    # (torch again); one it lacks does.
    env = tmp_path / "env"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").write_text("")
    stamp = env / ".tilewright-ttlang-env.json"
    wanted = ttlang_env.SPEC.stamp()
    stamp.write_text(json.dumps({**wanted, "packages": [*wanted["packages"], "ml_dtypes>=0.4"]}))
    assert ttlang_env.find(env) == ttlang_env.TtlangEnv(env)
    stamp.write_text(json.dumps({**wanted, "packages": wanted["packages"][1:]}))
    assert ttlang_env.find(env) is None
    stamp.write_text(json.dumps({**wanted, "python": "3.11"}))
    assert ttlang_env.find(env) is None
    stamp.write_text(json.dumps(["not", "a", "stamp"]))
    assert ttlang_env.find(env) is None


def test_setup_refuses_to_replace_a_folder_that_is_not_an_environment(tmp_path):
    import pytest

    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep")
    with pytest.raises(ttlang_env.EnvError, match="is not a Python environment; not replacing it"):
        ttlang_env.setup(folder, python="/nonexistent/python3.12", echo=lambda _line: None)
    assert (folder / "notes.txt").read_text() == "keep"
