// mm_compute.cpp -- the C++ twin of programs.mm_compute: K tile matmuls into one DST
// tile, exp on it, pack.
#include <cstdint>

#include "api/compute/cb_api.h"
#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/matmul.h"
#include "api/compute/pack.h"
#include "api/compute/reg_api.h"

namespace NAMESPACE {
void MAIN {
    uint32_t kt = get_arg_val<uint32_t>(0);
    mm_init(0, 1, 16);
    tile_regs_acquire();
    for (uint32_t k = 0; k < kt; ++k) {
        cb_wait_front(0, 1);
        cb_wait_front(1, 1);
        matmul_tiles(0, 1, 0, 0, 0);
        cb_pop_front(0, 1);
        cb_pop_front(1, 1);
    }
    exp_tile_init();
    exp_tile(0);
    tile_regs_commit();
    cb_reserve_back(16, 1);
    tile_regs_wait();
    pack_tile(0, 16);
    tile_regs_release();
    cb_push_back(16, 1);
}
}  // namespace NAMESPACE
