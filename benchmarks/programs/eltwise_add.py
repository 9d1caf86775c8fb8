"""A tutorial-shaped TT-Lang program, small enough that start-up dominates its run.

``y = a + b`` on 256x256 bf16 tensors (8x8 tiles), one node, 1x1-tile blocks: a reader,
a compute and a writer kernel, as tt-lang's elementwise tutorial writes them.  The
program's own imports are torch (``ttl`` and ``ttnn`` are what ``tilewright run``
provides); ``benchmarks/bench_startup.py`` times a whole ``tilewright run`` of it against
``python -c "import torch"``.  Prints ``PASS eltwise_add``.
"""

import torch
import ttl
import ttnn

TILE = 32
ROWS, COLS = 256, 256
ROW_TILES, COL_TILES = ROWS // TILE, COLS // TILE


@ttl.operation(grid=(1, 1))
def eltwise_add(a: ttnn.Tensor, b: ttnn.Tensor, y: ttnn.Tensor) -> None:
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        for r in range(ROW_TILES):
            for c in range(COL_TILES):
                with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:
                    ttl.copy(a[r : r + 1, c : c + 1], a_blk).wait()
                    ttl.copy(b[r : r + 1, c : c + 1], b_blk).wait()

    @ttl.compute()
    def compute():
        for _ in range(ROW_TILES * COL_TILES):
            with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, y_dfb.reserve() as y_blk:
                y_blk.store(a_blk + b_blk)

    @ttl.datamovement()
    def writer():
        for r in range(ROW_TILES):
            for c in range(COL_TILES):
                with y_dfb.wait() as y_blk:
                    ttl.copy(y_blk, y[r : r + 1, c : c + 1]).wait()


def to_device(t: torch.Tensor, device) -> ttnn.Tensor:
    return ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)


torch.manual_seed(0)
a_host = torch.rand(ROWS, COLS).to(torch.bfloat16)
b_host = torch.rand(ROWS, COLS).to(torch.bfloat16)

device = ttnn.open_device(device_id=0)
try:
    y_t = to_device(torch.zeros(ROWS, COLS, dtype=torch.bfloat16), device)
    eltwise_add(to_device(a_host, device), to_device(b_host, device), y_t)
    got = ttnn.to_torch(y_t).to(torch.float32)
finally:
    ttnn.close_device(device)
want = (a_host.float() + b_host.float()).to(torch.bfloat16).float()
assert torch.equal(got, want), f"mismatch: max abs err {(got - want).abs().max().item()}"
print("PASS eltwise_add")
