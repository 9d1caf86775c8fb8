"""The native runtime keeps its fault handler in front of handlers installed after it.

Native kernels reach L1 through the identity window, which is mapped on a kernel's first
access by the runtime's SIGSEGV handler (runtime/window.cpp).  A library that installs its
own crash handler after the runtime loaded (Ray's core worker does, in the driver of
``--workers``) used to take those faults, and the kernel died of a segfault (the pipe
multicast example, whose kernels write other nodes' L1).  Run in a child process: a
regression kills it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "05_pipe_multicast.py"

CHILD = textwrap.dedent(
    f"""
    import signal
    from tilewright.cli.runner import run_program  # what `tilewright run` runs it with
    assert run_program({str(EXAMPLE)!r}, []) == 0  # loads the runtime
    # what a library that installs its own crash handler later leaves, at worst: SIGSEGV's
    # default action (absl's handler, which Ray installs, ends the process too)
    signal.signal(signal.SIGSEGV, signal.SIG_DFL)
    assert run_program({str(EXAMPLE)!r}, []) == 0
    """
)


def test_a_crash_handler_installed_later_does_not_take_the_windows_faults():
    res = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.count("PASS 05_pipe_multicast") == 2
