"""The virtual device's own costs (issue 3): CB round trip, device memory footprint.

Prints one JSON object:

* ``cb_round_trip_us``: one reserve / push (producer kernel) + wait / pop (consumer
  kernel) on a 2-page circular buffer, the two kernels on one core; median over
  several runs of 100k round trips (goal <= 5 us);
* ``cb_round_trip_depth1_us``: the same with a 1-page buffer (every round trip
  switches kernels twice);
* ``rss_8x8_two_2048sq_bf16_mb``: resident memory of a fresh process that opens an
  8x8 Wormhole device and holds two 2048x2048 bf16 tensors in DRAM, against the
  payload (tensor bytes + all cores' L1) it must hold — no per-core copies.

Tile-format throughput (tilize + bf16 encode, bfp8_b encode) is benchmarks/bench_formats.py.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from types import SimpleNamespace

RSS_SNIPPET = r"""
import resource, json, torch
from tilewright import ttnn
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
dev = ttnn.open_device(device_id=0)
ts = [ttnn.from_torch(torch.rand(2048, 2048), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
      for _ in range(2)]
del torch
import gc; gc.collect()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"baseline_kb": base, "peak_kb": peak,
                  "l1_bytes": dev.l1_size * len(dev.cores), "tensor_bytes": 2 * 2048 * 2048 * 2}))
"""


def cb_round_trip(depth: int, n: int = 100_000) -> float:
    from tilewright.device.cb import CircularBuffer
    from tilewright.device.coords import CoreCoord
    from tilewright.device.engine import Engine, KernelRun

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

    t = time.perf_counter()
    Engine().run(
        [
            KernelRun(core, "producer", "ncrisc", producer),
            KernelRun(core, "consumer", "trisc", consumer),
        ]
    )
    return (time.perf_counter() - t) / n * 1e6


def main() -> None:
    rt2 = statistics.median(cb_round_trip(2) for _ in range(5))
    rt1 = statistics.median(cb_round_trip(1) for _ in range(5))
    out = subprocess.run(
        [sys.executable, "-c", RSS_SNIPPET], capture_output=True, text=True, check=True
    )
    rss = json.loads(out.stdout)
    mb = 1024 * 1024
    result = {
        "benchmark": "device",
        "cb_round_trip_us": round(rt2, 3),
        "cb_round_trip_depth1_us": round(rt1, 3),
        "rss_8x8_two_2048sq_bf16_mb": round(rss["peak_kb"] / 1024, 1),
        "rss_before_device_mb": round(rss["baseline_kb"] / 1024, 1),
        "payload_mb": round((rss["l1_bytes"] + rss["tensor_bytes"]) / mb, 1),
        "payload_detail": {
            "l1_mb": round(rss["l1_bytes"] / mb, 1),
            "tensors_mb": round(rss["tensor_bytes"] / mb, 1),
        },
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
