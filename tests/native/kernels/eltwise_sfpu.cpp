// Compute of a unary SFPU op as ttnn generates it: SFPU_OP_CHAIN_0 is a define naming the
// init and the op on DST tile 0 (e.g. "exp_tile_init(); exp_tile(0);"), and
// SFPU_OP_*_INCLUDE defines select the headers.  Compile-time arg 0: tiles per core.
#include <cstdint>

#include "compute_kernel_api/common.h"
#include "compute_kernel_api/tile_move_copy.h"
#include "compute_kernel_api/eltwise_unary/eltwise_unary.h"
#include "compute_kernel_api/eltwise_unary/sfpu_split_includes.h"

namespace NAMESPACE {
void MAIN {
    constexpr uint32_t per_core = get_compile_time_arg_val(0);
    init_sfpu(tt::CBIndex::c_0, tt::CBIndex::c_16);
    for (uint32_t i = 0; i < per_core; ++i) {
        cb_reserve_back(tt::CBIndex::c_16, 1);
        tile_regs_acquire();
        cb_wait_front(tt::CBIndex::c_0, 1);
        copy_tile(tt::CBIndex::c_0, 0, 0);
#ifdef SFPU_OP_CHAIN_0
        SFPU_OP_CHAIN_0
#endif
        tile_regs_commit();
        tile_regs_wait();
        pack_tile(0, tt::CBIndex::c_16);
        cb_pop_front(tt::CBIndex::c_0, 1);
        tile_regs_release();
        cb_push_back(tt::CBIndex::c_16, 1);
    }
}
}  // namespace NAMESPACE
