// tile_math.hpp -- a compute-kernel external function using the tt-metal compute API:
// out = relu(x) + exp(0) ... per tile: copy x into DST, apply an SFPU op, pack into out.
#pragma once

#include <cstdint>

#include "compute_kernel_api/eltwise_unary/eltwise_unary.h"
#include "compute_kernel_api/eltwise_unary/exp.h"
#include "compute_kernel_api/tile_move_copy.h"

template <typename In, typename Out>
inline void exp_tiles(uint32_t num_blocks) {
    init_sfpu(In::index, Out::index);
    for (uint32_t b = 0; b < num_blocks; ++b) {
        cb_wait_front(In::index, In::pages_per_block);
        cb_reserve_back(Out::index, Out::pages_per_block);
        for (uint32_t t = 0; t < In::pages_per_block; ++t) {
            tile_regs_acquire();
            copy_tile_init(In::index);
            copy_tile(In::index, t, 0);
            exp_tile_init();
            exp_tile<false>(0);
            tile_regs_commit();
            tile_regs_wait();
            pack_tile(0, Out::index);
            tile_regs_release();
        }
        cb_pop_front(In::index, In::pages_per_block);
        cb_push_back(Out::index, Out::pages_per_block);
    }
}

// a + b per tile with the FPU (binary op API), one block of each.
template <typename A, typename B, typename Out>
inline void add_block() {
    binary_op_init_common(A::index, B::index, Out::index);
    add_tiles_init(A::index, B::index);
    cb_wait_front(A::index, A::pages_per_block);
    cb_wait_front(B::index, B::pages_per_block);
    cb_reserve_back(Out::index, Out::pages_per_block);
    for (uint32_t t = 0; t < A::pages_per_block; ++t) {
        tile_regs_acquire();
        add_tiles(A::index, B::index, t, t, 0);
        tile_regs_commit();
        tile_regs_wait();
        pack_tile(0, Out::index);
        tile_regs_release();
    }
    cb_push_back(Out::index, Out::pages_per_block);
    cb_pop_front(A::index, A::pages_per_block);
    cb_pop_front(B::index, B::pages_per_block);
}
