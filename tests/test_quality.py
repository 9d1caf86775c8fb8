"""The quality gate: the package is mypy-clean and the sources are ruff-clean and formatted.

Each tool runs in a subprocess from the repository root with the settings in
``pyproject.toml``.  mypy keeps its incremental cache in ``.mypy_cache`` (gitignored),
so after the first run the check takes about a second.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("tilewright", "tests", "benchmarks")

CHECKS = {
    "mypy": ("mypy", "tilewright"),
    "ruff check": ("ruff", "check", *SOURCES),
    "ruff format": ("ruff", "format", "--check", *SOURCES),
}


@pytest.mark.parametrize("check", list(CHECKS))
def test_quality_gate(check: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", *CHECKS[check]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr).strip()
        pytest.fail(f"`{' '.join(CHECKS[check])}` failed:\n{output}", pytrace=False)
