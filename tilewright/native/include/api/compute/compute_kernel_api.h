// api/compute/compute_kernel_api.h -- tt-metal's compute kernel API on the native runtime.
//
// The three TRISCs of a compute kernel run as one thread (the API pairs are
// self-synchronising).  Unpack -> DST -> math / SFPU -> pack runs in the native runtime
// with exactly the rounding of Python compute kernels (DST bf16 unless fp32_dest_acc_en;
// formats bit-identical to tilewright.device.formats):
//
//   DST handshake      tile_regs_acquire/commit/wait/release, acquire_dst/release_dst
//   inits              compute_kernel_hw_startup, binary_op_init_common, unary_op_init_common,
//                      init_sfpu, copy_init, copy_tile_init, copy_tile_to_dst_init_short(cb, transpose),
//                      *_tiles_init, mm_init/matmul_init, mm_block_init/matmul_block_init,
//                      reduce_init, binary_dest_reuse_tiles_init
//   format switches    reconfig_data_format(_srca/_srcb), pack_reconfig_data_format (checks
//                      only: every unpack/pack uses the format of the CB it touches)
//   unpack / FPU       copy_tile, add/sub/mul_tiles, *_tiles_bcast_rows/cols/scalar,
//                      matmul_tiles, matmul_tile, matmul_block, reduce_tile, binary_dest_reuse_tiles
//   layout             tilize_*/tilize_block, fast_tilize_*, untilize_*/untilize_block,
//                      pack_untilize_*, pack_rows, transpose_wh_tile, transpose_wh_dest
//   pack               pack_tile<out_of_order>, pack_tile_block, pack_reconfig_l1_acc
//   SFPU (in DST)      see api/compute/eltwise_unary/sfpu.h (NAME_tile with NAME_tile_init)
//   user SFPI code     sfpi.h (vFloat, dst_reg, v_if, ...) run through the SFPU call wrappers
//                      and SFPU_*_CALL macros of tilewright/sfpi_glue.h
//   circular buffers   cb_wait_front, cb_pop_front, cb_reserve_back, cb_push_back,
//                      get_tile_size, get_tile_hw, get_tile_num_faces, get_dataformat
//
// Template flags (approximation modes, iterations, ...) are accepted; the emulation
// computes in float32 and rounds into DST's format.
#pragma once

#include <cstdint>

#include "tilewright/cb.h"
#include "tilewright/cb_object.h"
#include "tilewright/common.h"

#ifndef NAMESPACE
#define NAMESPACE tw_compute_kernel
#endif
#ifndef MAIN
#define MAIN kernel_main()
#endif
// The three TRISCs are one build here; user SFPU code is written under `#ifdef TRISC_MATH`.
#if !defined(TRISC_UNPACK) && !defined(TRISC_MATH) && !defined(TRISC_PACK)
#define TRISC_MATH 1
#endif
// Which TRISC a statement belongs to: all three are one thread here.
#ifndef UNPACK
#define UNPACK(x) x
#define MATH(x) x
#define PACK(x) x
#endif
#ifndef APPROX
#define APPROX false
#endif
#ifndef DST_ACCUM_MODE
#define DST_ACCUM_MODE false
#endif

namespace ckernel {

enum class VectorMode : int { None = 0, R = 1, C = 2, RC = 4, RC_custom = 6, Invalid = 0xFF };
enum PoolType : int { SUM = 0, AVG = 1, MAX = 2 };
enum ReduceDim : int { REDUCE_ROW = 0, REDUCE_COL = 1, REDUCE_SCALAR = 2 };
enum class BroadcastType : int { NONE = 0, COL = 1, ROW = 2, SCALAR = 3 };
// Unscoped, as in tt-metal: both ELWADD and EltwiseBinaryType::ELWADD are valid spellings.
enum EltwiseBinaryType : int { ELWMUL = 0, ELWDIV = 1, ELWADD = 2, ELWSUB = 3, ELWMAXMIN = 4 };
enum class EltwiseBinaryReuseDestType : int { NONE = 0, DEST_TO_SRCA = 1, DEST_TO_SRCB = 2 };
enum class MathFidelity : int { LoFi = 0, HiFi2 = 2, HiFi3 = 3, HiFi4 = 4 };

namespace detail {
/** An unpacker / math / packer (re)configuration: checks the CBs it names. */
inline void init(tw::Loc loc) { twrt_init(0, 0, 0, 0, 0, 0, loc); }
template <typename... A>
inline void init_cbs(tw::Loc loc, A... cbs) {
    twrt_init(0, 0, 0, 0, 0, 0, loc);
    (twrt_check_cb(static_cast<int32_t>(cbs), loc), ...);
}
}  // namespace detail

// -- inits ---------------------------------------------------------------------------------

inline void compute_kernel_hw_startup(uint32_t icb0, uint32_t icb1, uint32_t ocb, TW_LOC) { detail::init(loc); }
inline void compute_kernel_hw_startup(uint32_t icb, uint32_t ocb, TW_LOC) { detail::init(loc); }
inline void binary_op_init_common(uint32_t icb0, uint32_t icb1, uint32_t ocb, TW_LOC) { detail::init(loc); }
inline void unary_op_init_common(uint32_t icb, uint32_t ocb, TW_LOC) { detail::init(loc); }
inline void init_sfpu(uint32_t icb, uint32_t ocb, TW_LOC) { detail::init(loc); }
inline void copy_tile_init(uint32_t cb, TW_LOC) { detail::init(loc); }
inline void copy_init(uint32_t cb = 0, TW_LOC) { detail::init(loc); }
/** Datacopy init; with `transpose` the unpacker transposes every tile copy_tile moves. */
inline void copy_tile_to_dst_init_short(uint32_t cb, uint32_t transpose = 0, TW_LOC) {
    twrt_init(1, int32_t(cb), int32_t(transpose), 0, 0, 0, loc);
}
inline void copy_tile_to_dst_init_short_with_dt(uint32_t old_cb, uint32_t new_cb, uint32_t transpose = 0, TW_LOC) {
    twrt_check_cb(int32_t(old_cb), loc);
    copy_tile_to_dst_init_short(new_cb, transpose, loc);
}
inline void add_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false, TW_LOC) { detail::init(loc); }
inline void sub_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false, TW_LOC) { detail::init(loc); }
inline void mul_tiles_init(uint32_t icb0, uint32_t icb1, TW_LOC) { detail::init(loc); }
inline void add_tiles_init_nof(TW_LOC) { detail::init(loc); }
inline void sub_tiles_init_nof(TW_LOC) { detail::init(loc); }
inline void mul_tiles_init_f(TW_LOC) { detail::init(loc); }
template <EltwiseBinaryType op = ELWADD, auto... flags>
inline void binary_op_specific_init(uint32_t icb0 = 0, uint32_t icb1 = 1, TW_LOC) { detail::init(loc); }
inline void mm_init(uint32_t in0_cb, uint32_t in1_cb, uint32_t out_cb = 16, uint32_t transpose = 0, TW_LOC) {
    twrt_init(2, int32_t(in0_cb), int32_t(in1_cb), int32_t(transpose), 0, 0, loc);
}
inline void mm_init_short(uint32_t in0_cb, uint32_t in1_cb, uint32_t transpose = 0, TW_LOC) {
    twrt_init(2, int32_t(in0_cb), int32_t(in1_cb), int32_t(transpose), 0, 0, loc);
}
inline void mm_init_short_with_dt(uint32_t in0_cb, uint32_t in1_cb, uint32_t old_in1_cb, uint32_t transpose = 0,
                                  TW_LOC) {
    twrt_init(2, int32_t(in0_cb), int32_t(in1_cb), int32_t(transpose), 0, 0, loc);
}
inline void matmul_init(uint32_t in0_cb, uint32_t in1_cb, uint32_t transpose = 0, TW_LOC) {
    twrt_init(2, int32_t(in0_cb), int32_t(in1_cb), int32_t(transpose), 0, 0, loc);
}

/** Configure matmul_block for rt_dim x ct_dim output tiles (kt_dim: A's block width). */
inline void matmul_block_init(uint32_t in0_cb, uint32_t in1_cb, uint32_t transpose = 0, uint32_t ct_dim = 1,
                              uint32_t rt_dim = 1, uint32_t kt_dim = 1, TW_LOC) {
    twrt_init(3, int32_t(in0_cb), int32_t(in1_cb), int32_t(transpose), int32_t(ct_dim), int32_t(rt_dim), loc);
    twrt_init(4, int32_t(kt_dim), 0, 0, 0, 0, loc);
}
inline void mm_block_init(uint32_t in0_cb, uint32_t in1_cb, uint32_t out_cb, uint32_t transpose = 0,
                          uint32_t ct_dim = 1, uint32_t rt_dim = 1, uint32_t kt_dim = 1, TW_LOC) {
    (void)out_cb;
    matmul_block_init(in0_cb, in1_cb, transpose, ct_dim, rt_dim, kt_dim, loc);
}
inline void mm_block_init_short(uint32_t in0_cb, uint32_t in1_cb, uint32_t transpose = 0, uint32_t ct_dim = 1,
                                uint32_t rt_dim = 1, uint32_t kt_dim = 1, TW_LOC) {
    matmul_block_init(in0_cb, in1_cb, transpose, ct_dim, rt_dim, kt_dim, loc);
}
inline void mm_block_init_short_with_dt(uint32_t in0_cb, uint32_t in1_cb, uint32_t old_in1_cb, uint32_t transpose = 0,
                                        uint32_t ct_dim = 1, uint32_t rt_dim = 1, uint32_t kt_dim = 1, TW_LOC) {
    twrt_check_cb(int32_t(old_in1_cb), loc);
    matmul_block_init(in0_cb, in1_cb, transpose, ct_dim, rt_dim, kt_dim, loc);
}

// -- format switches (checks only: every unpack / pack uses the format of its CB) ------------

template <auto... flags>
inline void reconfig_data_format(uint32_t srca_new, uint32_t srcb_new, TW_LOC) {
    detail::init_cbs(loc, srca_new, srcb_new);
}
template <auto... flags>
inline void reconfig_data_format(uint32_t srca_old, uint32_t srca_new, uint32_t srcb_old, uint32_t srcb_new, TW_LOC) {
    detail::init_cbs(loc, srca_old, srca_new, srcb_old, srcb_new);
}
template <auto... flags>
inline void reconfig_data_format_srca(uint32_t srca_new, TW_LOC) { detail::init_cbs(loc, srca_new); }
template <auto... flags>
inline void reconfig_data_format_srca(uint32_t srca_old, uint32_t srca_new, TW_LOC) {
    detail::init_cbs(loc, srca_old, srca_new);
}
template <auto... flags>
inline void reconfig_data_format_srcb(uint32_t srcb_new, TW_LOC) { detail::init_cbs(loc, srcb_new); }
template <auto... flags>
inline void reconfig_data_format_srcb(uint32_t srcb_old, uint32_t srcb_new, TW_LOC) {
    detail::init_cbs(loc, srcb_old, srcb_new);
}
template <auto... flags>
inline void pack_reconfig_data_format(uint32_t ocb, TW_LOC) { twrt_check_cb(int32_t(ocb), loc); }
template <auto... flags>
inline void pack_reconfig_data_format(uint32_t old_ocb, uint32_t ocb, TW_LOC) {
    twrt_check_cb(int32_t(old_ocb), loc);
    twrt_check_cb(int32_t(ocb), loc);
}

/** L1 accumulation: 1 = every pack does CB += DST, 0 = packs overwrite (other values: error). */
inline void pack_reconfig_l1_acc(uint32_t l1_acc_en, TW_LOC) { twrt_pack_l1_acc(l1_acc_en, loc); }

// -- DST handshake ---------------------------------------------------------------------------

inline void tile_regs_acquire(TW_LOC) { twrt_dst_acquire(loc); }
inline void tile_regs_commit(TW_LOC) { twrt_dst_check(loc); }
inline void tile_regs_wait(TW_LOC) { twrt_dst_check(loc); }
inline void tile_regs_release(TW_LOC) { twrt_dst_release(loc); }
inline void acquire_dst(TW_LOC) { twrt_dst_acquire(loc); }
inline void release_dst(TW_LOC) { twrt_dst_release(loc); }

// -- unpack / FPU ------------------------------------------------------------------------------

/** DST[idst] = CB[itile] (tile index relative to the CB's front). */
inline void copy_tile(uint32_t icb, uint32_t itile, uint32_t idst, TW_LOC) { twrt_copy_tile(icb, itile, idst, loc); }

inline void add_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst, TW_LOC) {
    twrt_binary(0, 0, icb0, icb1, itile0, itile1, idst, loc);
}
inline void sub_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst, TW_LOC) {
    twrt_binary(1, 0, icb0, icb1, itile0, itile1, idst, loc);
}
inline void mul_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst, TW_LOC) {
    twrt_binary(2, 0, icb0, icb1, itile0, itile1, idst, loc);
}

/** DST[idst] += A[in0_tile] @ B[in1_tile] (B transposed if `transpose`). */
inline void matmul_tiles(uint32_t in0_cb, uint32_t in1_cb, uint32_t in0_tile, uint32_t in1_tile, uint32_t idst,
                         uint32_t transpose = 0, TW_LOC) {
    twrt_matmul_tiles(in0_cb, in1_cb, in0_tile, in1_tile, idst, transpose, loc);
}
/** Newer spelling of matmul_tiles (transpose fixed by the init). */
inline void matmul_tile(uint32_t in0_cb, uint32_t in1_cb, uint32_t in0_tile, uint32_t in1_tile, uint32_t idst,
                        uint32_t transpose = 0, TW_LOC) {
    twrt_matmul_tiles(in0_cb, in1_cb, in0_tile, in1_tile, idst, transpose, loc);
}

/** rt_dim x ct_dim output tiles: DST[idst + r*ct_dim + c] += A[in0_tile + r*kt_dim] @ B[in1_tile + c]. */
inline void matmul_block(uint32_t in0_cb, uint32_t in1_cb, uint32_t in0_tile, uint32_t in1_tile, uint32_t idst,
                         uint32_t transpose, uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim, TW_LOC) {
    twrt_matmul_block(in0_cb, in1_cb, in0_tile, in1_tile, idst, transpose, ct_dim, rt_dim, kt_dim, loc);
}

/** Init for binary_dest_reuse_tiles. */
template <EltwiseBinaryType eltwise_binary_type = ELWADD,
          EltwiseBinaryReuseDestType binary_reuse_dest = EltwiseBinaryReuseDestType::NONE, auto... flags>
inline void binary_dest_reuse_tiles_init(uint32_t icb, TW_LOC) {
    detail::init_cbs(loc, icb);
}

/** DST[idst] = DST op CB[itile] (DEST_TO_SRCA) or CB[itile] op DST (DEST_TO_SRCB). */
template <EltwiseBinaryType eltwise_binary_type = ELWADD,
          EltwiseBinaryReuseDestType binary_reuse_dest = EltwiseBinaryReuseDestType::NONE, auto... flags>
inline void binary_dest_reuse_tiles(uint32_t in_cb_id, uint32_t in_tile_index, uint32_t dst_tile_index, TW_LOC) {
    twrt_dest_reuse(static_cast<int>(eltwise_binary_type), static_cast<int>(binary_reuse_dest), in_cb_id,
                    in_tile_index, dst_tile_index, loc);
}

// -- pack -----------------------------------------------------------------------------------

/** Pack DST[idst] into the output CB (sequential slots unless out_of_order_output). */
template <bool out_of_order_output = false>
inline void pack_tile(uint32_t idst, uint32_t ocb, uint32_t output_tile_index = 0, TW_LOC) {
    twrt_pack_tile(idst, ocb, output_tile_index, out_of_order_output, loc);
}

/** Pack DST[idst .. idst + ntiles - 1] into the next ntiles slots of the output CB. */
inline void pack_tile_block(uint32_t idst, uint32_t ocb, uint32_t ntiles, TW_LOC) {
    twrt_pack_tile_block(idst, ocb, ntiles, loc);
}

}  // namespace ckernel

using namespace ckernel;

#include "api/compute/bcast.h"
#include "api/compute/reduce.h"
#include "api/compute/eltwise_unary/sfpu.h"
#include "tilewright/compute_layout.h"
#include "tilewright/sfpi_glue.h"
