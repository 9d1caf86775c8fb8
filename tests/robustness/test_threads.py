"""Threads: each thread runs its own device concurrently; one device serves one launch.

The engine's running kernel (``ACTIVE``), the kernel ``print`` routing and the TT-Lang
launch state are per thread.  Before, two threads each with their own device failed
46-197 of 200 calls with errors blaming the program, and the main thread's ``print``
got a kernel prefix.
"""

from __future__ import annotations

import builtins
import threading
import time
from types import SimpleNamespace

import pytest
import torch

from tests.robustness.programs import add_2x2
from tilewright import ttl, ttnn
from tilewright.device.coords import CoreCoord
from tilewright.device.engine import ACTIVE, Engine, EngineOptions, KernelRun
from tilewright.errors import DeadlockError, DeviceError

CALLS_PER_THREAD = 100


def _worker(device_id: int, results: dict, errors: list) -> None:
    device = ttnn.open_device(device_id=device_id, board="n300")
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    try:
        ok = 0
        for k in range(CALLS_PER_THREAD):
            a_host = torch.full((64, 64), float(device_id + 1))
            b_host = torch.full((64, 64), float(k % 7))
            a, b = ttnn.from_torch(a_host, **kw), ttnn.from_torch(b_host, **kw)
            out = ttnn.from_torch(torch.zeros(64, 64), **kw)
            try:
                add_2x2(a, b, out)
            except Exception as exc:  # recorded: the assertion below shows them
                errors.append(f"thread {device_id} call {k}: {type(exc).__name__}: {exc}")
                continue
            ok += torch.equal(ttnn.to_torch(out).float(), a_host + b_host)
        results[device_id] = ok
    finally:
        ttnn.close_device(device)


def test_two_threads_two_devices_200_calls_all_right_and_main_print_plain(capsys):
    plain_print = builtins.print
    results: dict[int, int] = {}
    errors: list[str] = []
    threads = [threading.Thread(target=_worker, args=(i, results, errors)) for i in range(2)]
    for t in threads:
        t.start()
    main_prints = 0
    while any(t.is_alive() for t in threads):
        print("main thread line")
        main_prints += 1
        time.sleep(0.002)
    for t in threads:
        t.join()
    out = capsys.readouterr().out.splitlines()
    assert errors == []
    assert results == {0: CALLS_PER_THREAD, 1: CALLS_PER_THREAD}
    assert out.count("main thread line") == main_prints  # never prefixed
    kernel_lines = [line for line in out if line != "main thread line"]
    assert len(kernel_lines) == 2 * CALLS_PER_THREAD
    assert all(line == "[node (0, 0) compute] kernel says hi" for line in kernel_lines)
    assert builtins.print is plain_print  # the router is gone once no launch wants it


def _launch_blocked_on(event: threading.Event, engine: Engine, ready: threading.Event) -> None:
    core = SimpleNamespace(logical=CoreCoord(0, 0))

    def kernel() -> None:
        ready.set()
        event.wait(10)

    engine.run([KernelRun(core, "waiter", "ncrisc", kernel)])


def test_a_second_thread_launching_on_a_busy_device_gets_a_clear_error():
    engine = Engine(name="device 0")
    release, ready = threading.Event(), threading.Event()
    owner = threading.Thread(target=_launch_blocked_on, args=(release, engine, ready))
    owner.start()
    try:
        assert ready.wait(10)
        core = SimpleNamespace(logical=CoreCoord(0, 0))
        with pytest.raises(
            DeviceError, match="device 0 is running a launch in another thread"
        ) as e:
            engine.run([KernelRun(core, "intruder", "brisc", lambda: None)])
        assert "open one device per thread" in (e.value.hint or "")
    finally:
        release.set()
        owner.join()
    # Once the owner is done, another thread may launch on the device.
    engine.run([KernelRun(SimpleNamespace(logical=CoreCoord(0, 0)), "k", "brisc", lambda: None)])


