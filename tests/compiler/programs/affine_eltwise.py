"""Multi-node elementwise with slice bounds computed from loop variables (issue 21).

Slice bounds are ``start = b * T`` / ``end = (b + 1) * T`` locals: affine in the loop
variables and the node coordinates, so the extent ``T`` is a compile-time constant.
Prints "DONE affine_eltwise <checksum>" (the checksum compares engines bit for bit).
"""

import torch
import ttl
import ttnn

TILE = 32
BT = 2  # block side in tiles


@ttl.operation(grid=(2, 2))
def affine_fma(a: ttnn.Tensor, b: ttnn.Tensor, c: ttnn.Tensor, y: ttnn.Tensor) -> None:
    grid_cols, grid_rows = ttl.grid_size(dims=2)
    rows_per_node = a.shape[0] // TILE // BT // grid_rows
    cols_per_node = a.shape[1] // TILE // BT // grid_cols
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(BT, BT), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(BT, BT), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(BT, BT), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(BT, BT), block_count=2)

    @ttl.compute()
    def fma():
        for _ in range(rows_per_node):
            for _ in range(cols_per_node):
                with a_dfb.wait() as ab, b_dfb.wait() as bb, c_dfb.wait() as cb:
                    with y_dfb.reserve() as yb:
                        yb.store(ab * bb + cb)

    @ttl.datamovement()
    def read():
        node_col, node_row = ttl.node(dims=2)
        for local_row in range(rows_per_node):
            row = node_row * rows_per_node + local_row
            first_row = row * BT
            last_row = (row + 1) * BT
            for local_col in range(cols_per_node):
                col = node_col * cols_per_node + local_col
                first_col = col * BT
                last_col = (col + 1) * BT
                with a_dfb.reserve() as ab, b_dfb.reserve() as bb, c_dfb.reserve() as cb:
                    ta = ttl.copy(a[first_row:last_row, first_col:last_col], ab)
                    tb = ttl.copy(b[first_row:last_row, first_col:last_col], bb)
                    tc = ttl.copy(c[first_row:last_row, first_col:last_col], cb)
                    ta.wait()
                    tb.wait()
                    tc.wait()

    @ttl.datamovement()
    def write():
        node_col, node_row = ttl.node(dims=2)
        for local_row in range(rows_per_node):
            row = node_row * rows_per_node + local_row
            first_row = row * BT
            last_row = (row + 1) * BT
            for local_col in range(cols_per_node):
                col = node_col * cols_per_node + local_col
                with y_dfb.wait() as yb:
                    ttl.copy(yb, y[first_row:last_row, col * BT : (col + 1) * BT]).wait()


torch.manual_seed(3)
a_h, b_h, c_h = ((2 * torch.rand(256, 256) - 1).to(torch.bfloat16) for _ in range(3))
device = ttnn.open_device(device_id=0)
try:
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    a, b, c = (ttnn.from_torch(t, **kw) for t in (a_h, b_h, c_h))
    y = ttnn.from_torch(torch.zeros(256, 256, dtype=torch.bfloat16), **kw)
    affine_fma(a, b, c, y)
    got = ttnn.to_torch(y)
    want = (a_h.float() * b_h.float() + c_h.float()).to(torch.bfloat16)
    assert torch.allclose(got.float(), want.float(), rtol=2e-2, atol=2e-2)
    print("DONE affine_eltwise", int(got.view(torch.int16).to(torch.int64).sum()))
finally:
    ttnn.close_device(device)
