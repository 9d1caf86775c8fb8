// matmul_block.cpp -- blocked matmul with packer L1 accumulation over K blocks
// (the shape of tt-metal's bmm_large_block_zm with PACKER_L1_ACC).
// Compile-time args: rt (out rows in tiles), ct (out cols), kt (K tiles per block),
// number of K blocks, transpose flag (B tiles arrive transposed).
#include <cstdint>

#include "api/compute/matmul.h"
#include "api/compute/pack.h"
#include "api/compute/tile_move_copy.h"

namespace NAMESPACE {
void MAIN {
    constexpr uint32_t rt = get_compile_time_arg_val(0);
    constexpr uint32_t ct = get_compile_time_arg_val(1);
    constexpr uint32_t kt = get_compile_time_arg_val(2);
    constexpr uint32_t k_blocks = get_compile_time_arg_val(3);
    constexpr uint32_t transpose = get_compile_time_arg_val(4);
    constexpr auto cb_a = tt::CBIndex::c_0;
    constexpr auto cb_b = tt::CBIndex::c_1;
    constexpr auto cb_out = tt::CBIndex::c_16;

    mm_block_init(cb_a, cb_b, cb_out, transpose, ct, rt, kt);
    cb_reserve_back(cb_out, rt * ct);
    for (uint32_t kb = 0; kb < k_blocks; ++kb) {
        cb_wait_front(cb_a, rt * kt);
        cb_wait_front(cb_b, kt * ct);
        tile_regs_acquire();
        uint32_t in0_index = 0;
        uint32_t in1_index = 0;
        for (uint32_t k = 0; k < kt; ++k) {
            matmul_block(cb_a, cb_b, in0_index, in1_index, 0, transpose, ct, rt, kt);
            in0_index += 1;   // next column of the A block
            in1_index += ct;  // next row of the B block
        }
        tile_regs_commit();
        cb_pop_front(cb_a, rt * kt);
        cb_pop_front(cb_b, kt * ct);
        tile_regs_wait();
        pack_reconfig_l1_acc(kb == 0 ? 0 : 1);
        if (kb == 0) {
            pack_tile_block(0, cb_out, rt * ct);
        } else {
            for (uint32_t i = 0; i < rt * ct; ++i) pack_tile<true>(i, cb_out, i);
        }
        tile_regs_release();
    }
    pack_reconfig_l1_acc(0);
    cb_push_back(cb_out, rt * ct);
}
}  // namespace NAMESPACE