def test_active_is_per_thread():
    seen: dict[str, object] = {}
    core = SimpleNamespace(logical=CoreCoord(0, 0))
    inside, leave = threading.Event(), threading.Event()

    def kernel() -> None:
        seen["worker"] = ACTIVE.run
        inside.set()
        leave.wait(10)

    t = threading.Thread(target=lambda: Engine().run([KernelRun(core, "k", "brisc", kernel)]))
    t.start()
    assert inside.wait(10)
    seen["main"] = ACTIVE.run  # the worker's kernel is running right now
    leave.set()
    t.join()
    assert seen["main"] is None and seen["worker"] is not None


def test_watchdog_interrupts_a_spinning_kernel_in_a_worker_thread():
    caught: list[BaseException] = []
    core = SimpleNamespace(logical=CoreCoord(0, 0))

    def spin() -> None:
        while True:
            pass

    def worker() -> None:
        try:
            Engine(EngineOptions(watchdog=0.2)).run([KernelRun(core, "spin", "trisc", spin)])
        except BaseException as exc:  # the test asserts what arrived
            caught.append(exc)

    t = threading.Thread(target=worker)
    t.start()
    t.join(30)
    assert not t.is_alive()
    assert len(caught) == 1 and isinstance(caught[0], DeadlockError)
    assert caught[0].rule == "livelock" and "kernel spin (trisc)" in caught[0].message


