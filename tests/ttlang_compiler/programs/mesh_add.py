"""y = a + b on every chip of a 1xN mesh (SPMD: each chip adds its shard of the columns)."""

import torch
import ttl
import ttnn

ROWS, COLS_PER_CHIP = 64, 64


@ttl.operation(grid=(1, 1))
def add(a: ttnn.Tensor, b: ttnn.Tensor, y: ttnn.Tensor):
    rt, ct = ROWS // 32, COLS_PER_CHIP // 32
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(rt, ct), block_count=1)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(rt, ct), block_count=1)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(rt, ct), block_count=1)

    @ttl.compute()
    def compute():
        with a_dfb.wait() as ab, b_dfb.wait() as bb, y_dfb.reserve() as yb:
            yb.store(ab + bb)

    @ttl.datamovement()
    def reader():
        with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
            ta = ttl.copy(a[0:rt, 0:ct], ab)
            tb = ttl.copy(b[0:rt, 0:ct], bb)
            ta.wait()
            tb.wait()

    @ttl.datamovement()
    def writer():
        with y_dfb.wait() as yb:
            ttl.copy(yb, y[0:rt, 0:ct]).wait()


n = ttnn.GetNumAvailableDevices()
mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, n))
try:

    def shard(t):
        return ttnn.from_torch(
            t,
            dtype=ttnn.bfloat16,
            layout=ttnn.TILE_LAYOUT,
            device=mesh,
            memory_config=ttnn.DRAM_MEMORY_CONFIG,
            mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=1),
        )

    torch.manual_seed(2)
    a = torch.rand(ROWS, COLS_PER_CHIP * n, dtype=torch.bfloat16)
    b = torch.rand(ROWS, COLS_PER_CHIP * n, dtype=torch.bfloat16)
    y = shard(torch.zeros_like(a))
    add(shard(a), shard(b), y)
    got = ttnn.to_torch(y, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=1))
finally:
    ttnn.close_mesh_device(mesh)
assert torch.equal(got, (a.float() + b.float()).to(torch.bfloat16)), "mismatch"
print(f"PASS mesh_add on {n} chips")
