// api/compute/compute_kernel_api.h -- tt-metal's compute kernel API, emulated by Tilewright.
//
// The three TRISCs of a compute kernel run as one thread (the API pairs are
// self-synchronising); every call goes to tilewright.device.kernel_api.compute through
// tilewright/bridge.h, so DST rounding, unpack/pack formats and sequential packing are
// exactly those of Python compute kernels:
//
//   DST handshake      tile_regs_acquire/commit/wait/release, acquire_dst/release_dst
//   inits              compute_kernel_hw_startup, binary_op_init_common, unary_op_init_common,
//                      init_sfpu, copy_tile_init, *_tiles_init, mm_init/matmul_init, reduce_init
//   unpack / FPU       copy_tile, add/sub/mul_tiles, *_tiles_bcast_rows/cols/scalar,
//                      matmul_tiles, reduce_tile
//   pack               pack_tile<out_of_order>, pack_tile_block
//   SFPU (in DST)      exp, log, sqrt, rsqrt, recip, relu, gelu, sigmoid, tanh, sin, cos, tan,
//                      abs, negative, square, exp2, expm1, log1p, floor, ceil, sign, silu
//                      (each NAME_tile(idst) with NAME_tile_init())
//   circular buffers   cb_wait_front, cb_pop_front, cb_reserve_back, cb_push_back
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
enum class EltwiseBinaryType : int { ELWMUL = 0, ELWDIV = 1, ELWADD = 2, ELWSUB = 3, ELWMAXMIN = 4 };

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
inline void copy_tile_to_dst_init_short(uint32_t cb, uint32_t transpose = 0) { detail::init(cb, transpose); }
inline void add_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false) { detail::init(icb0, icb1, acc_to_dest); }
inline void sub_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false) { detail::init(icb0, icb1, acc_to_dest); }
inline void mul_tiles_init(uint32_t icb0, uint32_t icb1) { detail::init(icb0, icb1); }
inline void mm_init(uint32_t in0, uint32_t in1, uint32_t out, uint32_t transpose = 0) { detail::init(in0, in1, out, transpose); }
inline void mm_init_short(uint32_t in0, uint32_t in1, uint32_t transpose = 0) { detail::init(in0, in1, transpose); }
inline void matmul_init(uint32_t in0, uint32_t in1, uint32_t transpose = 0) { detail::init(in0, in1, transpose); }
inline void reconfig_data_format(uint32_t a, uint32_t b) { detail::init(a, b); }
inline void reconfig_data_format(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { detail::init(a, b, c, d); }
inline void pack_reconfig_data_format(uint32_t ocb) { detail::init(ocb); }
inline void pack_reconfig_data_format(uint32_t old_ocb, uint32_t ocb) { detail::init(old_ocb, ocb); }

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

// -- pack -----------------------------------------------------------------------------------

/** Pack DST[idst] into the output CB (sequential slots unless out_of_order_output). */
template <bool out_of_order_output = false>
inline void pack_tile(uint32_t idst, uint32_t ocb, uint32_t output_tile_index = 0) {
    tw::call("pack_tile", idst, ocb, output_tile_index, out_of_order_output);
}

inline void pack_tile_block(uint32_t idst, uint32_t ocb, uint32_t ntiles) {
    for (uint32_t i = 0; i < ntiles; ++i) pack_tile(idst + i, ocb);
}

}  // namespace ckernel

using namespace ckernel;

#include "api/compute/bcast.h"
#include "api/compute/reduce.h"
#include "api/compute/eltwise_unary/sfpu.h"
