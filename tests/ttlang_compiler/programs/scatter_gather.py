"""Spec section 6.1 scatter-gather: every node of a column multicasts its tile to the whole
column, itself included (a multicast whose sender is also a destination)."""

import torch
import ttl
import ttnn

GX, GY = 2, 2  # columns, rows of nodes
TILE = 32


@ttl.operation(grid=(GX, GY))
def scatter_gather(a, out):
    net = ttl.PipeNet(
        [ttl.Pipe(src=(x, y), dst=(x, slice(0, GY))) for x in range(GX) for y in range(GY)]
    )
    own_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    got_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=GY)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

    @ttl.datamovement()
    def reader():
        x, y = ttl.node(dims=2)
        with own_dfb.reserve() as blk:
            ttl.copy(a[y : y + 1, x : x + 1], blk).wait()

            def pipe_src(pipe):
                ttl.copy(blk, pipe).wait()

            net.if_src(pipe_src)

        def pipe_dst(pipe):
            with got_dfb.reserve() as r:
                ttl.copy(pipe, r).wait()

        net.if_dst(pipe_dst)

    @ttl.compute()
    def compute():
        own = own_dfb.wait()
        r0 = got_dfb.wait()
        r1 = got_dfb.wait()
        with out_dfb.reserve() as o:
            o.store(r0 + r1 - own)
        own.pop()
        r0.pop()
        r1.pop()

    @ttl.datamovement()
    def writer():
        x, y = ttl.node(dims=2)
        with out_dfb.wait() as o:
            ttl.copy(o, out[y : y + 1, x : x + 1]).wait()


torch.manual_seed(0)
host = torch.randint(0, 8, (GY * TILE, GX * TILE)).to(torch.bfloat16)
device = ttnn.open_device(device_id=0)
try:
    a = ttnn.from_torch(host, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out = ttnn.from_torch(
        torch.zeros_like(host), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device
    )
    scatter_gather(a, out)
    got = ttnn.to_torch(out).float()
finally:
    ttnn.close_device(device)
tiles = host.float().reshape(GY, TILE, GX, TILE)
want = (tiles.sum(dim=0, keepdim=True) - tiles).reshape(GY * TILE, GX * TILE)
assert torch.equal(got, want), f"max diff {(got - want).abs().max()}"
print("PASS scatter_gather")
