"""Livelock: the no-progress watchdog, endless polling, and Ctrl-C during a run.

A kernel that never yields (``while True: pass``) used to run forever at 100 % CPU and
Ctrl-C printed only "Aborted!".  Now the watchdog interrupts it after
``EngineOptions.watchdog`` seconds and the engine reports a livelock like a deadlock
(node, kernel, user line, last synchronisation); Ctrl-C prints the same report.
"""

from __future__ import annotations

import inspect
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from tests.robustness.programs import SPIN, SPIN_LINE
from tilewright.cli.main import cli
from tilewright.device.cb import CircularBuffer
from tilewright.device.coords import CoreCoord
from tilewright.device.engine import Engine, EngineOptions, KernelRun
from tilewright.errors import DeadlockError, DeviceError


def core():
    return SimpleNamespace(logical=CoreCoord(0, 0))


def line_of(fn, marker: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if marker in line)


def test_a_kernel_that_never_yields_is_reported_as_a_livelock_with_its_line():
    c = core()
    cb = CircularBuffer(c, 0, 0, 2 * 32, 32, name="in_cb")

    def producer():
        cb.reserve_back(1)
        cb.push_back(1)
        cb.reserve_back(1)
        cb.push_back(1)
        cb.reserve_back(1)  # full: blocks here

    def spinner():
        cb.wait_front(1)
        total = 0
        while True:  # spins
            total += 1
            if total < 0:  # never: keeps the loop Python-level
                break

    start = time.monotonic()
    with pytest.raises(DeadlockError) as e:
        Engine(EngineOptions(watchdog=0.3)).run(
            [KernelRun(c, "producer", "ncrisc", producer), KernelRun(c, "spin", "trisc", spinner)]
        )
    assert time.monotonic() - start < 10
    err = e.value
    assert err.rule == "livelock"
    assert err.loc is not None and err.loc.file == __file__
    assert err.loc.line == line_of(spinner, "while True")
    msg = err.message
    assert msg.startswith("livelock: core (0, 0), kernel spin (trisc) ran for 0.3 s")
    assert "without reaching a synchronisation point" in msg
    assert "(2 of 2 kernels unfinished)" in msg
    spin_line = next(
        line for line in msg.splitlines() if "kernel spin" in line and "running" in line
    )
    assert f"running at {__file__}:{line_of(spinner, 'while True')}" in spin_line
    assert "last synchronisation: none that waited" in spin_line  # its wait did not block
    producer_line = next(line for line in msg.splitlines() if "kernel producer" in line)
    assert "blocked at" in producer_line and "cb_reserve_back(in_cb, 1)" in producer_line
    assert "--watchdog" in (err.hint or "")


def test_the_last_blocking_wait_is_reported_as_the_last_synchronisation():
    c = core()
    cb = CircularBuffer(c, 0, 0, 32, 32, name="cb")

    def producer():
        cb.reserve_back(1)
        cb.push_back(1)

    def spinner():
        cb.wait_front(1)  # blocks first: the producer has not run yet
        while True:
            pass

    with pytest.raises(DeadlockError) as e:
        Engine(EngineOptions(watchdog=0.2)).run(
            [KernelRun(c, "spin", "trisc", spinner), KernelRun(c, "producer", "ncrisc", producer)]
        )
    line = next(x for x in e.value.message.splitlines() if "running" in x)
    assert "last synchronisation: cb_wait_front(cb, 1)" in line


def test_except_exception_in_a_kernel_does_not_swallow_the_watchdog():
    def stubborn():
        while True:
            try:
                while True:
                    pass
            except Exception:  # what careless kernels do
                pass

    with pytest.raises(DeadlockError, match="livelock"):
        Engine(EngineOptions(watchdog=0.2)).run([KernelRun(core(), "k", "trisc", stubborn)])


