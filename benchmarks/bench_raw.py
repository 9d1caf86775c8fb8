"""Benchmark: raw IR functions (``@ttl.raw.ir`` / ``ttl.raw.call``); prints one JSON object.

* ``trace_ms`` -- tracing one raw function for a call site (the scale-and-copy loop of
  ``examples/raw_scale_copy.py``: 11 ops in a loop) and verifying its IR: what decoration,
  lowering and the first run of a call pay; median;
* ``call_overhead_us`` -- one bound call of a raw function with a scalar parameter and a
  result (``return k + 1``) from a kernel on the Python engine: site binding cache,
  argument range checks, the interpreter's entry and the result; median over runs;
* ``python_loop_us`` -- the same loop without the call, for reference;
* ``scale_tile_us`` -- one tile of the scale-and-copy function on the Python engine
  (wait, reserve, copy_tile, SFPU multiply, pack_tile, push, pop through the kernel-IR
  interpreter), against ``block_tile_us``: the same tile written in the block language
  (``o.store(i * 1.5)``); median per tile of a 64-tile single-node run.

* ``run_s`` -- what a user sees: a whole ``tilewright run --engine E`` of each raw example
  (process start, imports, device, decoration, build from a warm cache, the call, the
  check), median of 3 per engine, beside ``python_start_s`` (``python -c "import torch"``,
  the floor any such program pays) -- the math itself (64x256 scale) is microseconds in numpy.

Run: ``.venv/bin/python benchmarks/bench_raw.py``.
"""

from __future__ import annotations

import json
import statistics
import time

import torch

from tilewright import ttl, ttnn
from tilewright.compiler.raw.trace import Bind, trace
from tilewright.device import session
from tilewright.kir.ir import CBDecl

raw = ttl.raw
CALLS = 20_000
RUNS = 5
TILES = 64
TIMES: list[float] = []


@ttl.raw.ir
def scale_copy(src: ttl.raw.DFB, dst: ttl.raw.DFB, factor: ttl.raw.f32, n: ttl.raw.index):
    with raw.for_(n):
        raw.dfb_wait(src, 1)
        raw.dfb_reserve(dst, 1)
        raw.tile_regs_acquire()
        raw.copy_tile(src, 0, 0)
        raw.mul_scalar(0, factor)
        raw.tile_regs_commit()
        raw.tile_regs_wait()
        raw.pack_tile(0, dst, 0)
        raw.tile_regs_release()
        raw.dfb_push(dst, 1)
        raw.dfb_pop(src, 1)


@ttl.raw.ir
def plus_one(k: ttl.raw.i32) -> ttl.raw.i32:
    return k + 1


def bench_trace() -> float:
    cbs = (CBDecl(0, "src", "Float16_b", 2048, 2, 1), CBDecl(1, "dst", "Float16_b", 2048, 2, 1))
    binds = [Bind("dfb", 0), Bind("dfb", 1), Bind("const", 1.5), Bind("param")]
    times = []
    for _ in range(200):
        t0 = time.perf_counter()
        trace(scale_copy, "compute", binds, dst_tiles=4, cbs=cbs)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


@ttl.operation(grid=(1, 1))
def call_loop(a: ttnn.Tensor) -> None:
    @ttl.datamovement()
    def dm():
        x = ttl.raw.call(plus_one, 0)
        t0 = time.perf_counter()
        for _ in range(CALLS):
            x = ttl.raw.call(plus_one, x)
        TIMES.append((time.perf_counter() - t0) / CALLS)
        t0 = time.perf_counter()
        for _ in range(CALLS):
            x = x + 1
        TIMES.append((time.perf_counter() - t0) / CALLS)


def _stream(body_kind: str):
    @ttl.operation(grid=(1, 1))
    def stream(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
        i_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def reader():
            for t in range(TILES):
                with i_dfb.reserve() as blk:
                    ttl.copy(a[t // 8 : t // 8 + 1, t % 8 : t % 8 + 1], blk).wait()

        @ttl.compute()
        def compute():
            t0 = time.perf_counter()
            if body_kind == "raw":
                ttl.raw.call(scale_copy, i_dfb, o_dfb, 1.5, TILES)
            else:
                for _ in range(TILES):
                    with i_dfb.wait() as i, o_dfb.reserve() as o:
                        o.store(i * 1.5)
            TIMES.append((time.perf_counter() - t0) / TILES)

        @ttl.datamovement()
        def writer():
            for t in range(TILES):
                with o_dfb.wait() as blk:
                    ttl.copy(blk, out[t // 8 : t // 8 + 1, t % 8 : t % 8 + 1]).wait()

    return stream


RAW_STREAM = _stream("raw")
BLOCK_STREAM = _stream("block")


def bench_runs() -> dict[str, float]:
    session.OPTIONS.engine = "python"
    device = ttnn.open_device(device_id=0)
    out: dict[str, list[float]] = {"call": [], "loop": [], "raw": [], "block": []}
    try:
        mk = lambda t: ttnn.from_torch(  # noqa: E731
            t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device
        )
        a = mk(torch.rand(256, 256))
        o = mk(torch.zeros(256, 256))
        for _ in range(RUNS):
            TIMES.clear()
            call_loop(a)
            out["call"].append(TIMES[0])
            out["loop"].append(TIMES[1])
            TIMES.clear()
            RAW_STREAM(a, o)
            BLOCK_STREAM(a, o)
            out["raw"].append(TIMES[0])
            out["block"].append(TIMES[1])
    finally:
        ttnn.close_device(device)
    return {k: statistics.median(v) for k, v in out.items()}


EXAMPLES = ("raw_scale_copy.py", "raw_sfpu.py", "raw_cpp_template.py")


def _wall(argv: list[str]) -> float:
    import subprocess
    import sys

    start = time.perf_counter()
    subprocess.run([sys.executable, *argv], check=True, capture_output=True)
    return time.perf_counter() - start


def bench_whole_runs() -> dict[str, float]:
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "examples"
    out = {"python_start_s": statistics.median(_wall(["-c", "import torch"]) for _ in range(3))}
    for example in EXAMPLES:
        for engine in ("python", "native"):
            argv = ["-m", "tilewright", "run", "--engine", engine, str(root / example)]
            _wall(argv)  # warm the build cache
            out[f"{example[:-3]}_{engine}_s"] = statistics.median(_wall(argv) for _ in range(3))
    return {k: round(v, 3) for k, v in out.items()}


def main() -> None:
    traced = bench_trace()
    runs = bench_runs()
    print(
        json.dumps(
            {
                "benchmark": "raw",
                "trace_ms": round(traced * 1e3, 3),
                "call_overhead_us": round(runs["call"] * 1e6, 2),
                "python_loop_us": round(runs["loop"] * 1e6, 3),
                "scale_tile_us": round(runs["raw"] * 1e6, 1),
                "block_tile_us": round(runs["block"] * 1e6, 1),
                "raw_over_block": round(runs["raw"] / runs["block"], 2),
                "run_s": bench_whole_runs(),
            }
        )
    )


if __name__ == "__main__":
    main()
