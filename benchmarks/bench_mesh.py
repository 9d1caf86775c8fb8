"""Meshes at scale: opening a 32-chip Galaxy and an all-gather of 1 MB bf16 per chip on it.

Prints one JSON object.  Targets (issue 14): the Galaxy opens in <= 2 s and <= 1 GB RSS;
the all-gather completes in <= 5 s.

* ``open``: a fresh process imports tilewright and opens ``MeshShape(4, 8)`` (the default
  multi-chip system): median seconds over ``--repeat`` processes, and the process's peak
  RSS after opening (and before, for the import alone).
* ``sharded_matmul``: a TT-Lang matmul with A split along M over the 32 chips, each chip
  512³ bf16, warm, beside the same operation on one chip (:func:`bench_sharded_matmul`).
* ``all_gather``: every chip holds a 1 MB bf16 tensor ([1, 1, 1024, 512], 512 tiles) and
  gathers all 32 along dim 0 (each chip ends with 32 MB).  On the 4x8 mesh (rows, then
  columns) and on a 1x32 ring (``FABRIC_1D_RING``).  Median seconds of the call, the
  bytes the chips end up holding, and the ratio to the numpy floor (copying those bytes
  once with ``numpy.copyto``).
* ``workers`` (``--only workers``; each case in fresh processes with 0, 1 and 2 local Ray
  worker processes, ``tilewright.distributed``): the sharded matmul, the 1x32 all-gather
  (a mesh workload split across the workers, its fabric packets exchanged at every
  quiescent point), and a ping-pong of 200 round trips between two chips on two workers
  -- every packet an exchange of its own, so its seconds per exchange are the barrier's
  cost; and the tutorial elementwise operation on one chip's 8x8 grid (2048² bf16, 1x1
  blocks), which a worker runs whole: a chip's cores are not split across workers (issue
  27 item 4, not built), so 2 workers take what 1 takes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

OPEN_SNIPPET = (
    "import resource, time; t = time.perf_counter(); "
    "from tilewright import ttnn; "
    "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; "
    "t1 = time.perf_counter(); mesh = ttnn.open_mesh_device(ttnn.MeshShape(4, 8)); "
    "t2 = time.perf_counter(); after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; "
    "print(t2 - t1, t2 - t, before, after, mesh.get_num_devices())"
)


def bench_open(repeat: int) -> dict:
    runs = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", OPEN_SNIPPET], capture_output=True, text=True, check=True
        )
        open_s, total_s, before_kb, after_kb, chips = out.stdout.split()
        runs.append((float(open_s), float(total_s), int(before_kb), int(after_kb), int(chips)))
    return {
        "chips": runs[0][4],
        "open_seconds": statistics.median(r[0] for r in runs),
        "import_and_open_seconds": statistics.median(r[1] for r in runs),
        "rss_mb_after_import": statistics.median(r[2] for r in runs) / 1024,
        "rss_mb_after_open": statistics.median(r[3] for r in runs) / 1024,
        "target": "open <= 2 s, RSS <= 1024 MB",
    }


def _gather_input(mesh, rng):
    """A 1 MB bf16 tensor per chip ([1, 1, 1024, 512] each), as the all-gathers take it."""
    import numpy as np

    from tilewright import ttnn

    values = rng.standard_normal((mesh.get_num_devices(), 1, 1024, 512)).astype(np.float32)
    return ttnn.from_torch(
        values,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=mesh,
        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
    )


def bench_all_gather(shape: tuple[int, int], fabric: str, repeat: int) -> dict:
    import numpy as np

    from tilewright import ttnn

    ttnn.set_fabric_config(getattr(ttnn.FabricConfig, fabric))
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape))
    try:
        chips = mesh.get_num_devices()
        t = _gather_input(mesh, np.random.default_rng(0))
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            gathered = ttnn.all_gather(t, 0)
            times.append(time.perf_counter() - start)
            last = ttnn.get_device_tensors(gathered)[-1]
            ok = bool(
                np.array_equal(
                    ttnn.to_torch(last).float().numpy(),
                    ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, 0))
                    .float()
                    .numpy(),
                )
            )
            gathered.deallocate()
            if not ok:
                raise AssertionError("all_gather result differs from the input")
        held = chips * chips * 1024 * 512 * 2
        floor_src = np.ones(held // chips, dtype=np.uint8)
        floor_dst = np.empty_like(floor_src)
        np.copyto(floor_dst, floor_src)  # fault the pages in first: time the copies only
        start = time.perf_counter()
        for _ in range(chips):
            np.copyto(floor_dst, floor_src)
        floor = time.perf_counter() - start
        seconds = statistics.median(times)
        return {
            "mesh": f"{shape[0]}x{shape[1]}",
            "fabric": fabric,
            "bytes_per_chip_in": 1024 * 512 * 2,
            "bytes_held_after": held,
            "seconds": seconds,
            "numpy_floor_seconds": floor,
            "ratio_to_floor": seconds / floor,
            "target": "<= 5 s",
        }
    finally:
        ttnn.close_mesh_device(mesh)
        ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED)


def _sharded_operands(mesh, n: int, rng):
    """A (chips * n x n, split along M), B (n x n, replicated) and a zero Y (split) as bf16
    mesh tensors; and A, B as torch tensors."""
    import numpy as np
    import torch

    from tilewright import ttnn

    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    chips = mesh.get_num_devices()
    a = torch.from_numpy(rng.standard_normal((chips * n, n), dtype=np.float32))
    b = torch.from_numpy(rng.standard_normal((n, n), dtype=np.float32))
    shard = ttnn.ShardTensorToMesh(mesh, dim=0)
    return (
        a,
        b,
        (
            ttnn.from_torch(a, mesh_mapper=shard, **kw),
            ttnn.from_torch(b, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh), **kw),
            ttnn.from_torch(torch.zeros(chips * n, n), mesh_mapper=shard, **kw),
        ),
    )


def bench_sharded_matmul(shape: tuple[int, int], n: int, repeat: int) -> dict:
    """A TT-Lang matmul on every chip of the mesh: A (chips * n rows) split along M, B
    replicated, each chip its own n x n @ n x n (bench_compiler's ``matmul_op``, 2x2-tile
    blocks on a 4x4 grid), warm; beside the same operation on one chip and numpy's floor
    (the chips' products one after another, one BLAS thread).  One process runs every
    chip's kernels one after another, so the mesh takes about chips x one chip: the figure
    issue 27's workers are to divide."""
    import bench_compiler
    import numpy as np
    import torch

    from tilewright import ttnn

    op = bench_compiler.matmul_op(n, 2, 4)
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    rng = np.random.default_rng(0)

    def timed(call) -> float:
        call()  # compiles
        return statistics.median(bench_compiler._timed(call, repeat))

    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape))
    try:
        a, b, (a_t, b_t, y_t) = _sharded_operands(mesh, n, rng)
        chips = mesh.get_num_devices()
        seconds = timed(lambda: op(a_t, b_t, y_t))
    finally:
        ttnn.close_mesh_device(mesh)
    device = ttnn.open_device(device_id=0)
    try:
        one = [ttnn.from_torch(x, device=device, **kw) for x in (a[:n], b, torch.zeros(n, n))]
        one_chip = timed(lambda: op(*one))
    finally:
        ttnn.close_device(device)
    from threadpoolctl import threadpool_limits

    an, bn = a.numpy(), b.numpy()
    with threadpool_limits(1):
        floor = min(
            bench_compiler._timed(lambda: [an[k * n : (k + 1) * n] @ bn for k in range(chips)], 3)
        )
    return {
        "mesh": f"{shape[0]}x{shape[1]}",
        "per_chip": f"{n}x{n} @ {n}x{n} bf16",
        "seconds": seconds,
        "one_chip_seconds": one_chip,
        "ratio_to_one_chip": seconds / one_chip,
        "numpy_floor_seconds": floor,
        "ratio_to_floor": seconds / floor,
    }


