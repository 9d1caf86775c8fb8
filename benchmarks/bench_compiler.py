"""The TT-Lang compiler back end (issue 12): compiled operations against the interpreter and numpy.

Prints one JSON object.  Every case is a TT-Lang operation call, timed as the user
feels it (``op(tensors)``, medians; ``warm`` once its kernels are built, ``cold`` the
first call in a fresh build cache), beside the interpreter (``--engine python``) and
the numpy floor for the same math (float32, one BLAS thread):

* ``eltwise_1node`` / ``eltwise_8x8``: ``(a * b + c) * d`` at 2048x2048 bf16, 1x1 blocks,
  on one node and on an 8x8 grid (goals: <= 60 ms and <= 20 ms warm); every compiled
  case splits its warm call into ``native_ms`` (inside the native kernels) and
  ``host_ms`` (the rest: Python setup of the call and the launch);
* ``matmul_1024_1x1``: ``C = A @ B`` at 1024^3 bf16, 1x1 blocks, one node (goal <= 0.3 s);
* ``matmul_2048_4x4``: 2048^3 with 4x4-tile blocks on an 8x8 grid, against numpy doing
  the same 4096 block matmuls of 128x128 (goal <= 1.5x numpy);
* ``cold_build_s``: the first call of an operation (3 kernels lowered and built in
  parallel, the runtime library and the PCH already built: `native.build.prepare`;
  goal <= 1 s);
* ``run_s``: a whole ``tilewright run`` of ``examples/02_matmul_bias.py`` (process start
  to exit) under ``--engine auto`` and ``--engine python``.

``--quick`` skips the slow interpreter timings of the big cases.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tilewright import ttl, ttnn  # noqa: E402

TILE = 32


def eltwise_op(n: int, grid: int, block: int = 1):
    """``(a * b + c) * d`` in ``block`` x ``block``-tile blocks, spread over ``grid`` x ``grid``."""
    if block != 1:
        return _eltwise_blocks_op(n, grid, block)
    tiles = n // TILE
    per = tiles * tiles // (grid * grid)

    @ttl.operation(grid=(grid, grid))
    def fused(a, b, c, d, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
        c_dfb = ttl.make_dataflow_buffer_like(c, shape=(1, 1), block_count=2)
        d_dfb = ttl.make_dataflow_buffer_like(d, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def reader():
            node = ttl.node(dims=1)
            for i in range(per):
                t = node * per + i
                r = t // tiles
                col = t % tiles
                with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
                    ttl.copy(a[r, col], ab).wait()
                    ttl.copy(b[r, col], bb).wait()
                with c_dfb.reserve() as cb, d_dfb.reserve() as db:
                    ttl.copy(c[r, col], cb).wait()
                    ttl.copy(d[r, col], db).wait()

        @ttl.compute()
        def compute():
            for _ in range(per):
                with (
                    a_dfb.wait() as x,
                    b_dfb.wait() as w,
                    c_dfb.wait() as z,
                    d_dfb.wait() as v,
                    y_dfb.reserve() as o,
                ):
                    o.store((x * w + z) * v)

        @ttl.datamovement()
        def writer():
            node = ttl.node(dims=1)
            for i in range(per):
                t = node * per + i
                r = t // tiles
                col = t % tiles
                with y_dfb.wait() as ob:
                    ttl.copy(ob, y[r, col]).wait()

    return fused


def _eltwise_blocks_op(n: int, grid: int, block: int):
    """The tutorial shape (tt-lang's elementwise steps 2-4): tensor slices whose bounds come
    from loop variables, ``a[r * B:(r + 1) * B, c * B:(c + 1) * B]``, one block per step."""
    side = n // TILE // block
    per = side * side // (grid * grid)
    B = block

    @ttl.operation(grid=(grid, grid))
    def fused(a, b, c, d, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(B, B), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(B, B), block_count=2)
        c_dfb = ttl.make_dataflow_buffer_like(c, shape=(B, B), block_count=2)
        d_dfb = ttl.make_dataflow_buffer_like(d, shape=(B, B), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(B, B), block_count=2)

        @ttl.datamovement()
        def reader():
            node = ttl.node(dims=1)
            for i in range(per):
                t = node * per + i
                r = t // side
                col = t % side
                with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
                    ttl.copy(a[r * B : (r + 1) * B, col * B : (col + 1) * B], ab).wait()
                    ttl.copy(b[r * B : (r + 1) * B, col * B : (col + 1) * B], bb).wait()
                with c_dfb.reserve() as cb, d_dfb.reserve() as db:
                    ttl.copy(c[r * B : (r + 1) * B, col * B : (col + 1) * B], cb).wait()
                    ttl.copy(d[r * B : (r + 1) * B, col * B : (col + 1) * B], db).wait()

        @ttl.compute()
        def compute():
            for _ in range(per):
                with (
                    a_dfb.wait() as x,
                    b_dfb.wait() as w,
                    c_dfb.wait() as z,
                    d_dfb.wait() as v,
                    y_dfb.reserve() as o,
                ):
                    o.store((x * w + z) * v)

        @ttl.datamovement()
        def writer():
            node = ttl.node(dims=1)
            for i in range(per):
                t = node * per + i
                r = t // side
                col = t % side
                with y_dfb.wait() as ob:
                    ttl.copy(ob, y[r * B : (r + 1) * B, col * B : (col + 1) * B]).wait()

    return fused


def broadcast_op(n: int, grid: int, block: int):
    """``y = a * broadcast(s)``: ``s`` is one tile column (n x 32), its column 0 broadcast
    over every column of ``a`` (tt-lang's broadcast tutorial: ``ttl.block.broadcast(..., dims=[-1])``
    of a (B, 1)-tile block to (B, B))."""
    side = n // TILE // block
    per = side * side // (grid * grid)
    B = block

    @ttl.operation(grid=(grid, grid))
    def scaled(a, s, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(B, B), block_count=2)
        s_dfb = ttl.make_dataflow_buffer_like(s, shape=(B, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(B, B), block_count=2)

        @ttl.datamovement()
        def reader():
            node = ttl.node(dims=1)
            for i in range(per):
                t = node * per + i
                r = t // side
                col = t % side
                with a_dfb.reserve() as ab, s_dfb.reserve() as sb:
                    ttl.copy(a[r * B : (r + 1) * B, col * B : (col + 1) * B], ab).wait()
                    ttl.copy(s[r * B : (r + 1) * B, 0:1], sb).wait()

        @ttl.compute()
        def compute():
            for _ in range(per):
                with a_dfb.wait() as x, s_dfb.wait() as sv, y_dfb.reserve() as o:
                    o.store(x * ttl.block.broadcast(sv, dims=[-1], shape=(B, B)))

        @ttl.datamovement()
        def writer():
            node = ttl.node(dims=1)
            for i in range(per):
                t = node * per + i
                r = t // side
                col = t % side
                with y_dfb.wait() as ob:
                    ttl.copy(ob, y[r * B : (r + 1) * B, col * B : (col + 1) * B]).wait()

    return scaled


def matmul_op(n: int, block: int, grid: int):
    blocks = n // TILE // block
    per = blocks * blocks // (grid * grid)

    @ttl.operation(grid=(grid, grid))
    def matmul(a, b, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(block, block), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(block, block), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(block, block), block_count=2)

        @ttl.datamovement()
        def reader():
            node = ttl.node(dims=1)
            for i in range(per):
                t = node * per + i
                r = (t // blocks) * block
                c = (t % blocks) * block
                for k in range(blocks):
                    with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
                        ttl.copy(a[r : r + block, k * block : (k + 1) * block], ab).wait()
                        ttl.copy(b[k * block : (k + 1) * block, c : c + block], bb).wait()

        @ttl.compute()
        def compute():
            for _ in range(per):
                with y_dfb.reserve() as yb:
                    with a_dfb.wait() as x, b_dfb.wait() as w:
                        yb.store(x @ w)
                    for _ in range(blocks - 1):
                        with a_dfb.wait() as x, b_dfb.wait() as w:
                            yb += x @ w

        @ttl.datamovement()
        def writer():
            node = ttl.node(dims=1)
            for i in range(per):
                t = node * per + i
                r = (t // blocks) * block
                c = (t % blocks) * block
                with y_dfb.wait() as yb:
                    ttl.copy(yb, y[r : r + block, c : c + block]).wait()

    return matmul


def _tensors(device, torch, n: int, count: int):
    return [
        ttnn.from_torch(
            torch.rand(n, n),
            dtype=ttnn.bfloat16,
            layout=ttnn.TILE_LAYOUT,
            device=device,
            memory_config=ttnn.DRAM_MEMORY_CONFIG,
        )
        for _ in range(count)
    ]


def _timed(fn, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def _engine(name: str) -> None:
    from tilewright.device import session

    session.OPTIONS.engine = name


def _in_native(fn) -> tuple[float, float]:
    """``fn()``'s wall time and the part of it spent inside native kernels."""
    from tilewright.native.driver import Driver

    spent: list[float] = []
    resume = Driver.resume

    def timed_resume(self, index):
        t = time.perf_counter()
        try:
            return resume(self, index)
        finally:
            spent.append(time.perf_counter() - t)

    Driver.resume = timed_resume  # type: ignore[method-assign]
    try:
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t, sum(spent)
    finally:
        Driver.resume = resume  # type: ignore[method-assign]


def case(device, torch, op, tensors, *, repeats: int, interpreted: bool) -> dict:
    """Cold-ish first call, warm calls (median), and the warm call's split: native
    kernels (``native_ms``) and everything else (``host_ms``: Python setup and launch)."""
    _engine("native")
    first = _timed(lambda: op(*tensors), 1)[0]
    runs = [_in_native(lambda: op(*tensors)) for _ in range(repeats)]
    warm = statistics.median(t for t, _ in runs)
    out = {
        "first_call_s": round(first, 3),
        "warm_ms": round(warm * 1e3, 1),
        "native_ms": round(statistics.median(n for _, n in runs) * 1e3, 1),
        "host_ms": round(statistics.median(t - n for t, n in runs) * 1e3, 1),
    }
    if interpreted:
        _engine("python")
        out["interpreted_ms"] = round(_timed(lambda: op(*tensors), 1)[0] * 1e3, 1)
        out["speedup_vs_interpreter"] = round(out["interpreted_ms"] / out["warm_ms"], 1)
        _engine("native")
    return out


def numpy_eltwise(n: int) -> float:
    import numpy as np

    rng = np.random.default_rng(0)
    a, b, c, d = (rng.random((n, n), dtype=np.float32) for _ in range(4))
    return statistics.median(_timed(lambda: (a * b + c) * d, 5)) * 1e3


def numpy_blocks(n: int, block: int) -> float:
    """The same block matmuls as the TT-Lang operation (one BLAS thread)."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    e = block * TILE
    nb = n // e

    def run() -> None:
        for i in range(nb):
            for j in range(nb):
                acc = a[i * e : (i + 1) * e, 0:e] @ b[0:e, j * e : (j + 1) * e]
                for k in range(1, nb):
                    acc += (
                        a[i * e : (i + 1) * e, k * e : (k + 1) * e]
                        @ b[k * e : (k + 1) * e, j * e : (j + 1) * e]
                    )

    with threadpool_limits(1):
        return statistics.median(_timed(run, 3))


# The tutorial shapes (issue 21): each compiled (``--engine native``; the first call must
# compile, asserted), warm (median of ``--repeat`` calls) and cold (the first call in a
# fresh build cache, in its own process), beside the numpy floor for the same math on
# whole tensors (float32, one BLAS thread).
# name -> (operation builder, tensor shapes, numpy floor of the same math)
TUTORIAL: dict[str, tuple] = {
    **{
        f"eltwise_2048_{b}x{b}_{g}x{g}": (
            lambda b=b, g=g: eltwise_op(2048, g, b),
            [(2048, 2048)] * 5,
            lambda a, b, c, d, y: (a * b + c) * d,
        )
        for b in (1, 2, 4)
        for g in (1, 8)
    },
    "matmul_1024_1x1_1x1": (
        lambda: matmul_op(1024, 1, 1),
        [(1024, 1024)] * 3,
        lambda a, b, y: a @ b,
    ),
    "matmul_2048_4x4_8x8": (
        lambda: matmul_op(2048, 4, 8),
        [(2048, 2048)] * 3,
        lambda a, b, y: a @ b,
    ),
    "broadcast_2048_4x4_8x8": (
        lambda: broadcast_op(2048, 8, 4),
        [(2048, 2048), (2048, TILE), (2048, 2048)],
        lambda a, s, y: a * s[:, :1],
    ),
}


def _compiled_call(op, tensors) -> float:
    """The first call's wall time, asserting it compiled (never interpreted)."""
    from tilewright.compiler.backend import engine as backend
    from tilewright.device import session

    assert session.OPTIONS.engine == "native", session.OPTIONS.engine
    compiled: list[str] = []
    backend.COMPILE_OBSERVERS.append(lambda record, c, p: compiled.append(record.name))
    try:
        first = _timed(lambda: op(*tensors), 1)[0]
    finally:
        backend.COMPILE_OBSERVERS.pop()
    assert compiled, f"{op.__name__} did not compile"
    return first


def _tutorial_tensors(device, torch, shapes):
    return [
        ttnn.from_torch(
            torch.rand(*shape),
            dtype=ttnn.bfloat16,
            layout=ttnn.TILE_LAYOUT,
            device=device,
            memory_config=ttnn.DRAM_MEMORY_CONFIG,
        )
        for shape in shapes
    ]


def numpy_floor_ms(shapes, math, repeats: int) -> float:
    import numpy as np
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    arrays = [rng.random(shape, dtype=np.float32) for shape in shapes]
    with threadpool_limits(1):
        return statistics.median(_timed(lambda: math(*arrays), repeats)) * 1e3


def tutorial_warm(device, torch, name: str, repeats: int) -> dict:
    build, shapes, math = TUTORIAL[name]
    _engine("native")
    op = build()
    tensors = _tutorial_tensors(device, torch, shapes)
    first = _compiled_call(op, tensors)
    runs = [_in_native(lambda: op(*tensors)) for _ in range(repeats)]
    warm = statistics.median(t for t, _ in runs)
    floor = numpy_floor_ms(shapes, math, max(repeats, 3))
    return {
        "engine": "native",
        "compiled": True,
        "repeats": repeats,
        "first_call_s": round(first, 3),
        "warm_ms": round(warm * 1e3, 1),
        "native_ms": round(statistics.median(n for _, n in runs) * 1e3, 1),
        "host_ms": round(statistics.median(t - n for t, n in runs) * 1e3, 1),
        "numpy_ms": round(floor, 2),
        "ratio_to_numpy": round(warm * 1e3 / floor, 1),
    }


def tutorial_cold_child(name: str) -> None:
    """(child, in a fresh build cache) the first call of case ``name``, compiled."""
    import torch

    from tilewright.native.build import prepare

    # the runtime library and the compiled kernels' PCH are built once per cache (the first
    # operation a machine runs): not part of an operation's build
    prepare()
    _engine("native")
    device = ttnn.open_device(device_id=0)
    try:
        build, shapes, _ = TUTORIAL[name]
        op = build()
        tensors = _tutorial_tensors(device, torch, shapes)
        print(json.dumps({"cold_s": _compiled_call(op, tensors)}))
    finally:
        ttnn.close_device(device)


def tutorial_cold_seconds(name: str, repeats: int) -> float:
    runs = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as cache:
            out = subprocess.run(
                [sys.executable, __file__, "--cold-child", name],
                capture_output=True,
                text=True,
                env=dict(os.environ, XDG_CACHE_HOME=cache),
                check=True,
            )
            runs.append(json.loads(out.stdout.strip().splitlines()[-1])["cold_s"])
    return round(statistics.median(runs), 3)


def tutorial_interpreted(device, torch, name: str, repeats: int) -> float:
    """Seconds of a warm call under ``--engine python`` (the interpreter; median)."""
    build, shapes, _ = TUTORIAL[name]
    _engine("python")
    try:
        op = build()
        tensors = _tutorial_tensors(device, torch, shapes)
        op(*tensors)
        return round(statistics.median(_timed(lambda: op(*tensors), repeats)), 3)
    finally:
        _engine("native")


def tutorial_warm_child(name: str, repeats: int) -> None:
    """(child) case ``name`` warm in this fresh process: :func:`tutorial_warm`'s dict and
    the process's peak RSS."""
    import resource

    import torch

    device = ttnn.open_device(device_id=0)
    try:
        result = tutorial_warm(device, torch, name, repeats)
    finally:
        ttnn.close_device(device)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(result))


