// tilize_untilize.cpp -- tt-metal style compute kernel: tilize_block, untilize_block and
// pack_untilize_block on one core (compile-time arg 0: the block width in tiles, even).
#include <cstdint>

#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/pack_untilize.h"
#include "api/compute/tilize.h"
#include "compute_kernel_api/untilize.h"

void kernel_main() {
    constexpr uint32_t block = get_compile_time_arg_val(0);
    constexpr auto cb_rm_in = tt::CBIndex::c_0;     // row-major block: 32 rows x block*32
    constexpr auto cb_tiles_in = tt::CBIndex::c_1;  // block tiles
    constexpr auto cb_chunks = tt::CBIndex::c_2;    // 2x2-tile chunks of a 64 x block*32 matrix
    constexpr auto cb_tiles_out = tt::CBIndex::c_16;
    constexpr auto cb_rm_out = tt::CBIndex::c_17;
    constexpr auto cb_rm_wide = tt::CBIndex::c_18;

    compute_kernel_hw_startup(cb_rm_in, cb_tiles_out);
    tilize_init(cb_rm_in, block, cb_tiles_out);
    cb_wait_front(cb_rm_in, block);
    cb_reserve_back(cb_tiles_out, block);
    tilize_block(cb_rm_in, block, cb_tiles_out);
    cb_push_back(cb_tiles_out, block);
    cb_pop_front(cb_rm_in, block);
    tilize_uninit(cb_rm_in, cb_tiles_out);

    untilize_init(cb_tiles_in);
    cb_wait_front(cb_tiles_in, block);
    cb_reserve_back(cb_rm_out, block);
    untilize_block<2>(cb_tiles_in, block, cb_rm_out);
    cb_push_back(cb_rm_out, block);
    cb_pop_front(cb_tiles_in, block);
    untilize_uninit(cb_tiles_in);

    pack_untilize_init<2, block>(cb_chunks, cb_rm_wide);
    cb_reserve_back(cb_rm_wide, 2 * block);
    for (uint32_t b = 0; b < block / 2; ++b) {
        cb_wait_front(cb_chunks, 4);
        pack_untilize_block<2, block>(cb_chunks, 2, cb_rm_wide, b);
        cb_pop_front(cb_chunks, 4);
    }
    cb_push_back(cb_rm_wide, 2 * block);
    pack_untilize_uninit(cb_rm_wide);
}