def bench_workers(case: str, shape: tuple[int, int], repeat: int, counts=(1, 2)) -> dict:
    """``case`` (:data:`_WORKER_CASES`) with its chips' launches in 0 (the driver), 1 and 2
    local Ray worker processes (``tilewright.distributed``); each count in a fresh process,
    warm medians.  Per worker: its peak RSS."""
    out: dict = {"case": case, "mesh": f"{shape[0]}x{shape[1]}"}
    for workers in (0, *counts):
        code = (
            "import json, sys; sys.path.insert(0, 'benchmarks'); import bench_mesh; "
            f"print(json.dumps(bench_mesh._workers_run({case!r}, {shape!r}, {repeat}, {workers})))"
        )
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        if res.returncode:
            raise RuntimeError(res.stderr)
        out[f"workers_{workers}"] = json.loads(res.stdout.strip().splitlines()[-1])
    base = out["workers_0"]["seconds"]
    for workers in counts:
        out[f"speedup_{workers}_workers"] = base / out[f"workers_{workers}"]["seconds"]
    return out


def _workers(repeat: int) -> dict:
    repeat = max(repeat, 5)
    return {
        "sharded_matmul_galaxy_4x8_workers": bench_workers("sharded_matmul", (4, 8), repeat),
        "all_gather_galaxy_1x32_ring_workers": bench_workers("all_gather", (1, 32), repeat),
        "ping_pong_1x2_workers": bench_workers("ping_pong", (1, 2), repeat, counts=(2,)),
        "eltwise_one_chip_8x8_workers": bench_workers("eltwise_chip", (1, 1), repeat),
    }


PING_PONGS = 200
"""Round trips of the ping-pong case: each is two fabric packets, each its own exchange."""


