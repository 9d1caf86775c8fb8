// Compute of a binary eltwise op: c_16 = c_0 (op) c_1, tile by tile.  ELTWISE_OP is a define
// (add_tiles, sub_tiles or mul_tiles); runtime arg 0 is the tile count.
#include <cstdint>

#include "api/compute/eltwise_binary.h"

#ifndef ELTWISE_OP
#define ELTWISE_OP add_tiles
#endif

void kernel_main() {
    const uint32_t count = get_arg_val<uint32_t>(0);
    constexpr auto cb_a = tt::CBIndex::c_0;
    constexpr auto cb_b = tt::CBIndex::c_1;
    constexpr auto cb_out = tt::CBIndex::c_16;

    binary_op_init_common(cb_a, cb_b, cb_out);
    add_tiles_init(cb_a, cb_b);
    for (uint32_t i = 0; i < count; ++i) {
        cb_wait_front(cb_a, 1);
        cb_wait_front(cb_b, 1);
        tile_regs_acquire();
        ELTWISE_OP(cb_a, cb_b, 0, 0, 0);
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(cb_out, 1);
        pack_tile(0, cb_out);
        cb_push_back(cb_out, 1);
        tile_regs_release();
        cb_pop_front(cb_a, 1);
        cb_pop_front(cb_b, 1);
    }
}
