"""Benchmark: external C++ functions (``ttl.call_extern_func``); prints one JSON object.

* ``cold_build_s`` -- compiling the generated C++ of one unique call site (example 07's
  ``read_tiles``: the data-movement API, a TensorAccessor argument, a DFB descriptor)
  into a fresh cache: median over several distinct sites (goal <= 2 s);
* ``disk_cache_lookup_ms`` -- finding that object again in the on-disk cache from a
  new process's point of view (key hashing + header manifest check);
* ``call_overhead_us`` -- one cached call of a trivial external function from a kernel
  (an int32 argument, an int32 result), including site lookup, marshalling, the native
  entry and the contract check: median over several runs (goal <= 5 us);
* ``python_loop_us`` -- the same loop without the call, for reference.

Run: ``.venv/bin/python benchmarks/bench_extern.py``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import statistics
import sys
import tempfile
import time

from tilewright import native, ttl, ttnn
from tilewright.lang.extern import glue
from tilewright.native import build as nbuild
from tilewright.native import cachefs, toolchain

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE_07 = os.path.join(os.path.dirname(HERE), "examples", "07_extern_reader")
CPP = os.path.join(os.path.dirname(HERE), "tests", "extern", "cpp")
CALLS = 20_000
RUNS = 5
BUILDS = 5
TIMES: list[float] = []


def reader_source(index: int) -> str:
    return glue.generate(
        title="ttl.call_extern_func('reader.hpp', 'read_tiles')",
        where=f"bench:{index}",
        kernel_kind="data_movement",
        header="reader.hpp",
        callee="read_tiles",
        template_texts=[f"ttlang::DFBDescriptor<{index}, 4, 2, 2048>"],
        params=[
            glue.Param("const auto v0 = ::tw::accessor_arg(tw_argv[0]);", "v0"),
            glue.Param("const int32_t v1 = static_cast<int32_t>(tw_argv[1]);", "v1"),
            glue.Param("const int32_t v2 = static_cast<int32_t>(tw_argv[2]);", "v2"),
        ],
        result_cpp=None,
        uses_descriptor=True,
    )


def bench_builds(cache: str) -> tuple[float, float]:
    opts = dataclasses.replace(native.OPTIONS, cache_dir=cache)
    cold, lookup = [], []
    for i in range(BUILDS):
        src = reader_source(i)
        cold.append(
            native.build_shared_object(src, include_paths=[EXAMPLE_07], options=opts).seconds
        )
        nbuild._VERIFIED.clear()
        cachefs.FILE_HASHES.clear()
        hit = native.build_shared_object(src, include_paths=[EXAMPLE_07], options=opts)
        assert hit.cached
        lookup.append(hit.seconds)
    return statistics.median(cold), statistics.median(lookup)


@ttl.operation(grid=(1, 1))
def call_loop(a: ttnn.Tensor) -> None:
    @ttl.datamovement()
    def dm():
        x = ttl.call_extern_func(
            "scalars.hpp",
            "add_i32",
            func_args=[0, 1],
            include_paths=[CPP],
            result_type=ttl.ScalarType.I32,
        )
        t0 = time.perf_counter()
        for _ in range(CALLS):
            x = ttl.call_extern_func(
                "scalars.hpp",
                "add_i32",
                func_args=[x, 1],
                include_paths=[CPP],
                result_type=ttl.ScalarType.I32,
            )
        TIMES.append((time.perf_counter() - t0) / CALLS)
        t0 = time.perf_counter()
        for _ in range(CALLS):
            x = x + 1
        TIMES.append((time.perf_counter() - t0) / CALLS)


def bench_calls() -> tuple[float, float]:
    import torch

    device = ttnn.open_device(device_id=0)
    try:
        a = ttnn.from_torch(
            torch.zeros(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device
        )
        calls, loops = [], []
        for _ in range(RUNS):
            TIMES.clear()
            call_loop(a)
            calls.append(TIMES[0])
            loops.append(TIMES[1])
    finally:
        ttnn.close_device(device)
    return statistics.median(calls), statistics.median(loops)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="tw-bench-extern-") as cache:
        native.configure(cache_dir=cache)
        cold, lookup = bench_builds(cache)
        call, loop = bench_calls()
    print(
        json.dumps(
            {
                "benchmark": "extern",
                "compiler": toolchain.compiler_identity(
                    native.OPTIONS.resolved_compiler()
                ).splitlines()[1],
                "cold_build_s": round(cold, 3),
                "cold_build_goal_s": 2.0,
                "disk_cache_lookup_ms": round(lookup * 1e3, 3),
                "call_overhead_us": round(call * 1e6, 3),
                "call_overhead_goal_us": 5.0,
                "python_loop_us": round(loop * 1e6, 3),
                "builds": BUILDS,
                "runs": RUNS,
                "calls_per_run": CALLS,
            }
        )
    )


if __name__ == "__main__":
    sys.exit(main())
