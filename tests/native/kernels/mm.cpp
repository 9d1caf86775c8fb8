// Compute of the tile matmul: each output tile accumulates Kt tile products in DST.
// Runtime args: output tiles of this core, Kt.
#include <cstdint>

#include "compute_kernel_api/matmul.h"

namespace NAMESPACE {
void MAIN {
    const uint32_t count = get_arg_val<uint32_t>(0);
    const uint32_t Kt = get_arg_val<uint32_t>(1);
    mm_init(tt::CBIndex::c_0, tt::CBIndex::c_1, tt::CBIndex::c_16);
    for (uint32_t t = 0; t < count; ++t) {
        tile_regs_acquire();
        for (uint32_t k = 0; k < Kt; ++k) {
            cb_wait_front(tt::CBIndex::c_0, 1);
            cb_wait_front(tt::CBIndex::c_1, 1);
            matmul_tiles(tt::CBIndex::c_0, tt::CBIndex::c_1, 0, 0, 0);
            cb_pop_front(tt::CBIndex::c_0, 1);
            cb_pop_front(tt::CBIndex::c_1, 1);
        }
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(tt::CBIndex::c_16, 1);
        pack_tile(0, tt::CBIndex::c_16);
        cb_push_back(tt::CBIndex::c_16, 1);
        tile_regs_release();
    }
}
}  // namespace NAMESPACE
