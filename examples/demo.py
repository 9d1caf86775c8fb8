"""Tilewright demo: a TT-Lang operation on the virtual Wormhole n150.

``./dev demo`` (or ``tilewright run examples/demo.py``) runs it.  The operation
computes ``y = relu(a * b + c)`` over a 4x4 grid of nodes: two data-movement
kernels per node move 2x2-tile blocks between DRAM and dataflow buffers in L1, and
the compute kernel evaluates the fused expression on whole blocks.  Every byte is
real: tensors sit in DRAM banks in the bf16 tile format, blocks in each node's L1.
The result is checked against torch.
"""

import time

import torch

import ttl
import ttnn

TILE = 32
ROWS, COLS = 512, 512
B = 2  # block shape in tiles
GRID = (4, 4)


@ttl.operation(grid=GRID)
def fused_relu_mul_add(a: ttnn.Tensor, b: ttnn.Tensor, c: ttnn.Tensor, y: ttnn.Tensor) -> None:
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(B, B), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(B, B), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(B, B), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(B, B), block_count=2)

    def my_blocks():
        cols, rows = ttl.grid_size(dims=2)
        x, yy = ttl.node(dims=2)
        per_row = ROWS // TILE // B // rows
        per_col = COLS // TILE // B // cols
        for i in range(per_row):
            for j in range(per_col):
                yield (yy * per_row + i) * B, (x * per_col + j) * B

    @ttl.datamovement()
    def reader():
        for r, c0 in my_blocks():
            with a_dfb.reserve() as ab, b_dfb.reserve() as bb, c_dfb.reserve() as cb:
                ttl.copy(a[r : r + B, c0 : c0 + B], ab).wait()
                ttl.copy(b[r : r + B, c0 : c0 + B], bb).wait()
                ttl.copy(c[r : r + B, c0 : c0 + B], cb).wait()

    @ttl.compute()
    def compute():
        for _ in my_blocks():
            with a_dfb.wait() as ab, b_dfb.wait() as bb, c_dfb.wait() as cb, y_dfb.reserve() as yb:
                yb.store(ttl.math.relu(ab * bb + cb))

    @ttl.datamovement()
    def writer():
        for r, c0 in my_blocks():
            with y_dfb.wait() as yb:
                ttl.copy(yb, y[r : r + B, c0 : c0 + B]).wait()


torch.manual_seed(0)
a_h, b_h, c_h = ((2 * torch.rand(ROWS, COLS) - 1).to(torch.bfloat16) for _ in range(3))

device = ttnn.open_device(device_id=0)
try:
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
              memory_config=ttnn.DRAM_MEMORY_CONFIG)
    a, b, c = (ttnn.from_torch(t, **kw) for t in (a_h, b_h, c_h))
    y = ttnn.from_torch(torch.zeros(ROWS, COLS), **kw)

    start = time.perf_counter()
    fused_relu_mul_add(a, b, c, y)
    wall = time.perf_counter() - start

    got = ttnn.to_torch(y).float()
    want = torch.relu(a_h.float() * b_h.float() + c_h.float())
    err = (got - want).abs().max().item()
    assert torch.allclose(got, want, rtol=2e-2, atol=2e-2), f"max abs error {err}"
    grid_x, grid_y = device.compute_with_storage_grid_size()
    print(f"device: virtual {device.arch().name.lower()} with a {grid_x}x{grid_y} worker grid")
    print(f"y = relu(a * b + c) on {GRID[0]}x{GRID[1]} nodes, {ROWS}x{COLS} bf16, "
          f"{B}x{B}-tile blocks: {wall * 1e3:.1f} ms, max abs error {err:.3g} vs torch")
    print("PASS demo")
finally:
    ttnn.close_device(device)
