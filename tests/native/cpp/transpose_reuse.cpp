// transpose_reuse.cpp -- transpose_wh_tile, copy with a transposing unpacker,
// binary_dest_reuse_tiles (both reuse directions), transpose_wh_dest, format switches.
#include <cstdint>

#include "api/compute/eltwise_binary.h"
#include "api/compute/reconfig_data_format.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/transpose_wh.h"
#include "api/compute/transpose_wh_dest.h"

namespace NAMESPACE {
void MAIN {
    constexpr auto cb_x = tt::CBIndex::c_0;
    constexpr auto cb_y = tt::CBIndex::c_1;
    constexpr auto cb_out = tt::CBIndex::c_16;      // bfloat16
    constexpr auto cb_out_f32 = tt::CBIndex::c_17;  // float32

    compute_kernel_hw_startup(cb_x, cb_y, cb_out);
    cb_wait_front(cb_x, 1);
    cb_wait_front(cb_y, 1);
    tile_regs_acquire();
    transpose_wh_init(cb_x, cb_out);
    transpose_wh_tile(cb_x, 0, 0);                 // X^T
    copy_tile_to_dst_init_short(cb_x, 1);
    copy_tile(cb_x, 0, 1);                         // X^T (the unpacker transposes)
    copy_tile_to_dst_init_short(cb_x);
    copy_tile(cb_x, 0, 2);
    binary_dest_reuse_tiles_init<ELWSUB, EltwiseBinaryReuseDestType::DEST_TO_SRCA>(cb_y);
    binary_dest_reuse_tiles<ELWSUB, EltwiseBinaryReuseDestType::DEST_TO_SRCA>(cb_y, 0, 2);  // X - Y
    copy_tile_to_dst_init_short(cb_x);
    copy_tile(cb_x, 0, 3);
    binary_dest_reuse_tiles_init<EltwiseBinaryType::ELWSUB, EltwiseBinaryReuseDestType::DEST_TO_SRCB>(cb_y);
    binary_dest_reuse_tiles<EltwiseBinaryType::ELWSUB, EltwiseBinaryReuseDestType::DEST_TO_SRCB>(cb_y, 0, 3);
    transpose_wh_dest_init_short();
    transpose_wh_dest(3);                          // (Y - X)^T
    copy_tile_to_dst_init_short(cb_y);
    copy_tile(cb_y, 0, 4);
    binary_dest_reuse_tiles_init<ELWMUL, EltwiseBinaryReuseDestType::DEST_TO_SRCA>(cb_x);
    binary_dest_reuse_tiles<ELWMUL, EltwiseBinaryReuseDestType::DEST_TO_SRCA>(cb_x, 0, 4);  // Y * X
    tile_regs_commit();
    cb_reserve_back(cb_out, 5);
    tile_regs_wait();
    pack_tile_block(0, cb_out, 5);
    pack_reconfig_data_format(cb_out, cb_out_f32);
    cb_reserve_back(cb_out_f32, 1);
    pack_tile(2, cb_out_f32);
    tile_regs_release();
    cb_push_back(cb_out, 5);
    cb_push_back(cb_out_f32, 1);
    reconfig_data_format(cb_x, cb_y);
    reconfig_data_format_srca(cb_y, cb_x);
    cb_pop_front(cb_x, 1);
    cb_pop_front(cb_y, 1);
}
}  // namespace NAMESPACE