def test_two_threads_opening_the_same_chip_exactly_one_succeeds():
    start = threading.Barrier(8)
    opened: list[object] = []
    refused: list[str] = []

    def opener() -> None:
        start.wait()
        try:
            opened.append(ttnn.open_device(device_id=0))
        except DeviceError as exc:
            refused.append(exc.message)

    threads = [threading.Thread(target=opener) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert len(opened) == 1 and len(refused) == 7
        assert all("device 0 is already open" in m for m in refused)
    finally:
        for dev in opened:
            ttnn.close_device(dev)


# -- native kernels in two threads ---------------------------------------------------------------

NATIVE_CALLS_PER_THREAD = 30

# The native half of a mixed launch: it stores a seed through an L1 pointer (the identity
# window), hands pages to a Python kernel through CB 0 (each hand-off returns to Python,
# where the other thread's native code may run and remap the window), and checks after
# every hand-off that the pointer still shows its own core's L1.
WINDOW_KERNEL = r"""
#include <cstdint>
void kernel_main() {
    const uint32_t scratch = get_arg_val<uint32_t>(0);
    const uint32_t out_addr = get_arg_val<uint32_t>(1);
    const uint32_t seed = get_arg_val<uint32_t>(2);
    const uint32_t slot = get_arg_val<uint32_t>(3);
    volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(scratch + 32 * slot);
    p[0] = seed;
    p[1] = 0;
    for (int i = 0; i < 8; ++i) {
        cb_reserve_back(0, 1);
        cb_push_back(0, 1);
        if (p[0] != seed) p[1] = p[1] + 1;  // another core's or device's L1 showed through
    }
    noc_async_write(scratch + 32 * slot, get_noc_addr_from_bank_id<true>(0, out_addr + 32 * slot), 8);
    noc_async_write_barrier();
}
"""


def _python_consumer() -> None:
    from tilewright.device.kernel_api.dataflow import cb_pop_front, cb_wait_front

    for _ in range(8):
        cb_wait_front(0, 1)
        cb_pop_front(0, 1)


def _native_worker(device_id: int, results: dict, errors: list) -> None:
    from tilewright.device.formats import DataFormat
    from tilewright.device.program import (
        CircularBufferConfig,
        DataMovementConfig,
        DataMovementProcessor,
        Program,
    )
    from tilewright.native.kernels import NativeKernel

    device = ttnn.open_device(device_id=device_id, board="n300")
    try:
        cores = [CoreCoord(0, 0), CoreCoord(3, 1)]
        scratch = ttnn.from_torch(
            torch.zeros(1, 16, dtype=torch.int32),
            dtype=ttnn.int32,
            device=device,
            memory_config=ttnn.L1_MEMORY_CONFIG,
        )
        out = ttnn.from_torch(
            torch.zeros(1, 16, dtype=torch.int32), dtype=ttnn.int32, device=device
        )
        kernel = NativeKernel(source=WINDOW_KERNEL, name="window")
        ok = 0
        for k in range(NATIVE_CALLS_PER_THREAD):
            program = Program("window")
            ranges = ttnn.CoreRangeSet([ttnn.CoreRange(c, c) for c in cores])
            program.create_circular_buffer(
                ranges, CircularBufferConfig(64, {0: DataFormat.Float16_b}).set_page_size(0, 32)
            )
            native = program.create_kernel(
                kernel, ranges, DataMovementConfig(DataMovementProcessor.RISCV_0)
            )
            program.create_kernel(
                _python_consumer, ranges, DataMovementConfig(DataMovementProcessor.RISCV_1)
            )
            seeds = []
            for slot, c in enumerate(cores):
                seed = 100_000 * (device_id + 1) + 1000 * k + slot
                seeds.append(seed)
                program.set_runtime_args(
                    native, c, [scratch.buffer_address(), out.buffer_address(), seed, slot]
                )
            try:
                device.command_queue.enqueue_program(program)
            except Exception as exc:  # recorded: the assertion below shows them
                errors.append(f"thread {device_id} call {k}: {type(exc).__name__}: {exc}")
                continue
            got = ttnn.to_torch(out).reshape(-1).tolist()
            ok += got[0:2] == [seeds[0], 0] and got[8:10] == [seeds[1], 0]
        results[device_id] = ok
    finally:
        ttnn.close_device(device)


def test_two_threads_run_native_kernels_concurrently_each_seeing_its_own_l1():
    results: dict[int, int] = {}
    errors: list[str] = []
    threads = [threading.Thread(target=_native_worker, args=(i, results, errors)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(240)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    assert results == {0: NATIVE_CALLS_PER_THREAD, 1: NATIVE_CALLS_PER_THREAD}


SHARED_CALLS = 12


@ttl.operation(grid=(2, 2))
def add_quiet(a: ttnn.Tensor, b: ttnn.Tensor, out: ttnn.Tensor) -> None:
    """out = a + b, one tile per node (compilable: no print)."""
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        x, y = ttl.node(dims=2)
        with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
            ttl.copy(a[y, x], ab).wait()
            ttl.copy(b[y, x], bb).wait()

    @ttl.compute()
    def compute():
        with a_dfb.wait() as ab, b_dfb.wait() as bb, o_dfb.reserve() as ob:
            ob.store(ab + bb)

    @ttl.datamovement()
    def writer():
        x, y = ttl.node(dims=2)
        with o_dfb.wait() as ob:
            ttl.copy(ob, out[y, x]).wait()


@pytest.mark.parametrize("engine", ["native", "python"])
def test_two_threads_calling_an_operation_on_one_device(engine, native_cache):
    """Every call either computes the right sum or is the documented DeviceError ("device
    N is running a launch in another thread"); nothing else.  Before, on the native engine:
    bogus DFBContractErrors blaming correct code, wrong results, a SIGSEGV."""
    from tilewright.device import session

    saved = session.OPTIONS.engine
    session.OPTIONS.engine = engine
    device = ttnn.open_device(device_id=0)
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    outcomes: list[str] = []
    start = threading.Barrier(2)

    def worker(seed: int) -> None:
        start.wait()
        for k in range(SHARED_CALLS):
            a_host = torch.full((64, 64), float(seed))
            b_host = torch.full((64, 64), float(k % 5))
            a, b = ttnn.from_torch(a_host, **kw), ttnn.from_torch(b_host, **kw)
            out = ttnn.from_torch(torch.zeros(64, 64), **kw)
            try:
                add_quiet(a, b, out)
            except DeviceError as exc:
                ok = "running a launch in another thread" in exc.message and exc.loc is not None
                outcomes.append("busy" if ok else f"DeviceError: {exc.message}")
                continue
            except Exception as exc:  # noqa: BLE001 - recorded: the assertion shows them
                outcomes.append(f"{type(exc).__name__}: {exc}")
                continue
            good = torch.equal(ttnn.to_torch(out).float(), a_host + b_host)
            outcomes.append("right" if good else "wrong result")

    threads = [threading.Thread(target=worker, args=(s,)) for s in (1, 2)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
    finally:
        ttnn.close_device(device)
        session.OPTIONS.engine = saved
    assert not any(t.is_alive() for t in threads)
    bad = [o for o in outcomes if o not in ("right", "busy")]
    assert bad == [] and len(outcomes) == 2 * SHARED_CALLS
    assert "right" in outcomes
