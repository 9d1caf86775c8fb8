"""Launch set-up on the host (issue 22 item 4): a warm call of a 64-core operation.

Prints one JSON object.  The case is a compiled TT-Lang elementwise operation
(``y = a + b``, 1x1-tile blocks) on an 8x8 grid -- 64 nodes, 3 kernels each, 192 native
kernel runs -- over 256x256 bf16 tensors (one tile per node), so the kernels themselves
are short and the host's part of a call shows.  Per warm call (medians of ``--calls``):

* ``setup_ms``: the launch's host time: ``launch_program`` (set-up of every core, the
  engine's run table, the native runs, the results and the release) minus the time
  inside native kernels (goal <= 1 ms);
* ``call_host_ms``: the whole operation call minus the time inside native kernels (the
  warm lookup and the rebinding of tensor addresses too);
* ``setup_cpu_ms``: ``setup_ms`` as this thread's CPU time (less sensitive to a busy
  machine than wall time);
* ``native_ms``: inside the native kernels.

``cached`` is the launch cache on (``device/launch.py``); ``uncached`` the same calls with
``LAUNCH_CACHE.enabled = False`` (every launch sets up every core; the rest of the
launch work -- native runs made in one call, pooled DST buffers, statistics built when
read -- stays as fast).  On a tree without the launch cache ``cached`` is null and
``uncached`` is that tree's launch (the "before").  ``hits`` counts the cached run's
plan reuses.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tilewright import ttl, ttnn  # noqa: E402

TILE = 32


def add_op(grid: int):
    @ttl.operation(grid=(grid, grid))
    def add(a, b, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def reader():
            x, yy = ttl.node(dims=2)
            with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
                ttl.copy(a[yy, x], ab).wait()
                ttl.copy(b[yy, x], bb).wait()

        @ttl.compute()
        def compute():
            with a_dfb.wait() as ab, b_dfb.wait() as bb, y_dfb.reserve() as ob:
                ob.store(ab + bb)

        @ttl.datamovement()
        def writer():
            x, yy = ttl.node(dims=2)
            with y_dfb.wait() as ob:
                ttl.copy(ob, y[yy, x]).wait()

    return add


class _Timer:
    """Wall and CPU time of ``launch_program`` and of native kernels, per call."""

    def __init__(self) -> None:
        from tilewright.device import command_queue
        from tilewright.native.driver import Driver

        self.native = 0.0
        self.native_cpu = 0.0
        self.launch = 0.0
        self.launch_cpu = 0.0
        resume = Driver.resume
        launch = command_queue.launch_program
        timer = self

        def timed_resume(self, index):
            t, c = time.perf_counter(), time.thread_time()
            try:
                return resume(self, index)
            finally:
                timer.native += time.perf_counter() - t
                timer.native_cpu += time.thread_time() - c

        def timed_launch(*args, **kwargs):
            t, c = time.perf_counter(), time.thread_time()
            try:
                return launch(*args, **kwargs)
            finally:
                timer.launch += time.perf_counter() - t
                timer.launch_cpu += time.thread_time() - c

        Driver.resume = timed_resume  # type: ignore[method-assign]
        command_queue.launch_program = timed_launch  # type: ignore[assignment]

    def reset(self) -> None:
        self.native = self.native_cpu = self.launch = self.launch_cpu = 0.0


def measure(op, tensors, calls: int, timer: _Timer) -> dict:
    rows = []
    for _ in range(calls):
        timer.reset()
        t = time.perf_counter()
        op(*tensors)
        call = time.perf_counter() - t
        rows.append(
            (
                timer.launch - timer.native,
                call - timer.native,
                timer.launch_cpu - timer.native_cpu,
                timer.native,
            )
        )

    def med(i: int) -> float:
        return round(statistics.median(r[i] for r in rows) * 1e3, 3)

    return {"setup_ms": med(0), "call_host_ms": med(1), "setup_cpu_ms": med(2), "native_ms": med(3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50, help="warm calls per case")
    opts = parser.parse_args()

    import torch

    from tilewright.device import session

    try:
        from tilewright.device.launch import LAUNCH_CACHE
    except ImportError:  # a tree from before the launch cache: its launches are the "before"
        LAUNCH_CACHE = None

    session.OPTIONS.engine = "native"
    device = ttnn.open_device(device_id=0)
    grid = 8
    n = grid * TILE
    tensors = [
        ttnn.from_torch(
            torch.rand(n, n),
            dtype=ttnn.bfloat16,
            layout=ttnn.TILE_LAYOUT,
            device=device,
            memory_config=ttnn.DRAM_MEMORY_CONFIG,
        )
        for _ in range(3)
    ]
    op = add_op(grid)
    timer = _Timer()
    op(*tensors)  # the cold call: builds the kernels
    op(*tensors)
    cached, hits = None, 0
    if LAUNCH_CACHE is not None:
        LAUNCH_CACHE.enabled = False
    uncached = measure(op, tensors, opts.calls, timer)
    if LAUNCH_CACHE is not None:
        LAUNCH_CACHE.enabled = True
        op(*tensors)  # the plan of this program
        hits = LAUNCH_CACHE.hits
        cached = measure(op, tensors, opts.calls, timer)
        hits = LAUNCH_CACHE.hits - hits
    ttnn.close_device(device)
    result = {
        "benchmark": "launch",
        "case": f"ttl add, {grid}x{grid} grid, {n}x{n} bf16, 1x1 blocks, native engine",
        "runs_per_launch": grid * grid * 3,
        "calls": opts.calls,
        "cached": cached,
        "uncached": uncached,
        "hits": hits,
        "goal_setup_ms": 1.0,
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
