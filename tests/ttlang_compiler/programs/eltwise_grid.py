"""y = relu(a * b + c) on a 2x2 grid of nodes, blocks of 2x2 tiles (TT-Lang 1.1.1's form:
one compute and two data-movement kernels; the grid is read in the operation body)."""

import torch
import ttl
import ttnn

ROWS, COLS, BLOCK = 128, 256, 2


@ttl.operation(grid=(2, 2))
def fused(a: ttnn.Tensor, b: ttnn.Tensor, c: ttnn.Tensor, y: ttnn.Tensor):
    grid_cols, grid_rows = ttl.grid_size(dims=2)
    rows_per_node = ROWS // 32 // BLOCK // grid_rows
    cols_per_node = COLS // 32 // BLOCK // grid_cols
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(BLOCK, BLOCK), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(BLOCK, BLOCK), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(BLOCK, BLOCK), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(BLOCK, BLOCK), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(rows_per_node * cols_per_node):
            with a_dfb.wait() as ab, b_dfb.wait() as bb, c_dfb.wait() as cb, y_dfb.reserve() as yb:
                yb.store(ttl.math.relu(ab * bb + cb))

    @ttl.datamovement()
    def reader():
        node_col, node_row = ttl.node(dims=2)
        for i in range(rows_per_node):
            r = (node_row * rows_per_node + i) * BLOCK
            for j in range(cols_per_node):
                k = (node_col * cols_per_node + j) * BLOCK
                with a_dfb.reserve() as ab, b_dfb.reserve() as bb, c_dfb.reserve() as cb:
                    ta = ttl.copy(a[r : r + BLOCK, k : k + BLOCK], ab)
                    tb = ttl.copy(b[r : r + BLOCK, k : k + BLOCK], bb)
                    tc = ttl.copy(c[r : r + BLOCK, k : k + BLOCK], cb)
                    ta.wait()
                    tb.wait()
                    tc.wait()

    @ttl.datamovement()
    def writer():
        node_col, node_row = ttl.node(dims=2)
        for i in range(rows_per_node):
            r = (node_row * rows_per_node + i) * BLOCK
            for j in range(cols_per_node):
                k = (node_col * cols_per_node + j) * BLOCK
                with y_dfb.wait() as yb:
                    ttl.copy(yb, y[r : r + BLOCK, k : k + BLOCK]).wait()


def on_device(t, device):
    return ttnn.from_torch(
        t,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=ttnn.DRAM_MEMORY_CONFIG,
    )


torch.manual_seed(0)
a, b, c = (torch.rand(ROWS, COLS, dtype=torch.bfloat16) * 2 - 1 for _ in range(3))
device = ttnn.open_device(device_id=0)
try:
    y = on_device(torch.zeros(ROWS, COLS, dtype=torch.bfloat16), device)
    fused(on_device(a, device), on_device(b, device), on_device(c, device), y)
    got = ttnn.to_torch(y).float()
finally:
    ttnn.close_device(device)
want = torch.relu(a.float() * b.float() + c.float())
assert torch.allclose(got, want, rtol=2e-2, atol=2e-2), (got - want).abs().max()
print("PASS eltwise_grid")