def _ping_pong_kernel(first: bool):
    from tilewright.device.fabric import fabric_unicast_noc_unicast_atomic_inc
    from tilewright.device.kernel_api.dataflow import (
        get_arg_val,
        get_semaphore,
        noc_semaphore_wait_min,
    )
    from tilewright.device.noc import noc_xy_addr
    from tilewright.device.program import portable

    def ping_pong() -> None:
        peer, x, y = get_arg_val(0), get_arg_val(1), get_arg_val(2)
        far = noc_xy_addr(x, y, get_semaphore(0))
        for i in range(PING_PONGS):
            if first:
                fabric_unicast_noc_unicast_atomic_inc(peer, far, 1)
                noc_semaphore_wait_min(get_semaphore(0), i + 1)
            else:
                noc_semaphore_wait_min(get_semaphore(0), i + 1)
                fabric_unicast_noc_unicast_atomic_inc(peer, far, 1)

    return portable(ping_pong)


def _ping_pong_workload(mesh):
    from tilewright import ttnn
    from tilewright.device.program import DataMovementConfig, Program

    workload = ttnn.MeshWorkload("ping pong")
    ids = mesh.get_device_ids()
    core = ttnn.CoreCoord(0, 0)
    for k, chip in enumerate(ids):
        program = Program(f"ping pong {chip}")
        program.create_semaphore((0, 0), 0)
        kernel = program.create_kernel(_ping_pong_kernel(k == 0), (0, 0), DataMovementConfig())
        peer = ids[1 - k]
        xy = mesh.get_device(peer).worker_core_from_logical_core(core)
        program.set_runtime_args(kernel, (0, 0), [peer, xy.x, xy.y])
        workload.add_program(mesh.coordinate_of(mesh.get_device(chip)), program)
    return workload


def _workers_run(case: str, shape, repeat: int, workers: int) -> dict:
    import bench_compiler
    import numpy as np
    from ray import cloudpickle

    from tilewright import distributed, ttnn

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the ping-pong kernels
    pool = distributed.start(workers=workers) if workers else None
    fabric = {"all_gather": "FABRIC_1D_RING", "ping_pong": "FABRIC_1D"}.get(case)
    if fabric is not None:
        ttnn.set_fabric_config(getattr(ttnn.FabricConfig, fabric))
    rng = np.random.default_rng(0)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape))
    result: dict = {}
    try:
        if case == "sharded_matmul":
            n = 512
            op = bench_compiler.matmul_op(n, 2, 4)
            _, _, (a_t, b_t, y_t) = _sharded_operands(mesh, n, rng)
            result["per_chip"] = f"{n}x{n} @ {n}x{n} bf16"

            def call():
                op(a_t, b_t, y_t)
        elif case == "all_gather":
            t = _gather_input(mesh, rng)
            result["bytes_per_chip_in"] = 1024 * 512 * 2

            def call():
                ttnn.all_gather(t, 0).deallocate()
        elif case == "eltwise_chip":
            build, shapes, _math = bench_compiler.TUTORIAL["eltwise_2048_1x1_8x8"]
            op = build()
            tensors = [
                ttnn.from_torch(
                    rng.random(shape, dtype=np.float32),
                    dtype=ttnn.bfloat16,
                    layout=ttnn.TILE_LAYOUT,
                    device=mesh,
                )
                for shape in shapes
            ]
            result["per_chip"] = "2048x2048 bf16, (a * b + c) * d on 8x8 cores"

            def call():
                op(*tensors)
        else:

            def call():
                mesh.enqueue_mesh_workload(_ping_pong_workload(mesh))

        rounds = mesh.engine.mail.rounds if pool is None else pool.split_rounds
        call()  # compiles / builds (in each worker) and touches the output's pages
        rounds = (mesh.engine.mail.rounds if pool is None else pool.split_rounds) - rounds
        seconds = statistics.median(bench_compiler._timed(call, repeat))
        result.update(seconds=seconds, exchanges_per_call=rounds)
        if case == "ping_pong":
            result["seconds_per_exchange"] = seconds / rounds
        if pool is not None:
            usage = pool.ray.get([h.usage.remote() for h in pool.hosts])
            result["worker_max_rss_mb"] = [round(u["max_rss_mb"], 1) for u in usage]
            result["report"] = distributed.report()
    finally:
        ttnn.close_mesh_device(mesh)
        distributed.stop()
        ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=["workers"], default=None)
    args = parser.parse_args()
    if args.only == "workers":
        print(json.dumps({"benchmark": "mesh", **_workers(args.repeat)}, indent=2))
        return
    result = {
        "benchmark": "mesh",
        "open_galaxy": bench_open(args.repeat),
        "all_gather_galaxy_4x8": bench_all_gather((4, 8), "FABRIC_1D", args.repeat),
        "all_gather_galaxy_1x32_ring": bench_all_gather((1, 32), "FABRIC_1D_RING", args.repeat),
        "sharded_matmul_galaxy_4x8": bench_sharded_matmul((4, 8), 512, args.repeat),
        **_workers(args.repeat),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
