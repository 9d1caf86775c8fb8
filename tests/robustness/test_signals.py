"""SIGTERM and SIGINT end a run with a report, the trace written and no process left behind.

Before, SIGTERM killed ``tilewright run`` on the spot (no report, the ``--trace`` file
lost, compilers running on), and with ``--isolate`` a SIGINT sent to the parent alone
waited 30 s and killed the child without saying where it was.
"""

from __future__ import annotations

import json
import signal
import time

import pytest

from tests.robustness.programs import SPIN, SPIN_LINE
from tests.robustness.test_isolate import CALL_LINE, _popen, _program


def _built(path, native_cache) -> None:
    """Build the program's external C++ first (the watchdog ends the spin), so a signal sent
    a second after the child starts reaches the spinning call, not the build: a cold build
    on a busy 2-core machine takes longer than that."""
    warm = _popen(["--watchdog", "0.5", str(path)], native_cache)
    warm.communicate(timeout=300)


@pytest.mark.parametrize("engine", ["python", "native"])
def test_sigterm_reports_where_each_kernel_was_and_writes_the_trace(tmp_path, engine, native_cache):
    prog = tmp_path / "spin.py"
    prog.write_text(SPIN)
    trace = tmp_path / "trace.json"
    if engine == "native":  # build the kernels first: the signal is to reach the launch
        warm = _popen(["--engine", engine, "--watchdog", "0.5", str(prog)], native_cache)
        warm.communicate(timeout=300)
    args = ["--engine", engine, "--watchdog", "0", "--trace", str(trace), str(prog)]
    proc = _popen(args, native_cache)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(2.0)  # into the launch: the compute kernel is spinning
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143, err
    assert "Traceback" not in err
    assert err.startswith("terminated (SIGTERM)\nterminated (SIGTERM) while node (0, 0)"), err
    assert f"{prog}:" in err and "kernel compute (trisc)" in err
    if engine == "python":
        assert f"running at {prog}:{SPIN_LINE}" in err
    json.loads(trace.read_text())  # written, and valid


def test_sigint_to_an_isolating_parent_alone_reaches_the_child_at_once(tmp_path, native_cache):
    path = _program(tmp_path, "spin_forever")
    _built(path, native_cache)
    proc = _popen(["--isolate", "--watchdog", "0", str(path)], native_cache, start_new_session=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("child")
        time.sleep(1.0)
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)  # the parent only (kill -INT <pid>)
        _out, err = proc.communicate(timeout=60)
        took = time.monotonic() - start
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert took < 15, f"{took:.1f} s"  # before: the 30 s grace, then a kill without a report
    assert "interrupted (Ctrl-C) while node (0, 0)" in err and "stuck.hpp" in err
    assert "did not stop; it was killed" not in err


def test_sigterm_to_an_isolating_parent_ends_the_child_with_its_report(tmp_path, native_cache):
    path = _program(tmp_path, "spin_forever")
    _built(path, native_cache)
    proc = _popen(["--isolate", "--watchdog", "0", str(path)], native_cache, start_new_session=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("child")
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143, err
    assert "terminated (SIGTERM) while node (0, 0)" in err and "stuck.hpp" in err


def test_sigterm_with_sigint_ignored_still_ends_a_python_run(tmp_path, native_cache):
    """A shell's background job ignores SIGINT; SIGTERM is raised in Python code then."""
    prog = tmp_path / "spin.py"
    prog.write_text(SPIN)
    proc = _popen(
        ["--engine", "python", "--watchdog", "0", str(prog)],
        native_cache,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143, err
    assert f"running at {prog}:{SPIN_LINE}" in err


def test_sigterm_during_a_cold_build_ends_it_and_names_the_users_call(tmp_path):
    """The signal arrives while the external function (and the runtime) still compile: the
    compilers are killed with their process groups and the report names the user's
    ``call_extern_func`` line, not the standard library's frame the build waited in."""
    path = _program(tmp_path, "spin_forever")
    cold = tmp_path / "cold-cache"  # not the session's: nothing of this run is built yet
    # interpreted: the call's glue builds inside the kernel run (a compiled operation builds
    # its kernels before the launch, where the report has no kernel line: docs/compiler.md)
    args = ["--engine", "python", "--isolate", "--watchdog", "0", str(path)]
    proc = _popen(args, cold, start_new_session=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("child")
        time.sleep(0.3)  # the build of a cold cache takes seconds
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
        took = time.monotonic() - start
    finally:
        proc.kill()
    assert proc.returncode == 143, err
    assert took < 15, f"{took:.1f} s"
    assert "terminated (SIGTERM) while node (0, 0)" in err, err
    assert f"running at {path}:{CALL_LINE}" in err, err
    assert "selectors.py" not in err and "subprocess.py" not in err, err
