"""What the robustness machinery costs (issue 16).

Prints one JSON object:

* ``active_read_ns``: one read of the per-thread ``ACTIVE.run`` (a ``_thread._local``
  subclass) against ``slotted_read_ns``, a read of a plain slotted object (the
  process-wide record it replaced); medians of 7 timeit runs;
* ``cb_round_trip_us`` / ``cb_round_trip_depth1_us`` with the watchdog on (the default,
  10 s) and ``..._no_watchdog`` with it off; the difference is the watchdog's cost on
  the hot path (nothing is added per step: the figures differ by noise only);
* ``empty_launch_us`` / ``empty_launch_no_watchdog_us``: a launch of one kernel that
  returns at once; the watchdog registers and unregisters the launch (a lock and a list);
* ``full_4096sq_bf16_tile_rss_mb``: peak RSS growth of ``ttnn.full`` / ``ttnn.zeros`` of
  a 4096x4096 bf16 TILE tensor on a device, in a fresh process, against the 32 MiB the
  tensor takes on the device (before issue 16: 176 MiB for zeros, 240 MiB with partial
  edge tiles; the float32 host copy is gone);
* ``two_threads_200_calls_s``: two threads, each with its own device, calling a 2x2-node
  TT-Lang add 100 times each (the robustness test's workload), wall time;
* ``native_launch_us`` / ``native_launch_unchecked_us``: a launch of one empty C++ kernel
  whose object is loaded, with and without the per-launch check that its headers did not
  change (``build.is_current``: a ``stat`` of the object and each header it read);
* ``cache_lookup_warm_us`` / ``cache_lookup_cold_ms``: ``build_shared_object`` of a
  cached source in this process (the ``stat`` re-check) and as a fresh process sees it
  (the manifest read, the object's SHA-256 and every header's).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time
import timeit
from types import SimpleNamespace

RSS_SNIPPET = r"""
import gc, json, resource, sys
from tilewright import ttnn
dev = ttnn.open_device(device_id=0)
ttnn.zeros((64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
gc.collect()
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
shape = {"zeros": (4096, 4096), "full_edge": (4091, 4089)}[sys.argv[1]]
ttnn.full(shape, 3.0, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
print(json.dumps((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024))
"""


def read_costs() -> tuple[float, float]:
    from tilewright.device.engine import ACTIVE

    class Slotted:
        __slots__ = ("run",)

        def __init__(self) -> None:
            self.run = None

    n = 2_000_000
    active = statistics.median(timeit.repeat("a.run", globals={"a": ACTIVE}, number=n, repeat=7))
    slotted = statistics.median(
        timeit.repeat("a.run", globals={"a": Slotted()}, number=n, repeat=7)
    )
    return active / n * 1e9, slotted / n * 1e9


def cb_round_trip(depth: int, watchdog: float | None, n: int = 50_000) -> float:
    from tilewright.device.cb import CircularBuffer
    from tilewright.device.coords import CoreCoord
    from tilewright.device.engine import Engine, EngineOptions, KernelRun

    core = SimpleNamespace(logical=CoreCoord(0, 0))
    cb = CircularBuffer(core, 0, 0, depth * 32, 32)

    def producer():
        for _ in range(n):
            cb.reserve_back(1)
            cb.push_back(1)

    def consumer():
        for _ in range(n):
            cb.wait_front(1)
            cb.pop_front(1)

    engine = Engine(EngineOptions(watchdog=watchdog))
    t = time.perf_counter()
    engine.run([KernelRun(core, "p", "ncrisc", producer), KernelRun(core, "c", "trisc", consumer)])
    return (time.perf_counter() - t) / n * 1e6


def empty_launch(watchdog: float | None, n: int = 2000) -> float:
    from tilewright.device.coords import CoreCoord
    from tilewright.device.engine import Engine, EngineOptions, KernelRun

    core = SimpleNamespace(logical=CoreCoord(0, 0))
    engine = Engine(EngineOptions(watchdog=watchdog))
    t = time.perf_counter()
    for _ in range(n):
        engine.run([KernelRun(core, "k", "trisc", lambda: None)])
    return (time.perf_counter() - t) / n * 1e6


def two_threads() -> float:
    import torch

    from tilewright import ttl, ttnn

    @ttl.operation(grid=(2, 2))
    def add_2x2(a, b, out):
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

    def worker(device_id: int) -> None:
        dev = ttnn.open_device(device_id=device_id, board="n300")
        kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
        for _ in range(100):
            a, b, out = (ttnn.from_torch(torch.ones(64, 64), **kw) for _ in range(3))
            add_2x2(a, b, out)
        ttnn.close_device(dev)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return time.perf_counter() - t


def native_launch(checked: bool, n: int = 300) -> float:
    from tilewright import ttnn
    from tilewright.device.coords import CoreCoord
    from tilewright.device.program import Program, ReaderDataMovementConfig
    from tilewright.native import kernels
    from tilewright.native.kernels import NativeKernel

    device = ttnn.open_device(device_id=0, board="n150")
    kernel = NativeKernel(source="void kernel_main() {}\n", name="empty")
    saved = kernels.is_current
    if not checked:
        kernels.is_current = lambda result: True  # type: ignore[assignment]
    try:

        def launch():
            program = Program("empty")
            program.create_kernel(kernel, CoreCoord(0, 0), ReaderDataMovementConfig())
            device.command_queue.enqueue_program(program)

        launch()
        t = time.perf_counter()
        for _ in range(n):
            launch()
        return (time.perf_counter() - t) / n * 1e6
    finally:
        kernels.is_current = saved
        ttnn.close_device(device)


def cache_lookup(cold: bool, n: int = 200) -> float:
    from tilewright import native
    from tilewright.native import build as nbuild
    from tilewright.native import cachefs

    source = '#include "tilewright/glue.h"\nTW_EXPORT int32_t tw_entry(const int64_t*, int64_t*) { return 0; }\n'
    native.build_shared_object(source)
    t = time.perf_counter()
    for _ in range(n):
        if cold:
            nbuild._VERIFIED.clear()
            cachefs.FILE_HASHES.clear()
        native.build_shared_object(source)
    per = (time.perf_counter() - t) / n
    return per * 1e3 if cold else per * 1e6


def rss(kind: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", RSS_SNIPPET, kind], capture_output=True, text=True, check=True
    )
    return round(json.loads(out.stdout), 1)


def main() -> None:
    active, slotted = read_costs()

    def med(f, *args):
        return round(statistics.median(f(*args) for _ in range(5)), 3)

    result = {
        "benchmark": "robustness",
        "active_read_ns": round(active, 1),
        "slotted_read_ns": round(slotted, 1),
        "cb_round_trip_us": med(cb_round_trip, 2, 10.0),
        "cb_round_trip_no_watchdog_us": med(cb_round_trip, 2, None),
        "cb_round_trip_depth1_us": med(cb_round_trip, 1, 10.0),
        "cb_round_trip_depth1_no_watchdog_us": med(cb_round_trip, 1, None),
        "empty_launch_us": med(empty_launch, 10.0),
        "empty_launch_no_watchdog_us": med(empty_launch, None),
        "full_4096sq_bf16_tile_rss_mb": {"zeros": rss("zeros"), "partial_edges": rss("full_edge")},
        "tensor_on_device_mb": 32.0,
        "two_threads_200_calls_s": round(two_threads(), 2),
        "native_launch_us": med(native_launch, True),
        "native_launch_unchecked_us": med(native_launch, False),
        "cache_lookup_warm_us": med(cache_lookup, False),
        "cache_lookup_cold_ms": med(cache_lookup, True, 50),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
