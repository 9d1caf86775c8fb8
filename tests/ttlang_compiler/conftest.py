"""The real TT-Lang compiler's environment for these tests.

CI makes it first (``.ci/run`` runs ``./dev ttlang-env``), so there a missing environment
fails the tests; on a developer machine without it they are skipped with the command that
makes it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tilewright.cli import ttlang_env

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"


@pytest.fixture(scope="session")
def real_compiler():
    env = ttlang_env.find()
    if env is None:
        message = (
            f"the real TT-Lang compiler is not set up at {ttlang_env.default_path()}: run "
            f"`{ttlang_env.SETUP_COMMAND}` (or ./dev ttlang-env) to run these tests"
        )
        if os.environ.get("CI"):
            pytest.fail(f"CI sets the environment up before the tests; {message}")
        pytest.skip(message)
    return env


def tilewright(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``tilewright ARGS`` in a child process (this checkout), its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "tilewright", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )
