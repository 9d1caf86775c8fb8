// api/compute/compute_kernel_api.h -- tt-metal's compute kernel API, emulated by Tilewright.
//
// The three TRISCs of a compute kernel run as one thread (the API pairs are
// self-synchronising); every call goes to tilewright.device.kernel_api.compute through
// tilewright/bridge.h, so DST rounding, unpack/pack formats and sequential packing are
// exactly those of Python compute kernels:
//
//   DST handshake      tile_regs_acquire/commit/wait/release, acquire_dst/release_dst
//   inits              compute_kernel_hw_startup, binary_op_init_common, unary_op_init_common,
//                      init_sfpu, copy_tile_init, copy_tile_to_dst_init_short(cb, transpose),
//                      *_tiles_init, mm_init/matmul_init, mm_block_init/matmul_block_init,
//                      reduce_init, binary_dest_reuse_tiles_init
//   format switches    reconfig_data_format(_srca/_srcb), pack_reconfig_data_format (checks
//                      only: every unpack/pack uses the format of the CB it touches)
//   unpack / FPU       copy_tile, add/sub/mul_tiles, *_tiles_bcast_rows/cols/scalar,
//                      matmul_tiles, matmul_block, reduce_tile, binary_dest_reuse_tiles
//   layout             tilize_*/tilize_block, untilize_*/untilize_block, pack_untilize_*,
//                      transpose_wh_tile, transpose_wh_dest (tilewright/compute_layout.h)
//   pack               pack_tile<out_of_order>, pack_tile_block, pack_reconfig_l1_acc
//   SFPU (in DST)      see api/compute/eltwise_unary/sfpu.h (NAME_tile with NAME_tile_init)
//   circular buffers   cb_wait_front, cb_pop_front, cb_reserve_back, cb_push_back,
//                      get_tile_size, get_tile_hw, get_tile_num_faces, get_dataformat
//
// Template flags (approximation modes, iterations, ...) are accepted and ignored: the
// emulation computes exactly in float32 and rounds into DST's format.
#pragma once

#include <cstdint>

#include "tilewright/cb.h"
#include "tilewright/common.h"

#ifndef NAMESPACE
#define NAMESPACE tw_compute_kernel
#endif
#ifndef MAIN
#define MAIN kernel_main()
#endif

namespace ckernel {

enum class VectorMode : int { None = 0, R = 1, C = 2, RC = 4, RC_custom = 6, Invalid = 0xFF };
enum PoolType : int { SUM = 0, AVG = 1, MAX = 2 };
enum ReduceDim : int { REDUCE_ROW = 0, REDUCE_COL = 1, REDUCE_SCALAR = 2 };
enum class BroadcastType : int { NONE = 0, COL = 1, ROW = 2, SCALAR = 3 };
// Unscoped, as in tt-metal: both ELWADD and EltwiseBinaryType::ELWADD are valid spellings.
enum EltwiseBinaryType : int { ELWMUL = 0, ELWDIV = 1, ELWADD = 2, ELWSUB = 3, ELWMAXMIN = 4 };
enum class EltwiseBinaryReuseDestType : int { NONE = 0, DEST_TO_SRCA = 1, DEST_TO_SRCB = 2 };

namespace detail {
template <typename... A>
inline void init(A... args) {
    tw::call("compute_kernel_hw_startup", args...);
}
}  // namespace detail

// -- inits ---------------------------------------------------------------------------------

inline void compute_kernel_hw_startup(uint32_t icb0, uint32_t icb1, uint32_t ocb) { detail::init(icb0, icb1, ocb); }
inline void compute_kernel_hw_startup(uint32_t icb, uint32_t ocb) { detail::init(icb, ocb); }
inline void binary_op_init_common(uint32_t icb0, uint32_t icb1, uint32_t ocb) { detail::init(icb0, icb1, ocb); }
inline void unary_op_init_common(uint32_t icb, uint32_t ocb) { detail::init(icb, ocb); }
inline void init_sfpu(uint32_t icb, uint32_t ocb) { detail::init(icb, ocb); }
inline void copy_tile_init(uint32_t cb) { detail::init(cb); }
/** Datacopy init; with `transpose` the unpacker transposes every tile copy_tile moves. */
inline void copy_tile_to_dst_init_short(uint32_t cb, uint32_t transpose = 0) {
    tw::call("copy_tile_to_dst_init_short", cb, transpose);
}
inline void copy_tile_to_dst_init_short_with_dt(uint32_t old_cb, uint32_t new_cb, uint32_t transpose = 0) {
    tw::call("reconfig_data_format_srca", old_cb, new_cb);
    copy_tile_to_dst_init_short(new_cb, transpose);
}
inline void add_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false) { detail::init(icb0, icb1, acc_to_dest); }
inline void sub_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false) { detail::init(icb0, icb1, acc_to_dest); }
inline void mul_tiles_init(uint32_t icb0, uint32_t icb1) { detail::init(icb0, icb1); }
inline void mm_init(uint32_t in0, uint32_t in1, uint32_t out, uint32_t transpose = 0) {
    tw::call("mm_init", in0, in1, out, transpose);
}
inline void mm_init_short(uint32_t in0, uint32_t in1, uint32_t transpose = 0) { tw::call("mm_init", in0, in1, 16, transpose); }
inline void matmul_init(uint32_t in0, uint32_t in1, uint32_t transpose = 0) { tw::call("mm_init", in0, in1, 16, transpose); }

/** Configure matmul_block for rt_dim x ct_dim output tiles (kt_dim: A's block width). */
inline void matmul_block_init(uint32_t in0, uint32_t in1, uint32_t transpose = 0, uint32_t ct_dim = 1,
                              uint32_t rt_dim = 1, uint32_t kt_dim = 1) {
    tw::call("matmul_block_init", in0, in1, transpose, ct_dim, rt_dim, kt_dim);
}
inline void mm_block_init(uint32_t in0, uint32_t in1, uint32_t out, uint32_t transpose = 0, uint32_t ct_dim = 1,
                          uint32_t rt_dim = 1, uint32_t kt_dim = 1) {
    (void)out;
    matmul_block_init(in0, in1, transpose, ct_dim, rt_dim, kt_dim);
}
inline void mm_block_init_short(uint32_t in0, uint32_t in1, uint32_t transpose = 0, uint32_t ct_dim = 1,
                                uint32_t rt_dim = 1, uint32_t kt_dim = 1) {
    matmul_block_init(in0, in1, transpose, ct_dim, rt_dim, kt_dim);
}
inline void mm_block_init_short_with_dt(uint32_t in0, uint32_t in1, uint32_t old_in1, uint32_t transpose = 0,
                                        uint32_t ct_dim = 1, uint32_t rt_dim = 1, uint32_t kt_dim = 1) {
    tw::call("reconfig_data_format_srca", old_in1, in1);
    matmul_block_init(in0, in1, transpose, ct_dim, rt_dim, kt_dim);
}

// -- format switches (checks only: every unpack / pack uses the format of its CB) ------------

template <auto... flags>
inline void reconfig_data_format(uint32_t srca_new, uint32_t srcb_new) {
    tw::call("reconfig_data_format", srca_new, srcb_new);
}
template <auto... flags>
inline void reconfig_data_format(uint32_t srca_old, uint32_t srca_new, uint32_t srcb_old, uint32_t srcb_new) {
    tw::call("reconfig_data_format", srca_old, srca_new, srcb_old, srcb_new);
}
template <auto... flags>
inline void reconfig_data_format_srca(uint32_t srca_new) { tw::call("reconfig_data_format_srca", srca_new); }
template <auto... flags>
inline void reconfig_data_format_srca(uint32_t srca_old, uint32_t srca_new) {
    tw::call("reconfig_data_format_srca", srca_old, srca_new);
}
template <auto... flags>
inline void reconfig_data_format_srcb(uint32_t srcb_new) { tw::call("reconfig_data_format_srcb", srcb_new); }
template <auto... flags>
inline void reconfig_data_format_srcb(uint32_t srcb_old, uint32_t srcb_new) {
    tw::call("reconfig_data_format_srcb", srcb_old, srcb_new);
}
template <auto... flags>
inline void pack_reconfig_data_format(uint32_t ocb) { tw::call("pack_reconfig_data_format", ocb); }
template <auto... flags>
inline void pack_reconfig_data_format(uint32_t old_ocb, uint32_t ocb) {
    tw::call("pack_reconfig_data_format", old_ocb, ocb);
}