def torch_rss_mb() -> float:
    """Peak RSS of a process that only imports torch (torch's own share of a program)."""
    snippet = "import resource, torch; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    out = subprocess.run(
        [sys.executable, "-c", snippet], capture_output=True, text=True, check=True
    )
    return round(int(out.stdout.strip()) / 1024, 1)


def payload_mb(name: str) -> float:
    """The case's tensor payload: its float32 host tensors and their bf16 device copies."""
    _, shapes, _ = TUTORIAL[name]
    elements = sum(math.prod(shape) for shape in shapes)
    return round(elements * (4 + 2) / 2**20, 1)


_ACROSS = ("first_call_s", "warm_ms", "native_ms", "host_ms", "numpy_ms")


def tutorial_warm_processes(name: str, repeats: int, processes: int, torch_rss: float) -> dict:
    """Case ``name`` warm in ``processes`` fresh processes, one after another: each field
    the median of the processes' medians.  A warm call's time varies from one process to
    the next by more than within one (10-20% on a 2-core VM: where the host placed the
    device's memory), and a user's program is one process.  ``torch_rss``: torch's own
    peak RSS (:func:`torch_rss_mb`), the other half of the RSS bound's base."""
    runs = []
    for _ in range(processes):
        out = subprocess.run(
            [sys.executable, __file__, "--warm-child", name, "--repeat", str(repeats)],
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    result = dict(runs[0])
    for key in _ACROSS:
        result[key] = round(statistics.median(r[key] for r in runs), 3 if key.endswith("_s") else 2)
    result["ratio_to_numpy"] = round(result["warm_ms"] / result["numpy_ms"], 1)
    result["warm_ms_per_process"] = [r["warm_ms"] for r in runs]
    result["processes"] = processes
    # RSS against the bound: <= 1.5x (the tensor payload + torch's own)
    result["peak_rss_mb"] = statistics.median(r["peak_rss_mb"] for r in runs)
    result["payload_mb"] = payload_mb(name)
    result["torch_rss_mb"] = torch_rss
    result["rss_ratio"] = round(
        result["peak_rss_mb"] / (result["payload_mb"] + result["torch_rss_mb"]), 2
    )
    return result


def tutorial(
    names, repeats: int, cold_repeats: int, interpreted: int = 0, processes: int = 1
) -> dict:
    import torch

    results: dict[str, dict] = {}
    if processes > 1:
        torch_rss = torch_rss_mb()
        for name in names:
            results[name] = tutorial_warm_processes(name, repeats, processes, torch_rss)
    if processes <= 1 or interpreted:
        device = ttnn.open_device(device_id=0)
        try:
            for name in names:
                if processes <= 1:
                    results[name] = tutorial_warm(device, torch, name, repeats)
                if interpreted:
                    results[name]["interp_s"] = tutorial_interpreted(
                        device, torch, name, interpreted
                    )
        finally:
            ttnn.close_device(device)
    for name in names:
        results[name]["cold_s"] = tutorial_cold_seconds(name, cold_repeats)
        results[name]["cold_repeats"] = cold_repeats
    return results


COLD = """
import sys, time
sys.path.insert(0, {root!r})
from tilewright.native.build import prepare
prepare()  # built once per cache (runtime library, PCH): not the operation's
import torch
from benchmarks.bench_compiler import eltwise_op, _tensors
from tilewright import ttnn
from tilewright.device import session
session.OPTIONS.engine = "native"
device = ttnn.open_device(device_id=0)
op = eltwise_op(256, 1)
ts = _tensors(device, torch, 256, 5)
t = time.perf_counter(); op(*ts); first = time.perf_counter() - t
t = time.perf_counter(); op(*ts); warm = time.perf_counter() - t
print(first - warm)
ttnn.close_device(device)
"""


def cold_build_seconds() -> float:
    runs = []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, XDG_CACHE_HOME=cache)
            out = subprocess.run(
                [sys.executable, "-c", COLD.format(root=str(ROOT))],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
            runs.append(float(out.stdout.strip().splitlines()[-1]))
    return round(statistics.median(runs), 3)


def run_seconds(engine: str) -> float:
    runs = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "tilewright",
                "run",
                "--engine",
                engine,
                str(ROOT / "examples" / "02_matmul_bias.py"),
            ],
            capture_output=True,
            check=True,
        )
        runs.append(time.perf_counter() - t)
    return round(statistics.median(runs), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip slow interpreter timings")
    parser.add_argument(
        "--tutorial",
        nargs="*",
        metavar="CASE",
        help=f"only the tutorial shapes (all, or the CASEs named): {', '.join(TUTORIAL)}",
    )
    parser.add_argument("--repeat", type=int, default=11, help="warm calls per tutorial case")
    parser.add_argument(
        "--cold-repeat", type=int, default=3, help="fresh-cache processes per tutorial case"
    )
    parser.add_argument(
        "--interpreted",
        type=int,
        default=0,
        metavar="N",
        help="also time N warm calls of each tutorial case under --engine python",
    )
    parser.add_argument(
        "--warm-processes",
        type=int,
        default=1,
        metavar="N",
        help="time each tutorial case warm in N fresh processes (medians of their medians)",
    )
    parser.add_argument("--cold-child", help=argparse.SUPPRESS)
    parser.add_argument("--warm-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cold_child:
        tutorial_cold_child(args.cold_child)
        return
    if args.warm_child:
        tutorial_warm_child(args.warm_child, args.repeat)
        return
    if args.tutorial is not None:
        unknown = [n for n in args.tutorial if n not in TUTORIAL]
        if unknown:
            parser.error(f"unknown tutorial case(s) {unknown}; known: {list(TUTORIAL)}")
        names = args.tutorial or list(TUTORIAL)
        results = tutorial(
            names, args.repeat, args.cold_repeat, args.interpreted, args.warm_processes
        )
        print(json.dumps({"tutorial": results}, indent=2))
        return
    import torch

    device = ttnn.open_device(device_id=0)
    results: dict[str, object] = {}
    try:
        t = _tensors(device, torch, 2048, 5)
        results["eltwise_1node"] = case(
            device, torch, eltwise_op(2048, 1), t, repeats=11, interpreted=True
        )
        results["eltwise_1node"]["goal_warm_ms"] = 60  # type: ignore[index]
        results["eltwise_8x8"] = case(
            device, torch, eltwise_op(2048, 8), t, repeats=11, interpreted=not args.quick
        )
        results["eltwise_8x8"]["goal_warm_ms"] = 20  # type: ignore[index]
        results["eltwise_numpy_ms"] = round(numpy_eltwise(2048), 1)
        t = _tensors(device, torch, 1024, 3)
        results["matmul_1024_1x1"] = case(
            device, torch, matmul_op(1024, 1, 1), t, repeats=3, interpreted=not args.quick
        )
        results["matmul_1024_1x1"]["goal_warm_ms"] = 300  # type: ignore[index]
        t = _tensors(device, torch, 2048, 3)
        mm = case(device, torch, matmul_op(2048, 4, 8), t, repeats=3, interpreted=False)
        floor = numpy_blocks(2048, 4)
        mm["numpy_blocks_ms"] = round(floor * 1e3, 1)
        mm["ratio_to_numpy"] = round(mm["warm_ms"] / (floor * 1e3), 2)
        mm["goal_ratio"] = 1.5
        results["matmul_2048_4x4"] = mm
    finally:
        ttnn.close_device(device)
    results["cold_build_s"] = cold_build_seconds()
    results["run_s"] = {"auto": run_seconds("auto"), "python": run_seconds("python")}
    results["tutorial"] = tutorial(list(TUTORIAL), args.repeat, args.cold_repeat)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