def _busy(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_the_limit_is_configurable_and_zero_or_none_turns_it_off():
    with pytest.raises(DeadlockError, match="livelock"):
        Engine(EngineOptions(watchdog=0.1)).run(
            [KernelRun(core(), "k", "trisc", lambda: _busy(0.6))]
        )
    for off in (None, 0.0):
        Engine(EngineOptions(watchdog=off)).run(
            [KernelRun(core(), "k", "trisc", lambda: _busy(0.6))]
        )
    Engine(EngineOptions(watchdog=5.0)).run([KernelRun(core(), "k", "trisc", lambda: _busy(0.3))])


@pytest.mark.parametrize("bad", [-1.0, float("nan")])
def test_engine_options_reject_a_bad_watchdog(bad):
    with pytest.raises(DeviceError, match="EngineOptions.watchdog must be a number of seconds"):
        EngineOptions(watchdog=bad)


def test_waiting_for_a_child_process_is_not_a_livelock():
    # A native kernel's first run builds it with the C++ compiler (a child process).
    def builds():
        subprocess.run([sys.executable, "-c", "import time; time.sleep(0.8)"], check=True)

    Engine(EngineOptions(watchdog=0.2)).run([KernelRun(core(), "k", "trisc", builds)])


def test_no_interrupt_leaks_out_of_a_launch():
    engine = Engine(EngineOptions(watchdog=0.15))
    for _ in range(3):
        with pytest.raises(DeadlockError):
            engine.run([KernelRun(core(), "spin", "trisc", lambda: _busy(60))])
    _busy(0.6)  # a pending interrupt would land here
    engine.run([KernelRun(core(), "ok", "trisc", lambda: None)])


def test_endless_polling_is_a_livelock_naming_every_kernel():
    c = core()
    cb = CircularBuffer(c, 0, 0, 32, 32, name="cb")
    engine = Engine(EngineOptions(poll_limit=50))

    def poller():
        while True:
            engine.poll_yield(cb, ("wait", 1))

    def sleeper():
        cb.wait_front(1)

    with pytest.raises(DeadlockError) as e:
        engine.run(
            [KernelRun(c, "poller", "ncrisc", poller), KernelRun(c, "other", "trisc", sleeper)]
        )
    err = e.value
    assert err.rule == "livelock" and err.loc is not None and err.loc.file == __file__
    assert "keeps polling without any kernel making progress" in err.message
    assert "kernel other (trisc): blocked at" in err.message


def test_cli_reports_a_spinning_tt_lang_kernel(tmp_path):
    prog = tmp_path / "spin.py"
    prog.write_text(SPIN)
    result = CliRunner().invoke(cli, ["run", "--engine", "python", "--watchdog", "0.5", str(prog)])
    assert result.exit_code == 1, result.output
    err = result.stderr
    assert "Traceback" not in err
    assert err.startswith(
        f"DeadlockError: {prog}:{SPIN_LINE}: error: livelock: node (0, 0), kernel compute (trisc)"
    )
    assert f"node (0, 0), kernel compute (trisc): running at {prog}:{SPIN_LINE}" in err
    assert "holds a block (waited from DFB 'a_dfb')" in err
    assert "node (0, 0), kernel writer (brisc): ready, not started" in err


def test_cli_reports_a_spinning_compiled_kernel_at_the_users_line(tmp_path):
    """Compiled (native) the same kernel is stopped in C++; the report names the user's
    program -- the loop or its body, or the kernel-API call before it when the optimiser
    left the loop no line of its own -- never Tilewright's headers."""
    prog = tmp_path / "spin.py"
    prog.write_text(SPIN)
    result = CliRunner().invoke(cli, ["run", "--engine", "native", "--watchdog", "0.5", str(prog)])
    assert result.exit_code == 1, result.output
    err = result.stderr
    assert "Traceback" not in err
    head = err.splitlines()[0]
    assert head.startswith(f"DeadlockError: {prog}:"), head
    # the loop, its body's checked ``n += 1`` (a call of its own since integers are
    # checked), or the kernel-API call before it
    assert int(head.split(":")[2]) in (SPIN_LINE - 2, SPIN_LINE, SPIN_LINE + 1), head
    assert "livelock: node (0, 0), kernel compute (trisc) ran in native code" in head
    assert "tilewright/native/include" not in err


def test_ctrl_c_prints_where_every_kernel_was(tmp_path):
    prog = tmp_path / "spin.py"
    prog.write_text(SPIN)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tilewright",
            "run",
            "--engine",
            "python",
            "--watchdog",
            "0",
            str(prog),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.5)  # into the launch: the compute kernel is spinning
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Aborted!" not in err and "Traceback" not in err
    assert err.startswith("KeyboardInterrupt: interrupted\ninterrupted (Ctrl-C) while node (0, 0)")
    assert f"node (0, 0), kernel compute (trisc): running at {prog}:{SPIN_LINE}" in err


def test_importing_a_module_is_not_a_livelock(tmp_path, monkeypatch):
    # torch's first import inside a kernel (a golden function) can take seconds.
    (tmp_path / "slow_import_mod.py").write_text("import time\ntime.sleep(0.8)\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def imports():
        import slow_import_mod  # noqa: F401

    Engine(EngineOptions(watchdog=0.2)).run([KernelRun(core(), "k", "trisc", imports)])
