// Compute of a binary add written as custom SFPU code (SFPI), the way tt-metal's
// custom_sfpi_add programming example is built: a face function in ckernel::sfpu, called
// through SFPU_BINARY_CALL_NO_TEMPLATE_ARGS on DST tiles 0 and 1.  Runtime arg 0: tiles.
#include <cstdint>

#include "api/compute/common.h"
#include "api/compute/compute_kernel_api.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/eltwise_unary/eltwise_unary.h"
#include "api/compute/tile_move_copy.h"

#ifdef TRISC_MATH
#include "sfpi/ckernel_sfpu_tw_add.h"
#endif

inline void tw_add_tile(uint32_t in0, uint32_t in1, uint32_t out) {
    MATH(SFPU_BINARY_CALL_NO_TEMPLATE_ARGS(DST_SYNC_MODE, DST_ACCUM_MODE, tw_add_tile_face, in0, in1, out,
                                           VectorMode::RC));
}

void kernel_main() {
    const uint32_t n = get_arg_val<uint32_t>(0);
    constexpr auto cb_a = tt::CBIndex::c_0, cb_b = tt::CBIndex::c_1, cb_out = tt::CBIndex::c_16;
    init_sfpu(cb_a, cb_out);
    for (uint32_t i = 0; i < n; ++i) {
        cb_wait_front(cb_a, 1);
        cb_wait_front(cb_b, 1);
        tile_regs_acquire();
        copy_tile(cb_a, 0, 0);
        copy_tile(cb_b, 0, 1);
        tw_add_tile(0, 1, 0);
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(cb_out, 1);
        pack_tile(0, cb_out);
        cb_push_back(cb_out, 1);
        cb_pop_front(cb_a, 1);
        cb_pop_front(cb_b, 1);
        tile_regs_release();
    }
}
