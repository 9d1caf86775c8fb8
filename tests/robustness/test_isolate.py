"""``tilewright run --isolate``: the child dies with its parent, and a child that ends
inside native code is a crash report naming the call.

Before, killing the parent left the child spinning, orphaned, and a child ending with an
exit system call inside external C++ passed its status through silently.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

CPP = Path(__file__).resolve().parent / "cpp"

PROGRAM = textwrap.dedent(
    """\
    import os

    import numpy as np
    import ttl
    import ttnn


    @ttl.operation(grid=(1, 1))
    def op(a: ttnn.Tensor) -> None:
        @ttl.datamovement()
        def dm():
            ttl.call_extern_func("stuck.hpp", "{fn}", func_args=[7], include_paths=[{cpp!r}])


    device = ttnn.open_device(device_id=0)
    a = ttnn.from_torch(np.zeros((32, 32), np.float32), layout=ttnn.TILE_LAYOUT, device=device)
    print("child", os.getpid(), flush=True)
    op(a)
    print("PASS after the call")
    """
)
CALL_LINE = 12


def _program(tmp_path, fn: str) -> Path:
    path = tmp_path / f"{fn}.py"
    path.write_text(PROGRAM.format(fn=fn, cpp=str(CPP)))
    assert "call_extern_func" in path.read_text().splitlines()[CALL_LINE - 1]
    return path


def _popen(args, native_cache, **kw):
    env = dict(os.environ, XDG_CACHE_HOME=str(native_cache))
    return subprocess.Popen(
        [sys.executable, "-m", "tilewright", "run", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        **kw,
    )


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1].startswith("Z")  # a zombie nobody reaps yet
    except FileNotFoundError:
        return True


def test_the_isolated_child_dies_with_its_parent(tmp_path, native_cache):
    proc = _popen(
        ["--isolate", "--watchdog", "0", str(_program(tmp_path, "spin_forever"))], native_cache
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().split()
        assert line[0] == "child", line
        child = int(line[1])
        assert child != proc.pid
        time.sleep(1.0)  # into the endless C++ loop (the build happens before the print)
        assert not _gone(child)
        proc.kill()  # kill -9 the parent: no chance to clean up
        proc.wait()
        deadline = time.monotonic() + 20
        while not _gone(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(child)
    finally:
        proc.kill()


def test_an_exit_system_call_inside_external_code_is_a_crash_report(tmp_path, run_tilewright):
    path = _program(tmp_path, "exit_group_now")
    rc, out, err = run_tilewright("--isolate", str(path))
    assert rc == 1, err
    assert "PASS" not in out
    assert err.startswith(f"NativeCrashError: {path}:{CALL_LINE}:"), err
    assert (
        "ttl.call_extern_func('stuck.hpp', 'exit_group_now') ended the isolated simulation "
        "process with exit status 7 on node (0, 0)"
    ) in err


def test_ctrl_c_under_isolate_reports_where_the_child_was(tmp_path, native_cache):
    path = _program(tmp_path, "spin_forever")
    proc = _popen(["--isolate", "--watchdog", "0", str(path)], native_cache, start_new_session=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("child")
        time.sleep(1.0)
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert err.startswith("KeyboardInterrupt: interrupted\ninterrupted (Ctrl-C) while node (0, 0)")
    assert "stuck.hpp" in err and "was stopped in native code" in err
