"""raw_scale_copy -- a raw IR function (``@ttl.raw.ir``) used from a unified operation.

What it demonstrates
--------------------
``out = 1.5 * a`` for a 64 x 256 bf16 tensor (2 x 8 tiles) on two nodes.  The compute
side is a *raw IR function*: its body runs at trace time with the ``ttl.raw`` builder
ops in scope and emits kernel IR -- the DFB protocol (``dfb_wait`` / ``dfb_reserve`` /
``dfb_push`` / ``dfb_pop``), the DST handshake, ``copy_tile`` (DFB tile -> DST), an SFPU
scalar multiply and ``pack_tile`` (DST -> DFB tile)::

    @ttl.raw.ir
    def scale_copy(src: ttl.raw.DFB, dst: ttl.raw.DFB, factor: ttl.raw.f32, n: ttl.raw.index):
        with raw.for_(n):
            raw.dfb_wait(src, 1)
            ...

The unified body calls it with ``ttl.raw.call(scale_copy, in_dfb, out_dfb, SCALE,
TILES_PER_NODE, kernel=ttl.KernelKind.COMPUTE)``.  Nothing about its DFB protocol is
declared: the compiler traces the function for this call (``n`` is the module constant 8,
so the loop's trip count is static), computes its effects -- 8 x [wait(in_dfb, 1),
reserve(out_dfb, 1), push(out_dfb, 1), pop(in_dfb, 1)] -- and the splitter and the DFB
allocation use them as they use ``call_extern_func``'s declared ``dfb_effects``
(``tilewright explain`` prints them, "computed from IR").  The data movement (reads and
writes, tile by tile) is ordinary TT-Lang on the data-movement kernel.

Under ``--engine python`` the call runs the traced IR with the kernel-IR interpreter;
under ``--engine native`` (and ``tilewright emit``) the function is a ``static inline``
C++ function of the compute kernel.  Both give the same bits.  Prints
``PASS raw_scale_copy``.
"""

import torch

import ttl
import ttnn

raw = ttl.raw

TILE = 32
ROWS, COLS = 64, 256
COL_TILES = COLS // TILE  # 8
NUM_NODES = 2
TILES_PER_NODE = (ROWS // TILE) * COL_TILES // NUM_NODES  # 8
SCALE = 1.5


@ttl.raw.ir
def scale_copy(src: ttl.raw.DFB, dst: ttl.raw.DFB, factor: ttl.raw.f32, n: ttl.raw.index):
    with raw.for_(n):
        raw.dfb_wait(src, 1)
        raw.dfb_reserve(dst, 1)
        raw.tile_regs_acquire()
        raw.copy_tile(src, 0, 0)  # DST[0] = front tile of src
        raw.mul_scalar(0, factor)  # DST[0] *= factor (SFPU)
        raw.tile_regs_commit()
        raw.tile_regs_wait()
        raw.pack_tile(0, dst, 0)  # back tile of dst = DST[0]
        raw.tile_regs_release()
        raw.dfb_push(dst, 1)
        raw.dfb_pop(src, 1)


@ttl.operation(grid=(NUM_NODES, 1))
def raw_scale(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    in_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    node_id = ttl.node(dims=1)

    # Compute: the raw function consumes in_dfb and produces out_dfb (computed effects).
    ttl.raw.call(scale_copy, in_dfb, out_dfb, SCALE, TILES_PER_NODE, kernel=ttl.KernelKind.COMPUTE)

    # Data movement: read a tile, write the scaled tile back.
    for i in range(TILES_PER_NODE):
        t = node_id * TILES_PER_NODE + i
        r = t // COL_TILES
        c = t % COL_TILES
        with in_dfb.reserve() as a_blk:
            ttl.copy(a[r : r + 1, c : c + 1], a_blk).wait()
        with out_dfb.wait() as o_blk:
            ttl.copy(o_blk, out[r : r + 1, c : c + 1]).wait()


def to_device(t: torch.Tensor, device) -> ttnn.Tensor:
    return ttnn.from_torch(
        t,
        dtype=ttnn.bfloat16,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=ttnn.DRAM_MEMORY_CONFIG,
    )


torch.manual_seed(0)
a_host = (4.0 * torch.rand(ROWS, COLS) - 2.0).to(torch.bfloat16)

device = ttnn.open_device(device_id=0)
try:
    a_t = to_device(a_host, device)
    out_t = to_device(torch.zeros(ROWS, COLS, dtype=torch.bfloat16), device)
    raw_scale(a_t, out_t)
    result = ttnn.to_torch(out_t).to(torch.float32)
    golden = (a_host.float() * SCALE).to(torch.bfloat16).float()
    if not torch.allclose(result, golden, rtol=1e-2, atol=1e-2):
        bad = (~torch.isclose(result, golden, rtol=1e-2, atol=1e-2)).sum().item()
        raise AssertionError(f"out = {SCALE} * a: {bad} of {golden.numel()} elements differ")
finally:
    ttnn.close_device(device)

print("PASS raw_scale_copy")
