"""Tensor distribution: mesh mappers and composers, device tensors, conversions per shard."""

from __future__ import annotations

import pytest
import torch

from tilewright import ttnn
from tilewright.device.topology import MeshError

from .conftest import bf16, distribute, opened


def test_replicate_and_shard_round_trip():
    with opened((2, 4), board="t3k") as mesh:
        x = bf16(8, 64, 96)
        rep = distribute(mesh, x)  # a mesh device without a mapper replicates
        assert tuple(rep.shape) == (8, 64, 96) and len(ttnn.get_device_tensors(rep)) == 8
        assert all(torch.equal(ttnn.to_torch(t), x) for t in ttnn.get_device_tensors(rep))
        sharded = distribute(mesh, x, ttnn.ShardTensorToMesh(mesh, dim=0))
        assert tuple(sharded.shape) == (1, 64, 96)
        for k, t in enumerate(ttnn.get_device_tensors(sharded)):
            assert t.device() is mesh.get_devices()[k] and torch.equal(
                ttnn.to_torch(t), x[k : k + 1]
            )
        back = ttnn.to_torch(sharded, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
        assert torch.equal(back, x)


@pytest.mark.parametrize("dims", [(0, 2), (2, 0), (None, 2), (1, None)])
def test_shard_2d(dims):
    with opened((2, 4), board="t3k") as mesh:
        x = bf16(4, 64, 128, seed=1)
        t = distribute(mesh, x, ttnn.ShardTensor2dMesh(mesh, mesh_shape=(2, 4), dims=dims))
        rows = x if dims[0] is None else x.chunk(2, dim=dims[0])
        for r in range(2):
            row = x if dims[0] is None else rows[r]
            for c in range(4):
                want = row if dims[1] is None else row.chunk(4, dim=dims[1])[c]
                assert torch.equal(ttnn.to_torch(ttnn.get_device_tensors(t)[r * 4 + c]), want)
        if None not in dims:
            composer = ttnn.ConcatMesh2dToTensor(mesh, mesh_shape=(2, 4), dims=dims)
            assert torch.equal(ttnn.to_torch(t, mesh_composer=composer), x)


def test_mapper_configs_are_the_newer_spelling():
    with opened((2, 4), board="t3k") as mesh:
        x = bf16(2, 64, 128, seed=2)
        config = ttnn.MeshMapperConfig([ttnn.PlacementShard(0), ttnn.PlacementShard(2)])
        a = distribute(mesh, x, ttnn.create_mesh_mapper(mesh, config))
        b = distribute(mesh, x, ttnn.ShardTensor2dMesh(mesh, (2, 4), (0, 2)))
        for ta, tb in zip(ttnn.get_device_tensors(a), ttnn.get_device_tensors(b)):
            assert torch.equal(ttnn.to_torch(ta), ttnn.to_torch(tb))
        composer = ttnn.create_mesh_composer(mesh, ttnn.MeshComposerConfig([0, 2]))
        assert torch.equal(ttnn.to_torch(a, mesh_composer=composer), x)


def test_host_mesh_tensors_and_conversions_per_shard():
    with opened((1, 4), board="t3k") as mesh:
        x = torch.arange(4 * 32 * 64, dtype=torch.float32).reshape(4, 32, 64)
        host = ttnn.from_torch(x, dtype=ttnn.float32, mesh_mapper=ttnn.ShardTensorToMesh(mesh, 0))
        assert host.storage_type() == ttnn.StorageType.HOST and host.device() is None
        on = ttnn.to_device(host, mesh)
        assert on.device() is mesh and on.storage_type() == ttnn.StorageType.DEVICE
        tiled = ttnn.to_layout(on, ttnn.TILE_LAYOUT)
        assert tiled.layout == ttnn.TILE_LAYOUT and tiled.device() is mesh
        ints = ttnn.typecast(tiled, ttnn.int32)
        composer = ttnn.ConcatMeshToTensor(mesh, 0)
        assert torch.equal(ttnn.to_torch(ints, mesh_composer=composer), x.to(torch.int32))
        back = ttnn.from_device(tiled)
        assert back.device() is None and torch.equal(ttnn.to_torch(back, mesh_composer=composer), x)
        zeros = ttnn.zeros_like(tiled)  # creation on a mesh replicates
        assert zeros.device() is mesh and tuple(zeros.shape) == (1, 32, 64)
        sliced = tiled[:, :, :32]
        assert tuple(sliced.shape) == (1, 32, 32)
        again = ttnn.aggregate_as_tensor(ttnn.get_device_tensors(tiled))
        assert again.device() is mesh
        ttnn.deallocate(tiled)
        assert not tiled.is_allocated()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda m, x: ttnn.from_torch(x, device=m, mesh_mapper=ttnn.ShardTensorToMesh(m, 1)),
            "tensor dimension 1 of size 60 does not split into 8 equal pieces",
        ),
        (
            lambda m, x: ttnn.from_torch(x, device=m, mesh_mapper=ttnn.ShardTensorToMesh(m, 3)),
            "dim 3 is out of range for a rank-2 tensor",
        ),
        (
            lambda m, x: ttnn.ShardTensor2dMesh(m, (4, 2), (0, 1)),
            "mesh_shape 4x2 does not match the 2x4 mesh device",
        ),
        (lambda m, x: ttnn.ShardTensor2dMesh(m, (2, 4), (0,)), "dims takes two entries"),
        (lambda m, x: ttnn.ConcatMesh2dToTensor(m, (2, 4), (1, 1)), "must name two different"),
        (
            lambda m, x: ttnn.to_torch(ttnn.from_torch(x, device=m)),
            "holds 8 device tensors; assemble them with a mesh composer",
        ),
        (
            lambda m, x: ttnn.to_torch(
                ttnn.from_torch(x), mesh_composer=ttnn.ConcatMeshToTensor(m, 0)
            ),
            "this tensor is on one device",
        ),
        (
            lambda m, x: ttnn.from_torch(x, mesh_mapper=object()),
            "mesh_mapper must be a mesh mapper",
        ),
        (lambda m, x: ttnn.ShardTensorToMesh(m.get_devices()[0], 0), "takes a mesh device"),
    ],
)
def test_wrong_mappers_and_dims(make, message):
    with opened((2, 4), board="t3k") as mesh:
        with pytest.raises(MeshError, match=message):
            make(mesh, torch.zeros(16, 60))


