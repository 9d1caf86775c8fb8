"""TT-Lang on the virtual device: fused eltwise and matmul throughput, RSS and start-up.

Prints one JSON object.  Cases (issue 4):

* fused eltwise ``y = relu(a * b + c)`` at 2048x2048 bf16 with 1x1 and 4x4 blocks,
  on 1 node and on an 8x8 grid;
* matmul ``C = A @ B`` at 1024^3 bf16 with 1x1 and 4x4 blocks on an 8x8 grid.

For each: the engine (``--engine``, default ``auto``) and whether the operation
compiled, wall time of the operation call (median of ``--repeat`` runs), tile-ops/s
(tiles produced per second, counting each tile of each block expression), the number
of synchronisation points (DFB reserve/wait/push/pop and transfer waits) and the wall
time per synchronisation point.  Every case runs in its own process, which reports
its peak RSS and its start-up time (``import`` of tilewright, ttl and ttnn plus
opening the device).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

STARTUP_SNIPPET = (  # a process that imports nothing else: the cost a program pays before work
    "import time; t = time.perf_counter(); "
    "from tilewright import ttl, ttnn; d = ttnn.open_device(device_id=0); "
    "print(time.perf_counter() - t)"
)


def startup_seconds() -> float:
    runs = []
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", STARTUP_SNIPPET], capture_output=True, text=True, check=True
        )
        runs.append(float(out.stdout.strip()))
    return statistics.median(runs)


def make_eltwise(grid, block):
    from tilewright import ttl

    B = block
    TILES = 64  # 2048 / 32

    @ttl.operation(grid=grid)
    def fused(a, b, c, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(B, B), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(B, B), block_count=2)
        c_dfb = ttl.make_dataflow_buffer_like(c, shape=(B, B), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(B, B), block_count=2)

        def my_blocks():
            n = ttl.grid_size(dims=1)
            me = ttl.node(dims=1)
            per_side = TILES // B
            total = per_side * per_side
            for k in range(me, total, n):
                yield (k // per_side) * B, (k % per_side) * B

        @ttl.datamovement()
        def reader():
            for r, c0 in my_blocks():
                with a_dfb.reserve() as ab, b_dfb.reserve() as bb, c_dfb.reserve() as cb:
                    ttl.copy(a[r : r + B, c0 : c0 + B], ab).wait()
                    ttl.copy(b[r : r + B, c0 : c0 + B], bb).wait()
                    ttl.copy(c[r : r + B, c0 : c0 + B], cb).wait()

        @ttl.compute()
        def compute():
            for _ in my_blocks():
                with (
                    a_dfb.wait() as ab,
                    b_dfb.wait() as bb,
                    c_dfb.wait() as cb,
                    y_dfb.reserve() as yb,
                ):
                    yb.store(ttl.math.relu(ab * bb + cb))

        @ttl.datamovement()
        def writer():
            for r, c0 in my_blocks():
                with y_dfb.wait() as yb:
                    ttl.copy(yb, y[r : r + B, c0 : c0 + B]).wait()

    # per block: reader 3 reserve + 3 wait + 3 push; compute 3 wait + 1 reserve + 3 pop + 1 push;
    # writer 1 wait + 1 transfer wait + 1 pop  -> 20 sync points per block
    blocks = (TILES // B) ** 2
    return fused, {"sync_points": blocks * 20, "tile_ops": blocks * B * B * 3}


def make_matmul(grid, block):
    from tilewright import ttl

    B = block
    T = 32  # 1024 / 32

    @ttl.operation(grid=grid)
    def mm(a, b, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(B, B), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(B, B), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(B, B), block_count=2)

        def my_blocks():
            n = ttl.grid_size(dims=1)
            me = ttl.node(dims=1)
            per_side = T // B
            for k in range(me, per_side * per_side, n):
                yield (k // per_side) * B, (k % per_side) * B

        @ttl.datamovement()
        def reader():
            for r, c0 in my_blocks():
                for k in range(0, T, B):
                    with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
                        ttl.copy(a[r : r + B, k : k + B], ab).wait()
                        ttl.copy(b[k : k + B, c0 : c0 + B], bb).wait()

        @ttl.compute()
        def compute():
            for _ in my_blocks():
                with y_dfb.reserve() as yb:
                    with a_dfb.wait() as ab, b_dfb.wait() as bb:
                        yb.store(ab @ bb)
                    for _ in range(1, T // B):
                        with a_dfb.wait() as ab, b_dfb.wait() as bb:
                            yb += ab @ bb

        @ttl.datamovement()
        def writer():
            for r, c0 in my_blocks():
                with y_dfb.wait() as yb:
                    ttl.copy(yb, y[r : r + B, c0 : c0 + B]).wait()

    out_blocks = (T // B) ** 2
    k_steps = T // B
    sync = out_blocks * (k_steps * (2 + 2 + 2 + 2 + 2 + 2) + 2 + 3)
    return mm, {"sync_points": sync, "tile_ops": out_blocks * k_steps * B * B * B}


def run_case(kind, grid, block, repeat, engine="auto"):
    import torch

    from tilewright import ttnn
    from tilewright.compiler.backend import engine as backend
    from tilewright.device import session

    session.OPTIONS.engine = engine
    compiled: list[str] = []  # operations that compiled (under auto, the rest ran interpreted)
    backend.COMPILE_OBSERVERS.append(lambda record, c, p: compiled.append(record.name))
    device = ttnn.open_device(device_id=0)
    try:
        kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
        if kind == "eltwise":
            op, counts = make_eltwise(grid, block)
            ts = [ttnn.from_torch(torch.rand(2048, 2048), **kw) for _ in range(4)]
        else:
            op, counts = make_matmul(grid, block)
            ts = [ttnn.from_torch(torch.rand(1024, 1024), **kw) for _ in range(3)]
        walls = []
        for _ in range(repeat):
            t = time.perf_counter()
            op(*ts)
            walls.append(time.perf_counter() - t)
        wall = statistics.median(walls)
        return {
            "case": f"{kind} {'2048x2048' if kind == 'eltwise' else '1024^3'} block {block}x{block} "
            f"grid {grid[0]}x{grid[1]}",
            "engine": engine,
            "compiled": bool(compiled),
            "repeats": repeat,
            "wall_s": round(wall, 4),
            "tile_ops_per_s": round(counts["tile_ops"] / wall),
            "sync_points": counts["sync_points"],
            "us_per_sync_point": round(wall / counts["sync_points"] * 1e6, 2),
        }
    finally:
        backend.COMPILE_OBSERVERS.pop()
        ttnn.close_device(device)


CASES = [
    ("eltwise", (1, 1), 1),
    ("eltwise", (1, 1), 4),
    ("eltwise", (8, 8), 1),
    ("eltwise", (8, 8), 4),
    ("matmul", (8, 8), 1),
    ("matmul", (8, 8), 4),
]


def run_case_in_child(kind: str, grid, block: int, repeat: int, engine: str) -> dict:
    """One case in a fresh process, so its peak RSS and start-up are its own."""
    cmd = [
        sys.executable,
        __file__,
        "--child",
        kind,
        str(grid[0]),
        str(grid[1]),
        str(block),
        "--repeat",
        str(repeat),
        "--engine",
        engine,
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def child(kind: str, gx: int, gy: int, block: int, repeat: int, engine: str) -> None:
    t = time.perf_counter()
    from tilewright import ttl, ttnn  # noqa: F401  (start-up: imports + device)

    ttnn.close_device(ttnn.open_device(device_id=0))
    startup = time.perf_counter() - t
    result = run_case(kind, (gx, gy), block, repeat, engine)
    result["startup_s"] = round(startup, 3)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(result))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="only the 4x4-block cases")
    p.add_argument(
        "--engine",
        choices=("auto", "python", "native"),
        default="auto",
        help="the engine (recorded per case, with whether the operation compiled)",
    )
    p.add_argument(
        "--child", nargs=4, metavar=("KIND", "GX", "GY", "BLOCK"), help=argparse.SUPPRESS
    )
    args = p.parse_args()
    if args.child:
        kind, gx, gy, block = args.child
        child(kind, int(gx), int(gy), int(block), args.repeat, args.engine)
        return
    results = [
        run_case_in_child(k, g, b, args.repeat, args.engine)
        for k, g, b in CASES
        if not args.quick or b == 4
    ]
    out = {
        "benchmark": "ttl",
        "note": "each case runs in its own process: startup_s is importing tilewright (ttl, "
        "ttnn) and opening a device; peak_rss_mb includes torch, used to make the inputs",
        "results": results,
        "startup_no_torch_s": round(startup_seconds(), 3),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
