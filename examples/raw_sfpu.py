"""raw_sfpu -- a raw IR function of SFPU math on an explicit compute kernel.

What it demonstrates
--------------------
``y = exp(x) + 0.5 * relu(x)`` for a 128 x 128 bf16 tensor on a 2 x 2 grid, where the
whole compute kernel is one call of a raw IR function.  Per block of two tiles it waits
for the input block, reserves the output block and, per tile, copies the tile into two
DST registers, runs ``exp`` on one and ``relu`` then a scalar multiply on the other
(SFPU ops with a parameter), adds them with an SFPU binary op and packs the sum::

    raw.copy_tile(src, t, 0); raw.copy_tile(src, t, 1)
    raw.exp(0); raw.relu(1); raw.mul_scalar(1, half)
    raw.sfpu_binary("add", 0, 1, 0)
    raw.pack_tile(0, dst, t)

``t`` is a traced loop index (``raw.for_``); the number of blocks and the 0.5 are
module constants folded into the trace, so the compiler computes the call's exact DFB
protocol (4 x [wait(x_dfb, 2), reserve(y_dfb, 2), push(y_dfb, 2), pop(x_dfb, 2)]).  The
reader and the writer are ordinary TT-Lang data-movement kernels.  Both engines run it
(the Python engine with the kernel-IR interpreter, the native engine as a ``static
inline`` C++ function); the result matches torch within bf16 rounding.  Prints
``PASS raw_sfpu``.
"""

import torch

import ttl
import ttnn

raw = ttl.raw

TILE = 32
ROWS, COLS = 128, 128
GRID = (2, 2)
BLOCK_C = 2  # block shape (1, 2) tiles
ROW_TILES, COL_BLOCKS = ROWS // TILE, COLS // TILE // BLOCK_C  # 4, 2
BLOCKS_PER_NODE = ROW_TILES * COL_BLOCKS // (GRID[0] * GRID[1])  # 2
HALF = 0.5


@ttl.raw.ir
def exp_plus_half_relu(src: ttl.raw.DFB, dst: ttl.raw.DFB, blocks: ttl.raw.index, k: ttl.raw.f32):
    with raw.for_(blocks):
        raw.dfb_wait(src, BLOCK_C)
        raw.dfb_reserve(dst, BLOCK_C)
        with raw.for_(BLOCK_C) as t:
            raw.tile_regs_acquire()
            raw.copy_tile(src, t, 0)
            raw.copy_tile(src, t, 1)
            raw.exp(0)  # DST[0] = exp(x)
            raw.relu(1)  # DST[1] = relu(x)
            raw.mul_scalar(1, k)  # DST[1] *= k
            raw.sfpu_binary("add", 0, 1, 0)  # DST[0] += DST[1]
            raw.tile_regs_commit()
            raw.tile_regs_wait()
            raw.pack_tile(0, dst, t)
            raw.tile_regs_release()
        raw.dfb_push(dst, BLOCK_C)
        raw.dfb_pop(src, BLOCK_C)


@ttl.operation(grid=GRID)
def exp_relu(x: ttnn.Tensor, y: ttnn.Tensor) -> None:
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, BLOCK_C), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, BLOCK_C), block_count=2)

    @ttl.datamovement()
    def reader():
        nx, ny = ttl.node(dims=2)
        first = (ny * GRID[0] + nx) * BLOCKS_PER_NODE
        for b in range(BLOCKS_PER_NODE):
            r = (first + b) // COL_BLOCKS
            c = (first + b) % COL_BLOCKS * BLOCK_C
            with x_dfb.reserve() as blk:
                ttl.copy(x[r : r + 1, c : c + BLOCK_C], blk).wait()

    @ttl.compute()
    def compute():
        ttl.raw.call(exp_plus_half_relu, x_dfb, y_dfb, BLOCKS_PER_NODE, HALF)

    @ttl.datamovement()
    def writer():
        nx, ny = ttl.node(dims=2)
        first = (ny * GRID[0] + nx) * BLOCKS_PER_NODE
        for b in range(BLOCKS_PER_NODE):
            r = (first + b) // COL_BLOCKS
            c = (first + b) % COL_BLOCKS * BLOCK_C
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[r : r + 1, c : c + BLOCK_C]).wait()


def to_device(t: torch.Tensor, device) -> ttnn.Tensor:
    return ttnn.from_torch(
        t,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=ttnn.DRAM_MEMORY_CONFIG,
    )


torch.manual_seed(0)
x_host = (4.0 * torch.rand(ROWS, COLS) - 2.0).to(torch.bfloat16)

device = ttnn.open_device(device_id=0)
try:
    x_t = to_device(x_host, device)
    y_t = to_device(torch.zeros(ROWS, COLS, dtype=torch.bfloat16), device)
    exp_relu(x_t, y_t)
    got = ttnn.to_torch(y_t).to(torch.float32)
    xf = x_host.float()
    golden = (torch.exp(xf) + HALF * torch.relu(xf)).to(torch.bfloat16).float()
    if not torch.allclose(got, golden, rtol=2e-2, atol=2e-2):
        err = (got - golden).abs().max().item()
        raise AssertionError(f"y = exp(x) + {HALF} * relu(x): max abs error {err:.4g}")
finally:
    ttnn.close_device(device)

print("PASS raw_sfpu")
