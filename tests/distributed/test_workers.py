"""Mesh chips' launches in Ray worker processes: same results, statistics and errors as
one process; a worker that dies is a clear error at the call, never a hang."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
import torch

from tilewright import distributed, ttl, ttnn
from tilewright.errors import DeadlockError, DeviceError, TilewrightError, format_error

from .test_host import stats_key

N = 64  # rows and columns of each chip's matmul


@ttl.operation(grid=(2, 2))
def _matmul(a, b, y):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        node = ttl.node(dims=1)
        r, c = node // 2, node % 2
        for k in range(2):
            with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
                ttl.copy(a[r, k], ab).wait()
                ttl.copy(b[k, c], bb).wait()

    @ttl.compute()
    def compute():
        with y_dfb.reserve() as yb:
            with a_dfb.wait() as x, b_dfb.wait() as w:
                yb.store(x @ w)
            with a_dfb.wait() as x, b_dfb.wait() as w:
                yb += x @ w

    @ttl.datamovement()
    def writer():
        node = ttl.node(dims=1)
        with y_dfb.wait() as blk:
            ttl.copy(blk, y[node // 2, node % 2]).wait()


def _sharded(mesh, rows_per_chip=N):
    chips = mesh.get_num_devices()
    g = torch.Generator().manual_seed(7)
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    shard = ttnn.ShardTensorToMesh(mesh, dim=0)
    a = ttnn.from_torch(torch.randn(chips * rows_per_chip, N, generator=g), mesh_mapper=shard, **kw)
    b = ttnn.from_torch(
        torch.randn(N, N, generator=g), mesh_mapper=ttnn.ReplicateTensorToMesh(mesh), **kw
    )
    y = ttnn.from_torch(torch.zeros(chips * rows_per_chip, N), mesh_mapper=shard, **kw)
    return a, b, y


def _gathered(mesh, t):
    return ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))


def _in_the_driver(mesh):
    """Run the mesh's chips here for a while (the one-process baseline, same memory)."""
    saved = [d.remote for d in mesh.devices]
    for d in mesh.devices:
        d.remote = None
    return saved


def test_chips_are_split_into_host_groups(workers):
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4))
    ids = mesh.get_device_ids()  # rows of the mesh: the first row to worker 0
    assert workers.host_chips == [ids[:4], ids[4:]]
    assert all(d.remote is not None for d in mesh.devices)


def test_an_spmd_operation_gives_one_process_results_and_statistics(workers):
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 4))
    a, b, y = _sharded(mesh)
    stats = []
    for _ in range(2):  # cold, then warm (the workers reuse their programs)
        _matmul(a, b, y)
        stats.append([stats_key(s) for s in _matmul.last_launch.stats])
    remote = _gathered(mesh, y).clone()
    assert workers.ran_remote == 8
    saved = _in_the_driver(mesh)
    _, _, y_here = _sharded(mesh)
    _matmul(a, b, y_here)
    for d, r in zip(mesh.devices, saved):
        d.remote = r
    assert torch.equal(_gathered(mesh, y_here), remote)
    assert [stats_key(s) for s in _matmul.last_launch.stats] == stats[0] == stats[1]
    usage = workers.ray.get([h.usage.remote() for h in workers.hosts])
    assert all(u["launch_plan_hits"] >= 2 for u in usage)  # the warm launch hit the plan
    assert "ran 8 launches" in distributed.report()


def test_a_mesh_opened_again_runs_on_its_own_memory(workers):
    """Closing a mesh lets the workers' replicas go; the chips of a mesh opened again (same
    ids, new memory) are new replicas, not the old ones over freed memory."""
    results = []
    for seed in (1, 2):
        mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
        g = torch.Generator().manual_seed(seed)
        kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
        shard = ttnn.ShardTensorToMesh(mesh, dim=0)
        x = torch.randn(2 * N, N, generator=g)
        w = torch.randn(N, N, generator=g)
        a = ttnn.from_torch(x, mesh_mapper=shard, **kw)
        b = ttnn.from_torch(w, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh), **kw)
        y = ttnn.from_torch(torch.zeros(2 * N, N), mesh_mapper=shard, **kw)
        _matmul(a, b, y)
        results.append(_gathered(mesh, y).float())
        expected = x.bfloat16().float() @ w.bfloat16().float()
        assert torch.allclose(results[-1], expected, rtol=0.05, atol=0.5)
        assert workers.host_chips == [[0], [1]]
        ttnn.close_mesh_device(mesh)
        assert workers.host_chips == [[], []]
    assert not torch.equal(results[0], results[1])


@ttl.operation(grid=(1, 1))
def _stuck(a, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        pass

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, o_dfb.reserve() as y:
            y.store(x + x)

    @ttl.datamovement()
    def writer():
        with o_dfb.wait() as blk:
            ttl.copy(blk, out[0, 0]).wait()


def _deadlock(mesh) -> str:
    a, _, y = _sharded(mesh, 32)
    with pytest.raises(DeadlockError) as info:
        _stuck(a, y)
    return format_error(info.value)


def test_a_deadlock_in_a_worker_reads_as_in_one_process(workers):
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
    remote = _deadlock(mesh)
    _in_the_driver(mesh)
    here = _deadlock(mesh)
    assert remote == here
    assert "a_dfb.wait(): a_dfb holds 0 filled blocks" in remote
    assert "note: on chip 0 (mesh coordinate (0, 0))" in remote


SPIN = 1_000_000  # tiles the spinning operation moves: about a second of work


@ttl.operation(grid=(1, 1))
def _spin(a, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        for _ in range(SPIN):
            with a_dfb.reserve() as blk:
                ttl.copy(a[0, 0], blk).wait()

    @ttl.compute()
    def compute():
        for _ in range(SPIN):
            with a_dfb.wait() as x, o_dfb.reserve() as y:
                y.store(x + x)

    @ttl.datamovement()
    def writer():
        for _ in range(SPIN):
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()


def test_a_worker_killed_mid_launch_is_an_error_at_the_call(workers):
    """SIGKILL (what the OOM killer sends) to chip 1's worker while its launch runs: the
    call raises a DeviceError naming the chip, the worker and the call's line; the next
    call on that chip says the worker is gone.  Wherever the kill lands (the build, the
    run) the error is the same: the kill comes when its first output tile lands."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
    a, _, y = _sharded(mesh, 32)
    pid = workers.ray.get(workers.hosts[1].pid.remote())
    out = ttnn.get_device_tensors(y)[1].buffer  # chip 1's shard, in memory both processes map

    def kill_once_running() -> None:
        while not out.read().any():  # the writer's first tile: the launch is running
            time.sleep(0.001)
        os.kill(pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_once_running)
    killer.start()
    with pytest.raises(DeviceError) as info:
        _spin(a, y)
    killer.join()
    text = format_error(info.value)
    assert "the worker process running chip 1 died during the launch of" in text
    assert "(worker 1, chips 1)" in text
    assert f"{os.path.basename(__file__)}:" in text.splitlines()[0]  # the call's line
    assert info.value.rule == "worker-died"
    with pytest.raises(DeviceError, match="running chip 1 died"):  # and stays dead
        _spin(a, y)


def test_without_ray_the_workers_say_how_to_get_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(TilewrightError) as info:
        distributed.start(workers=2)
    assert "run on Ray, which is not installed" in info.value.message
    assert "tilewright[distributed]" in info.value.hint
    assert distributed.active() is None