/** L1 accumulation: 1 = every pack does CB += DST, 0 = packs overwrite (other values: error). */
inline void pack_reconfig_l1_acc(uint32_t l1_acc_en) { tw::call("pack_reconfig_l1_acc", l1_acc_en); }

// -- DST handshake ---------------------------------------------------------------------------

inline void tile_regs_acquire() { tw::call("tile_regs_acquire"); }
inline void tile_regs_commit() { tw::call("tile_regs_commit"); }
inline void tile_regs_wait() { tw::call("tile_regs_wait"); }
inline void tile_regs_release() { tw::call("tile_regs_release"); }
inline void acquire_dst() { tw::call("acquire_dst"); }
inline void release_dst() { tw::call("release_dst"); }

// -- unpack / FPU ------------------------------------------------------------------------------

/** DST[idst] = CB[itile] (tile index relative to the CB's front). */
inline void copy_tile(uint32_t icb, uint32_t itile, uint32_t idst) { tw::call("copy_tile", icb, itile, idst); }

inline void add_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    tw::call("add_tiles", icb0, icb1, itile0, itile1, idst);
}
inline void sub_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    tw::call("sub_tiles", icb0, icb1, itile0, itile1, idst);
}
inline void mul_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    tw::call("mul_tiles", icb0, icb1, itile0, itile1, idst);
}

/** DST[idst] += A[in0_tile] @ B[in1_tile] (B transposed if `transpose`). */
inline void matmul_tiles(uint32_t in0_cb, uint32_t in1_cb, uint32_t in0_tile, uint32_t in1_tile, uint32_t idst,
                         uint32_t transpose = 0) {
    tw::call("matmul_tiles", in0_cb, in1_cb, in0_tile, in1_tile, idst, transpose);
}

/** rt_dim x ct_dim output tiles: DST[idst + r*ct_dim + c] += A[in0_tile + r*kt_dim] @ B[in1_tile + c]. */
inline void matmul_block(uint32_t in0_cb, uint32_t in1_cb, uint32_t in0_tile, uint32_t in1_tile, uint32_t idst,
                         uint32_t transpose, uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim) {
    tw::call("matmul_block", in0_cb, in1_cb, in0_tile, in1_tile, idst, transpose, ct_dim, rt_dim, kt_dim);
}

/** Init for binary_dest_reuse_tiles. */
template <EltwiseBinaryType eltwise_binary_type = ELWADD,
          EltwiseBinaryReuseDestType binary_reuse_dest = EltwiseBinaryReuseDestType::NONE, auto... flags>
inline void binary_dest_reuse_tiles_init(uint32_t icb) {
    tw::call("binary_dest_reuse_tiles_init", icb, static_cast<int>(eltwise_binary_type),
             static_cast<int>(binary_reuse_dest));
}

/** DST[idst] = DST op CB[itile] (DEST_TO_SRCA) or CB[itile] op DST (DEST_TO_SRCB). */
template <EltwiseBinaryType eltwise_binary_type = ELWADD,
          EltwiseBinaryReuseDestType binary_reuse_dest = EltwiseBinaryReuseDestType::NONE, auto... flags>
inline void binary_dest_reuse_tiles(uint32_t in_cb_id, uint32_t in_tile_index, uint32_t dst_tile_index) {
    tw::call("binary_dest_reuse_tiles", in_cb_id, in_tile_index, dst_tile_index,
             static_cast<int>(eltwise_binary_type), static_cast<int>(binary_reuse_dest));
}

// -- pack -----------------------------------------------------------------------------------

/** Pack DST[idst] into the output CB (sequential slots unless out_of_order_output). */
template <bool out_of_order_output = false>
inline void pack_tile(uint32_t idst, uint32_t ocb, uint32_t output_tile_index = 0) {
    tw::call("pack_tile", idst, ocb, output_tile_index, out_of_order_output);
}

/** Pack DST[idst .. idst + ntiles - 1] into the next ntiles slots of the output CB. */
inline void pack_tile_block(uint32_t idst, uint32_t ocb, uint32_t ntiles) {
    tw::call("pack_tile_block", idst, ocb, ntiles);
}

}  // namespace ckernel

using namespace ckernel;

#include "api/compute/bcast.h"
#include "api/compute/reduce.h"
#include "api/compute/eltwise_unary/sfpu.h"
#include "tilewright/compute_layout.h"
