"""Fixtures shared by tests/extern and tests/native: one native build cache per session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tilewright import native, ttnn

ROOT = Path(__file__).resolve().parents[2]


def cache_root(tmp_path_factory) -> Path:
    """XDG_CACHE_HOME for this session (shared by tests/extern and tests/native)."""
    return tmp_path_factory.getbasetemp() / "xdg-cache"


@pytest.fixture(scope="session", autouse=True)
def native_cache(tmp_path_factory):
    root = cache_root(tmp_path_factory)
    previous = native.OPTIONS.cache_dir
    native.configure(cache_dir=str(root / "tilewright" / "native"))
    yield root
    native.configure(cache_dir=previous)


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


@pytest.fixture(scope="session")
def run_tilewright(native_cache):
    """Run ``tilewright run ARGS`` in a subprocess with the session's cache; (rc, stdout, stderr)."""

    def run(*args: str, timeout: float = 240.0):
        env = dict(os.environ, XDG_CACHE_HOME=str(native_cache))
        proc = subprocess.run(
            [sys.executable, "-m", "tilewright", "run", *args],
            check=False,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=ROOT,
            env=env,
        )
        return proc.returncode, proc.stdout, proc.stderr

    return run
