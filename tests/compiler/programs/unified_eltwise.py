"""Example 01 (y = relu(a * b + c)) as a unified body; also runs the explicit original.

Run as a program: prints "SAME unified_eltwise" when both give bit-identical results.
"""

import torch
import ttl
import ttnn

TILE = 32
ROWS, COLS = 256, 512
BLOCK_R, BLOCK_C = 2, 2
ROW_BLOCKS = ROWS // TILE // BLOCK_R
COL_BLOCKS = COLS // TILE // BLOCK_C


@ttl.operation(grid=(2, 2))
def unified_relu_mul_add(a: ttnn.Tensor, b: ttnn.Tensor, c: ttnn.Tensor, y: ttnn.Tensor) -> None:
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(BLOCK_R, BLOCK_C), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(BLOCK_R, BLOCK_C), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(BLOCK_R, BLOCK_C), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(BLOCK_R, BLOCK_C), block_count=2)

    grid_x, grid_y = ttl.grid_size(dims=2)
    node_x, node_y = ttl.node(dims=2)
    rows_per_node = ROW_BLOCKS // grid_y
    cols_per_node = COL_BLOCKS // grid_x
    for i in range(rows_per_node):
        r0 = (node_y * rows_per_node + i) * BLOCK_R
        for j in range(cols_per_node):
            c0 = (node_x * cols_per_node + j) * BLOCK_C
            with a_dfb.reserve() as a_in, b_dfb.reserve() as b_in, c_dfb.reserve() as c_in:
                ttl.copy(a[r0 : r0 + BLOCK_R, c0 : c0 + BLOCK_C], a_in).wait()
                ttl.copy(b[r0 : r0 + BLOCK_R, c0 : c0 + BLOCK_C], b_in).wait()
                ttl.copy(c[r0 : r0 + BLOCK_R, c0 : c0 + BLOCK_C], c_in).wait()
            with (
                a_dfb.wait() as a_blk,
                b_dfb.wait() as b_blk,
                c_dfb.wait() as c_blk,
                y_dfb.reserve() as y_blk,
            ):
                y_blk.store(ttl.math.relu(a_blk * b_blk + c_blk))
            with y_dfb.wait() as y_out:
                ttl.copy(y_out, y[r0 : r0 + BLOCK_R, c0 : c0 + BLOCK_C]).wait()


@ttl.operation(grid=(2, 2))
def explicit_relu_mul_add(a: ttnn.Tensor, b: ttnn.Tensor, c: ttnn.Tensor, y: ttnn.Tensor) -> None:
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(BLOCK_R, BLOCK_C), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(BLOCK_R, BLOCK_C), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(BLOCK_R, BLOCK_C), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(BLOCK_R, BLOCK_C), block_count=2)

    @ttl.datamovement()
    def reader():
        grid_x, grid_y = ttl.grid_size(dims=2)
        node_x, node_y = ttl.node(dims=2)
        rows_per_node = ROW_BLOCKS // grid_y
        cols_per_node = COL_BLOCKS // grid_x
        for i in range(rows_per_node):
            r0 = (node_y * rows_per_node + i) * BLOCK_R
            for j in range(cols_per_node):
                c0 = (node_x * cols_per_node + j) * BLOCK_C
                with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk, c_dfb.reserve() as c_blk:
                    ttl.copy(a[r0 : r0 + BLOCK_R, c0 : c0 + BLOCK_C], a_blk).wait()
                    ttl.copy(b[r0 : r0 + BLOCK_R, c0 : c0 + BLOCK_C], b_blk).wait()
                    ttl.copy(c[r0 : r0 + BLOCK_R, c0 : c0 + BLOCK_C], c_blk).wait()

    @ttl.compute()
    def compute():
        grid_x, grid_y = ttl.grid_size(dims=2)
        blocks_per_node = (ROW_BLOCKS // grid_y) * (COL_BLOCKS // grid_x)
        for _ in range(blocks_per_node):
            with (
                a_dfb.wait() as a_blk,
                b_dfb.wait() as b_blk,
                c_dfb.wait() as c_blk,
                y_dfb.reserve() as y_blk,
            ):
                y_blk.store(ttl.math.relu(a_blk * b_blk + c_blk))

    @ttl.datamovement()
    def writer():
        grid_x, grid_y = ttl.grid_size(dims=2)
        node_x, node_y = ttl.node(dims=2)
        rows_per_node = ROW_BLOCKS // grid_y
        cols_per_node = COL_BLOCKS // grid_x
        for i in range(rows_per_node):
            r0 = (node_y * rows_per_node + i) * BLOCK_R
            for j in range(cols_per_node):
                c0 = (node_x * cols_per_node + j) * BLOCK_C
                with y_dfb.wait() as y_blk:
                    ttl.copy(y_blk, y[r0 : r0 + BLOCK_R, c0 : c0 + BLOCK_C]).wait()


def to_device(t, device):
    return ttnn.from_torch(
        t,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=ttnn.DRAM_MEMORY_CONFIG,
    )


torch.manual_seed(0)
a_host = (2.0 * torch.rand(ROWS, COLS) - 1.0).to(torch.bfloat16)
b_host = (2.0 * torch.rand(ROWS, COLS) - 1.0).to(torch.bfloat16)
c_host = (2.0 * torch.rand(ROWS, COLS) - 1.0).to(torch.bfloat16)

device = ttnn.open_device(device_id=0)
try:
    args = [to_device(t, device) for t in (a_host, b_host, c_host)]
    y_unified = to_device(torch.zeros(ROWS, COLS, dtype=torch.bfloat16), device)
    y_explicit = to_device(torch.zeros(ROWS, COLS, dtype=torch.bfloat16), device)
    unified_relu_mul_add(*args, y_unified)
    explicit_relu_mul_add(*args, y_explicit)
    got, want = ttnn.to_torch(y_unified), ttnn.to_torch(y_explicit)
    if not torch.equal(got, want):
        raise AssertionError("unified and explicit results differ")
    golden = torch.relu(a_host.float() * b_host.float() + c_host.float())
    if not torch.allclose(got.float(), golden, rtol=2e-2, atol=2e-2):
        raise AssertionError("mismatch against torch")
finally:
    ttnn.close_device(device)

print("SAME unified_eltwise")
