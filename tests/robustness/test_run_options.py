"""``tilewright run`` options are checked before the program runs.

Before: ``--trace`` into a missing folder failed after the whole run and lost the trace;
a run with no operation wrote no trace, silently; ``--board`` with ``--system-desc``
let one win silently.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tilewright.cli.main import cli

PROGRAM = "from pathlib import Path\nPath({marker!r}).write_text('ran')\nprint('ran')\n"


def run(tmp_path, *options: str):
    """Run a program that leaves a marker file; return (exit code, stdout, stderr, ran)."""
    marker = tmp_path / "ran.txt"
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM.format(marker=str(marker)))
    result = CliRunner().invoke(cli, ["run", *map(str, options), str(prog)])
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout, result.stderr, marker.exists()


def test_trace_into_a_missing_folder_fails_before_the_run(tmp_path):
    code, _out, err, ran = run(tmp_path, "--trace", tmp_path / "no" / "such" / "t.json")
    assert code == 2 and not ran
    assert "Invalid value for --trace" in err and "does not exist (create it first" in err


def test_trace_onto_a_folder_fails_before_the_run(tmp_path):
    code, _out, err, ran = run(tmp_path, "--trace", tmp_path)
    assert code == 2 and not ran and "--trace" in err


def test_a_run_without_operations_writes_an_empty_valid_trace_and_says_so(tmp_path):
    trace = tmp_path / "t.json"
    code, out, err, ran = run(tmp_path, "--trace", trace)
    assert code == 0 and ran and out == "ran\n"
    assert f"trace: {trace} (empty: the program launched no operation)" in err
    data = json.loads(trace.read_text())
    assert data["traceEvents"] == [] and data["otherData"] == {
        "clock": "modelled device time (AI clock 1000 MHz)"
    }


def test_board_and_system_desc_together_are_an_error(tmp_path):
    desc = tmp_path / "n150.ttsys"
    CliRunner().invoke(cli, ["sysdesc", "default", "--board", "n150", "-o", str(desc)])
    code, _out, err, ran = run(tmp_path, "--board", "p150", "--system-desc", desc)
    assert code == 2 and not ran
    assert "--board and --system-desc both choose the system" in err


def test_an_unknown_board_is_refused_before_the_run(tmp_path):
    code, _out, err, ran = run(tmp_path, "--board", "n151")
    assert code == 2 and not ran and "'n151' is not one of" in err


def test_a_bad_system_desc_is_refused_before_the_run(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    code, _out, err, ran = run(tmp_path, "--system-desc", bad)
    assert code == 1 and not ran and f"--system-desc {bad}:" in err and "JSON" in err


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "abc"])
def test_watchdog_must_be_a_non_negative_number(tmp_path, value):
    code, _out, err, ran = run(tmp_path, "--watchdog", value)
    assert code == 2 and not ran and "--watchdog" in err
