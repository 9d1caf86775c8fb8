"""Shared pytest configuration."""

from __future__ import annotations

import pytest

from tilewright.device import session


@pytest.fixture(autouse=True)
def _fresh_session():
    """Every test starts from the default session (board, trace, fabric, watchdog): a test
    that runs a program with ``--board p150`` must not choose the board of the next one."""
    yield
    session.reset()


# tests/data holds inputs, not tests: descriptors, and a TT-Lang project's own test suite
# (data/ttlang_suite) that tests/cli/test_pytest_plugin.py runs through `pytest -p tilewright`.
collect_ignore = ["data"]
