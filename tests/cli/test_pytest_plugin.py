"""The pytest plugin (`pytest -p tilewright`): an existing TT-Lang suite runs unmodified.

tests/data/ttlang_suite is a TT-Lang project's own test folder, written for tt-lang:
`import ttl` / `import ttnn` in test modules, conftest fixtures and a helper module,
`ttl.utils.correctness`, a device fixture pair in the conftest.  Each test runs it
through pytest in a subprocess, as a user would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parents[1] / "data" / "ttlang_suite"


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    target = tmp_path / "project"
    shutil.copytree(SUITE, target)
    return target


def run_pytest(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=environ,
        check=False,
    )


def test_the_plugin_is_a_pytest11_entry_point():
    plugins = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert plugins.get("tilewright") == "tilewright.cli.pytest_plugin"


def test_an_existing_suite_runs_with_p_tilewright(suite: Path):
    proc = run_pytest(suite, "-p", "tilewright")
    out = proc.stdout + proc.stderr
    assert "tilewright 0.1.0: ttl and ttnn are Tilewright's" in out, out
    assert "PASSED test_eltwise.py::test_scaled_add[0.0]" in out, out
    assert "PASSED test_eltwise.py::test_scaled_add[1.5]" in out, out
    assert "PASSED test_ttnn_only.py::test_add_on_device" in out, out
    # A rejected program fails its test with the Tilewright diagnostic: construct, rule, line.
    assert "FAILED test_eltwise.py::test_tilewright_diagnostic" in out, out
    assert "Tilewright diagnostic" in out, out
    assert "test_eltwise.py:50: error: operation 'scaled_add' takes 3 tensor(s)" in out, out
    assert "tilewright/compiler" not in out, out  # no internal frame in the failure
    assert "1 failed, 3 passed" in out, out
    assert proc.returncode == 1


def test_without_the_switch_ttl_is_not_redirected(suite: Path):
    proc = run_pytest(suite)
    out = proc.stdout + proc.stderr
    assert "No module named 'ttl'" in out, out
    assert proc.returncode != 0


def test_the_ini_switch_and_explicit_loading_without_autoload(suite: Path):
    (suite / "pytest.ini").write_text("[pytest]\ntilewright = true\n")
    proc = run_pytest(suite, "-k", "scaled_add")
    assert "2 passed" in proc.stdout, proc.stdout + proc.stderr
    (suite / "pytest.ini").unlink()
    # With entry-point autoloading off, `-p tilewright` still finds the plugin by name.
    proc = run_pytest(
        suite, "-p", "tilewright", "-k", "scaled_add", env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    )
    assert "2 passed" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tilewright-board", "n9000"], "--tilewright-board n9000: unknown board 'n9000'"),
        (["--tilewright-system-desc", "/nonexistent.ttsys"], "--tilewright-system-desc /nonexistent.ttsys"),
        (["--tilewright-board", "n150", "--tilewright-system-desc", "x.ttsys"], "give one"),
    ],
)  # fmt: skip
def test_bad_plugin_options_are_one_usage_error_at_start_up(suite: Path, args, message):
    """Before, a bad board failed every test, located in _pytest/fixtures.py."""
    proc = run_pytest(suite, "-p", "tilewright", *args)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 4, out  # pytest's usage error
    assert message in out, out
    assert "_pytest/fixtures.py" not in out and "PASSED" not in out, out
