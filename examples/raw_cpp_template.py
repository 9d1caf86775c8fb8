"""raw_cpp_template -- an inline C++ function with a template argument (``ttl.raw.cpp``).

What it demonstrates
--------------------
``scale_tiles`` is C++ written inline in this file against the tt-metal compute API:
``template <uint32_t N> scale_tiles(src, dst, factor, blocks)`` waits for ``N`` tiles
of ``src``, reserves ``N`` tiles of ``dst``, copies each tile into DST, multiplies it
by ``factor`` (``mul_unary_tile``, the float passed as its bits), packs it into
``dst``, pushes and pops -- ``blocks`` times -- and returns the number of tiles
it scaled.

``ttl.raw.cpp(...)`` declares it with a typed signature
``(ttl.raw.DFB, ttl.raw.DFB, ttl.raw.f32, ttl.raw.u32)``, ``result=ttl.raw.i32``,
``template_args=[TILES]`` (``N``), and its DFB protocol as a function of the
parameters (``effects=lambda src, dst, factor, blocks: [...]``), evaluated against
each call's arguments: ``blocks`` is the module constant ``BLOCKS_PER_NODE``, so the
declared contract is a static sequence of ``4 x (wait, reserve, push, pop)``.

``scale(a, out)`` is a *unified* operation on grid (2, 1): the reads and writes are
placed on the data-movement kernel, the raw C++ call on the compute kernel
(``kernel=ttl.KernelKind.COMPUTE``).  Each node scales its half of the columns:
``out = a * FACTOR``.  The call is the same external call ``ttl.call_extern_func``
makes (same glue, same build cache, same contract check): under ``--engine python``
the C++ is built for the host and runs against the kernel-API emulation with its
DFB actions checked against ``effects``; under ``--engine native`` and
``tilewright emit`` it is part of the compiled compute kernel (``scale_tiles<4>(...)``,
the inline source emitted as a content-addressed header next to the kernel).

Tensors: a and out are 64 x 512 bf16 (2 x 16 tiles).

What a correct implementation must do
-------------------------------------
Accept the declaration and the call, run the C++ on both nodes, and give
``out == bf16(a * 1.5)`` exactly (the scale is exact in float32 and rounds once).
On success the program prints exactly one line::

    PASS raw_cpp_template
"""

import torch

import ttl
import ttnn

TILE = 32
ROWS, COLS = 64, 512
TILES = 4  # tiles per block: the template argument N
NODES = 2
BLOCKS_PER_NODE = (ROWS // TILE) * (COLS // TILE) // TILES // NODES  # 4
COL_BLOCKS = COLS // TILE // TILES  # 4 blocks per tile row
FACTOR = 1.5

SCALE_TILES = """
#include <cstdint>
#include "compute_kernel_api/eltwise_unary/binop_with_scalar.h"
#include "compute_kernel_api/eltwise_unary/eltwise_unary.h"
#include "compute_kernel_api/tile_move_copy.h"

template <uint32_t N>
inline int32_t scale_tiles(uint32_t src, uint32_t dst, float factor, uint32_t blocks) {
    init_sfpu(src, dst);
    const uint32_t bits = __builtin_bit_cast(uint32_t, factor);
    for (uint32_t b = 0; b < blocks; ++b) {
        cb_wait_front(src, N);
        cb_reserve_back(dst, N);
        for (uint32_t t = 0; t < N; ++t) {
            tile_regs_acquire();
            copy_tile_init(src);
            copy_tile(src, t, 0);
            binop_with_scalar_tile_init();
            mul_unary_tile(0, bits);
            tile_regs_commit();
            tile_regs_wait();
            pack_tile(0, dst);
            tile_regs_release();
        }
        cb_push_back(dst, N);
        cb_pop_front(src, N);
    }
    return static_cast<int32_t>(blocks * N);
}
"""

scale_tiles = ttl.raw.cpp(
    SCALE_TILES,
    entry="scale_tiles",
    signature=(ttl.raw.DFB, ttl.raw.DFB, ttl.raw.f32, ttl.raw.u32),
    result=ttl.raw.i32,
    template_args=[TILES],
    effects=lambda src, dst, factor, blocks: [
        ttl.DFBEffect.repeat(
            blocks,
            [
                ttl.DFBEffect.wait(src, tiles=TILES),
                ttl.DFBEffect.reserve(dst, tiles=TILES),
                ttl.DFBEffect.push(dst, tiles=TILES),
                ttl.DFBEffect.pop(src, tiles=TILES),
            ],
        )
    ],
)


@ttl.operation(grid=(NODES, 1))
def scale(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    in_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, TILES), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, TILES), block_count=2)
    first = ttl.node(dims=1) * BLOCKS_PER_NODE

    for i in range(BLOCKS_PER_NODE):
        r = (first + i) // COL_BLOCKS
        c = ((first + i) % COL_BLOCKS) * TILES
        with in_dfb.reserve() as blk:
            ttl.copy(a[r : r + 1, c : c + TILES], blk).wait()

    scale_tiles(in_dfb, out_dfb, FACTOR, BLOCKS_PER_NODE, kernel=ttl.KernelKind.COMPUTE)

    for i in range(BLOCKS_PER_NODE):
        r = (first + i) // COL_BLOCKS
        c = ((first + i) % COL_BLOCKS) * TILES
        with out_dfb.wait() as blk:
            ttl.copy(blk, out[r : r + 1, c : c + TILES]).wait()


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
    scale(a_t, out_t)
    got = ttnn.to_torch(out_t).to(torch.bfloat16)
    want = (a_host.float() * FACTOR).to(torch.bfloat16)
    if not torch.equal(got, want):
        err = (got.float() - want.float()).abs().max().item()
        raise AssertionError(f"raw_cpp_template: out != bf16(a * {FACTOR}) (max abs err {err:.4g})")
finally:
    ttnn.close_device(device)

print("PASS raw_cpp_template")
