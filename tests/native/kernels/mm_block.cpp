// Compute of the reuse + multicast matmul: a per_core_M x per_core_N output block stays in
// DST across all K blocks; each K block brings per_core_M x block_w tiles of A (c_0) and
// block_w x per_core_N tiles of B (c_1).  Compile-time args: num K blocks, block_w, M, N.
#include <cstdint>

#include "compute_kernel_api/matmul.h"

namespace NAMESPACE {
void MAIN {
    constexpr uint32_t num_blocks = get_compile_time_arg_val(0);
    constexpr uint32_t block_w = get_compile_time_arg_val(1);
    constexpr uint32_t M = get_compile_time_arg_val(2);
    constexpr uint32_t N = get_compile_time_arg_val(3);
    mm_init(tt::CBIndex::c_0, tt::CBIndex::c_1, tt::CBIndex::c_16);
    tile_regs_acquire();
    for (uint32_t kb = 0; kb < num_blocks; ++kb) {
        cb_wait_front(tt::CBIndex::c_0, M * block_w);
        cb_wait_front(tt::CBIndex::c_1, block_w * N);
        for (uint32_t r = 0; r < M; ++r)
            for (uint32_t c = 0; c < N; ++c)
                for (uint32_t k = 0; k < block_w; ++k)
                    matmul_tiles(tt::CBIndex::c_0, tt::CBIndex::c_1, r * block_w + k, k * N + c, r * N + c);
        cb_pop_front(tt::CBIndex::c_0, M * block_w);
        cb_pop_front(tt::CBIndex::c_1, block_w * N);
    }
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(tt::CBIndex::c_16, M * N);
    for (uint32_t t = 0; t < M * N; ++t) pack_tile(t, tt::CBIndex::c_16);
    cb_push_back(tt::CBIndex::c_16, M * N);
    tile_regs_release();
}
}  // namespace NAMESPACE
