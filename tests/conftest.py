"""Shared pytest configuration."""

from __future__ import annotations

import signal

import pytest

from tilewright.device import session

# The signal tests send Ctrl-C / SIGTERM / SIGHUP to the programs they start.  A shell that
# starts the suite in the background without job control (`cmd &` in a script, `nohup`) makes
# it ignore SIGINT / SIGQUIT (and nohup SIGHUP), and an ignored disposition survives exec:
# every child would ignore the signal and those tests would time out.  Undo that here, so
# children start with the default dispositions as from a terminal.
for _sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
    if signal.getsignal(_sig) == signal.SIG_IGN:
        signal.signal(_sig, signal.default_int_handler if _sig == signal.SIGINT else signal.SIG_DFL)


@pytest.fixture(autouse=True)
def _fresh_session():
    """Every test starts from the default session (board, trace, fabric, watchdog): a test
    that runs a program with ``--board p150`` must not choose the board of the next one."""
    yield
    session.reset()


# tests/data holds inputs, not tests: descriptors, and a TT-Lang project's own test suite
# (data/ttlang_suite) that tests/cli/test_pytest_plugin.py runs through `pytest -p tilewright`.
collect_ignore = ["data"]