def test_mapper_for_another_mesh_shape():
    with opened((2, 4), board="t3k") as mesh:
        sub = mesh.create_submesh(ttnn.MeshShape(1, 4))
        with pytest.raises(MeshError, match="made for a 2x4 mesh, but the tensor goes to a 1x4"):
            ttnn.from_torch(
                torch.zeros(8, 32), device=sub, mesh_mapper=ttnn.ShardTensorToMesh(mesh, 0)
            )


def test_ttnn_ops_run_on_every_chip():
    with opened((1, 4), board="t3k") as mesh:
        x, y = bf16(4, 64, 64, seed=3), bf16(4, 64, 64, seed=4)
        shard = ttnn.ShardTensorToMesh(mesh, 0)
        a, b = distribute(mesh, x, shard), distribute(mesh, y, shard)
        out = ttnn.relu(a + b)
        assert out.device() is mesh
        got = ttnn.to_torch(out, mesh_composer=ttnn.ConcatMeshToTensor(mesh, 0))
        assert torch.equal(got, torch.relu((x.float() + y.float()).bfloat16()))
        single = ttnn.from_torch(y[:1], dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        with pytest.raises(
            MeshError,
            match="'input_tensor_b' is a single-device tensor on the host, but 'input_tensor_a' is a mesh tensor",
        ):
            ttnn.add(a, single)
