import torch
import ttl
import ttnn


@ttl.operation(grid=(1, 1))
def double(a: ttnn.Tensor, y: ttnn.Tensor) -> None:
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        for r in range(4):
            with a_dfb.reserve() as b:
                ttl.copy(a[r, 0], b).wait()

    @ttl.compute()
    def compute():
        for _ in range(4):
            with a_dfb.wait() as x, y_dfb.reserve() as o:
                o.store(x + x)

    @ttl.datamovement()
    def writer():
        for r in range(4):
            with y_dfb.wait() as b:
                ttl.copy(b, y[r, 0]).wait()


@ttl.operation(grid=(1, 1))
def copy(a: ttnn.Tensor, y: ttnn.Tensor) -> None:
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        for r in range(4):
            with a_dfb.reserve() as b:
                ttl.copy(a[r, 0], b).wait()

    @ttl.datamovement()
    def writer():
        for r in range(4):
            with a_dfb.wait() as b:
                ttl.copy(b, y[r, 0]).wait()


device = ttnn.open_device(device_id=0)
sharded = ttnn.create_sharded_memory_config(
    (128, 32), ttnn.CoreGrid(y=2, x=1), ttnn.ShardStrategy.HEIGHT
)
for dtype in (ttnn.bfloat16, ttnn.int32):
    x = (
        torch.randint(0, 50, (128, 32)).float()
        if dtype == ttnn.bfloat16
        else torch.randint(-50, 50, (128, 32), dtype=torch.int32)
    )
    a = ttnn.from_torch(
        x, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device, memory_config=sharded
    )
    y = ttnn.from_torch(
        torch.zeros(128, 32, dtype=x.dtype), dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device
    )
    (double if dtype == ttnn.bfloat16 else copy)(a, y)
    got = ttnn.to_torch(y)
    assert torch.equal(got.to(x.dtype), x + x if dtype == ttnn.bfloat16 else x), dtype
print("PASS emit program")
ttnn.close_device(device)
