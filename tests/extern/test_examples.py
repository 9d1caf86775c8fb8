"""The shared examples for external C++ functions, run with `tilewright run`."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_example_07_extern_reader_passes(run_tilewright):
    rc, out, err = run_tilewright(str(ROOT / "examples" / "07_extern_reader" / "program.py"))
    assert rc == 0, err
    assert out.strip().splitlines() == ["PASS 07_extern_reader"]


def test_extern_bad_args_fails_with_the_documented_diagnostic(run_tilewright):
    path = ROOT / "examples" / "errors" / "extern_bad_args.py"
    rc, out, err = run_tilewright(str(path))
    assert rc != 0
    assert "PASS" not in out
    assert "ExternCallError" in err  # a TT-Lang compile error
    assert "bare DFB template arguments are ambiguous" in err
    assert "ttl.dfb_descriptor(dfb)" in err and "ttl.get_dfb_id(dfb)" in err
    assert f"{path}:58:" in err
    assert "not a function argument, descriptor, or dependency" not in err
