"""Native code that never hands back: the watchdog and Ctrl-C reach it.

A C++ kernel (or an external C++ function) in an endless loop never returns to Python,
so an asynchronous Python exception cannot reach it.  The native runtime stops the fiber
from outside (a signal to the thread in native code, handled like a fault: the fiber
resumes at its failure stub), and the engine reports a livelock naming the kernel, the
core and the C++ line the loop was at.  The process and the device keep working.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import torch

from tilewright import ttl, ttnn
from tilewright.device.coords import CoreCoord
from tilewright.device.engine import EngineOptions
from tilewright.device.program import Program, ReaderDataMovementConfig
from tilewright.errors import DeadlockError
from tilewright.native.kernels import NativeKernel

HERE = os.path.dirname(os.path.abspath(__file__))
CPP = os.path.join(HERE, "cpp")

SPIN_KERNEL = """\
#include <cstdint>
void kernel_main() {
    volatile uint32_t n = get_arg_val<uint32_t>(0);
    while (true) {  // line 4
        n = n + 1;
    }
}
"""

MALLOC_KERNEL = """\
#include <cstdint>
#include <cstdlib>
void kernel_main() {
    uint32_t n = get_arg_val<uint32_t>(0);
    while (true) {  // in and out of malloc: never stopped while malloc holds its lock
        void* volatile p = std::malloc(64 + (n++ & 63));
        std::free(p);
    }
}
"""


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(device_id=0, board="n150", options=EngineOptions(watchdog=0.3))
    yield dev
    ttnn.close_device(dev)


CORE = CoreCoord(2, 1)


def _run_native(device, source: str, name: str, core: CoreCoord = CORE) -> None:
    program = Program(name)
    k = program.create_kernel(
        NativeKernel(source=source, name=name), core, ReaderDataMovementConfig()
    )
    program.set_runtime_args(k, core, [0])
    device.command_queue.enqueue_program(program)


def _still_works(device) -> None:
    _run_native(device, "void kernel_main() {}\n", "ok")
    t = ttnn.from_torch(torch.arange(64.0).reshape(8, 8), device=device)
    assert torch.equal(ttnn.to_torch(t), torch.arange(64.0).reshape(8, 8))


def test_a_native_kernel_in_an_endless_loop_is_a_livelock_at_its_cpp_line(device):
    _run_native(device, "void kernel_main() {}\n", "ok")  # built: the build is not timed
    start = time.monotonic()
    with pytest.raises(DeadlockError) as info:
        _run_native(device, SPIN_KERNEL, "spinner")
    assert time.monotonic() - start < 60
    err = info.value
    assert err.rule == "livelock"
    assert err.message.startswith(
        "livelock: core (2, 1), kernel spinner (ncrisc) ran in native code for 0.3 s"
    )
    assert err.loc is not None and err.loc.file.endswith("kernel.cpp")
    assert err.loc.line in (4, 5)  # the loop
    assert "kernel spinner (ncrisc): running at" in err.message
    assert any("native kernel spinner on core (2, 1) was stopped" in n for n in err.__notes__)
    _still_works(device)


def test_a_native_loop_through_malloc_is_stopped_outside_malloc(device):
    for _ in range(3):
        with pytest.raises(DeadlockError, match="livelock"):
            _run_native(device, MALLOC_KERNEL, "allocator")
        _still_works(device)  # malloc's lock was not left held
        _ = [bytearray(100) for _ in range(1000)]


@ttl.operation(grid=(1, 1))
def stuck_extern(a: ttnn.Tensor) -> None:
    @ttl.datamovement()
    def dm():
        ttl.call_extern_func(
            "stuck.hpp", "spin_forever", func_args=[1], include_paths=[CPP]
        )  # CALL


def test_an_external_cpp_function_that_never_returns_is_a_livelock(device):
    a = ttnn.from_torch(torch.zeros(32, 32), layout=ttnn.TILE_LAYOUT, device=device)
    with pytest.raises(DeadlockError) as info:
        stuck_extern(a)
    err = info.value
    assert err.rule == "livelock"
    assert "kernel dm" in err.message and "ran in native code" in err.message
    assert err.loc is not None and err.loc.file.endswith("stuck.hpp")
    with open(os.path.join(CPP, "stuck.hpp")) as f:
        loop = next(i for i, line in enumerate(f, 1) if "STUCK LINE" in line)
    assert err.loc.line in (loop, loop + 1)
    notes = "\n".join(err.__notes__)
    assert "spin_forever" in notes and "was stopped in native code" in notes
    _still_works(device)


def _ctrl_c_program(tmp_path) -> str:
    prog = tmp_path / "native_spin.py"
    prog.write_text(
        textwrap.dedent(
            """\
            from tilewright.device.coords import CoreCoord
            from tilewright.device.engine import EngineOptions
            from tilewright.device.program import Program, ReaderDataMovementConfig
            from tilewright.errors import DeadlockError
            from tilewright.native.kernels import NativeKernel
            import ttnn

            SOURCE = "void kernel_main() { volatile unsigned n = 0; while (true) { n = n + 1; } }\\n"

            def spin(device):
                program = Program("spin")
                program.create_kernel(NativeKernel(source=SOURCE, name="spinner"),
                                      CoreCoord(1, 0), ReaderDataMovementConfig())
                device.command_queue.enqueue_program(program)

            try:  # builds the kernel (the watchdog stops this first run)
                spin(ttnn.open_device(device_id=0, options=EngineOptions(watchdog=0.2)))
            except DeadlockError:
                pass
            device = ttnn.open_device(device_id=1)  # --watchdog 0: runs until Ctrl-C
            print("ready", flush=True)
            spin(device)
            """
        )
    )
    return str(prog)


def test_ctrl_c_stops_a_native_kernel_and_reports_it(tmp_path, native_cache):
    prog = _ctrl_c_program(tmp_path)
    env = dict(os.environ, XDG_CACHE_HOME=str(native_cache))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tilewright", "run", "--watchdog", "0", prog],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1.0)  # into the loop (the kernel object is cached: loading takes ms)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert err.startswith(
        "KeyboardInterrupt: interrupted\ninterrupted (Ctrl-C) while core (1, 0), kernel spinner"
    ), err
    assert "kernel spinner (ncrisc): running at" in err and "kernel.cpp:1" in err
    assert "native kernel spinner on core (1, 0) was stopped in native code at" in err
