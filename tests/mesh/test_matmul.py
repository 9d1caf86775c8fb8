"""Matmuls across chips: a TT-Lang operation called with mesh tensors runs on every chip.

* M-sharded: A split along M, B replicated; each chip computes its rows of A @ B.
* K-sharded: A split along K, B along K; each chip computes a partial product, summed on
  the host or on the devices with ``ttnn.all_reduce``.
"""

from __future__ import annotations

import pytest
import torch

from tilewright import ttl, ttnn

from .conftest import bf16, distribute, opened
from .reference import ring_all_reduce

TILE = 32


@ttl.operation(grid=(2, 1))
def tile_matmul(a: ttnn.Tensor, b: ttnn.Tensor, y: ttnn.Tensor) -> None:
    """y = a @ b tile by tile; node x computes output tile columns x, x + 2, ..."""
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        node_x, _ = ttl.node(dims=2)
        for m in range(a.shape[0] // TILE):
            for n in range(node_x, b.shape[1] // TILE, 2):
                for k in range(a.shape[1] // TILE):
                    with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:
                        a_xf = ttl.copy(a[m, k], a_blk)
                        b_xf = ttl.copy(b[k, n], b_blk)
                        a_xf.wait()
                        b_xf.wait()

    @ttl.compute()
    def compute():
        node_x, _ = ttl.node(dims=2)
        for _m in range(a.shape[0] // TILE):
            for _n in range(node_x, b.shape[1] // TILE, 2):
                with y_dfb.reserve() as y_blk:
                    for k in range(a.shape[1] // TILE):
                        with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk:
                            if k == 0:
                                y_blk.store(a_blk @ b_blk)
                            else:
                                y_blk += a_blk @ b_blk

    @ttl.datamovement()
    def writer():
        node_x, _ = ttl.node(dims=2)
        for m in range(a.shape[0] // TILE):
            for n in range(node_x, b.shape[1] // TILE, 2):
                with y_dfb.wait() as y_blk:
                    ttl.copy(y_blk, y[m, n]).wait()


def close_to(got: torch.Tensor, want: torch.Tensor) -> bool:
    got, want = got.float(), want.float()
    return torch.allclose(got, want, rtol=0.05, atol=0.03 * want.abs().max().item())


@pytest.mark.parametrize(("shape", "board"), [((1, 2), "n300"), ((1, 8), "t3k")])
def test_matmul_sharded_along_m(shape, board):
    with opened(shape, board=board) as mesh:
        chips = mesh.get_num_devices()
        a, b = bf16(chips * 64, 96, seed=1), bf16(96, 64, seed=2)
        a_t = distribute(mesh, a, ttnn.ShardTensorToMesh(mesh, dim=0))
        b_t = distribute(mesh, b, ttnn.ReplicateTensorToMesh(mesh))
        y_t = distribute(mesh, torch.zeros(chips * 64, 64), ttnn.ShardTensorToMesh(mesh, dim=0))
        assert tuple(a_t.shape) == (64, 96)  # the per-chip shard
        tile_matmul(a_t, b_t, y_t)
        y = ttnn.to_torch(y_t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
        assert close_to(y, a.float() @ b.float())
        # Each chip ran the operation on its own rows (not one chip on everything).
        for k, shard in enumerate(ttnn.get_device_tensors(y_t)):
            rows = slice(k * 64, (k + 1) * 64)
            assert close_to(ttnn.to_torch(shard), a[rows].float() @ b.float())


def _k_sharded(mesh, m=64, k_per_chip=64, n=64):
    chips = mesh.get_num_devices()
    a, b = bf16(m, chips * k_per_chip, seed=3), bf16(chips * k_per_chip, n, seed=4)
    a_t = distribute(mesh, a, ttnn.ShardTensorToMesh(mesh, dim=1))
    b_t = distribute(mesh, b, ttnn.ShardTensorToMesh(mesh, dim=0))
    partial_2d = distribute(mesh, torch.zeros(m, n))  # one partial product per chip
    tile_matmul(a_t, b_t, partial_2d)
    return a, b, partial_2d


def test_matmul_sharded_along_k_with_a_host_reduction():
    with opened((1, 8), board="t3k") as mesh:
        a, b, partial = _k_sharded(mesh)
        stacked = ttnn.to_torch(
            ttnn.reshape(partial, (1, 64, 64)), mesh_composer=ttnn.ConcatMeshToTensor(mesh, 0)
        )
        assert stacked.shape == (8, 64, 64)
        y = stacked.float().sum(dim=0)
        assert close_to(y, a.float() @ b.float())


@pytest.mark.parametrize(
    ("fabric", "n"),
    [
        (ttnn.FabricConfig.FABRIC_1D, 256),  # 8 tile columns: reduce-scatter + all-gather
        (ttnn.FabricConfig.FABRIC_1D_RING, 256),
        (ttnn.FabricConfig.FABRIC_1D_RING, 64),  # nothing splits in 8: gather, sum in order
    ],
)
def test_matmul_sharded_along_k_with_all_reduce(fabric, n):
    with opened((1, 8), board="t3k", fabric=fabric) as mesh:
        a, b, partial = _k_sharded(mesh, n=n)
        parts = [ttnn.to_torch(t) for t in ttnn.get_device_tensors(partial)]
        total = ttnn.all_reduce(partial)
        results = [ttnn.to_torch(t) for t in ttnn.get_device_tensors(total)]
        assert all(torch.equal(r, results[0]) for r in results)  # the same bits on every chip
        assert torch.equal(results[0], ring_all_reduce(parts))  # the device's reduction order
        assert close_to(results[0], a.float() @ b.float())


def test_ttnn_matmul_on_mesh_tensors():
    with opened((1, 2), board="n300") as mesh:
        a, b = bf16(128, 64, seed=5), bf16(64, 32, seed=6)
        y = ttnn.matmul(distribute(mesh, a, ttnn.ShardTensorToMesh(mesh, 0)), distribute(mesh, b))
        got = ttnn.to_torch(y, mesh_composer=ttnn.ConcatMeshToTensor(mesh, 0))
        assert close_to(got, a.float() @ b.float())
