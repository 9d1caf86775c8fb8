// sfpi_ops.cpp -- user SFPU code in SFPI, run through the SFPU call wrappers: one output tile
// per construct.  c_0 holds two tiles (x, y); c_16 receives the results (see test_sfpi.py).
#include <cstdint>

#include "api/compute/common.h"
#include "api/compute/eltwise_unary/eltwise_unary.h"
#include "api/compute/tile_move_copy.h"

#ifdef TRISC_MATH
namespace ckernel::sfpu {

// custom_sfpi_add's shape: tiles addressed as dst_index * 32 vectors, one face per call.
inline void add_face(uint32_t in0, uint32_t in1, uint32_t out) {
    for (uint32_t i = 0; i < 8; ++i) {
        sfpi::vFloat a = sfpi::dst_reg[in0 * 32 + i];
        sfpi::vFloat b = sfpi::dst_reg[in1 * 32 + i];
        sfpi::dst_reg[out * 32 + i] = a + b;
    }
}

// Nested predication: x < -1 -> -1, x < 0 -> x*x, x < 1 -> x/2, else |x| + 1.
template <int ITERATIONS = 8>
inline void piecewise() {
    for (int d = 0; d < ITERATIONS; ++d) {
        vFloat x = dst_reg[0];
        vFloat r = 0.0f;
        v_if(x < 0.0f) {
            v_if(x < -1.0f) { r = vConstNeg1; }
            v_else { r = x * x; }
            v_endif;
        }
        v_elseif(x < 1.0f) { r = x * 0.5f; }
        v_else { r = sfpi::abs(x) + vConst1; }
        v_endif;
        dst_reg[0] = r;
        dst_reg++;
    }
}

// Exponent / mantissa / sign intrinsics and integer conversions.
inline void bits_face(int which) {
    for (int d = 0; d < 8; ++d) {
        vFloat x = dst_reg[0];
        vFloat r;
        if (which == 0) {
            r = int32_to_float(exexp(x), 0);  // unbiased exponent
        } else if (which == 1) {
            r = setsgn(setexp(x, 127), x);  // mantissa in [1, 2) with x's sign
        } else if (which == 2) {
            r = int32_to_float(lz(reinterpret<vInt>(x)), 0);
        } else if (which == 3) {
            vUInt u = reinterpret<vUInt>(x);
            r = reinterpret<vFloat>((u >> 16) << 16);  // bf16 by truncation
        } else if (which == 4) {
            r = reinterpret<vFloat>(float_to_fp16b(x * vConstFloatPrgm0, 0));
        } else {
            vInt e = exexp(x);
            v_if(e >= 0) { r = setexp(x, 126); }  // |x| >= 1: into [0.5, 1)
            v_else { r = setman(x, 0); }
            v_endif;
        }
        dst_reg[0] = r;
        dst_reg++;
    }
}

inline void set_constants() { vConstFloatPrgm0 = 2.5f; }

// SFPLUT: |x| < 1 -> 0.5|x| + 0.25, |x| < 2 -> |x| - 0.265625, else 0.125|x| + 1, sign kept.
inline void lut_face() {
    vUInt l0 = 0x1020u, l1 = 0x00A1u, l2 = 0x3000u;
    for (int d = 0; d < 8; ++d) {
        vFloat x = dst_reg[0];
        dst_reg[0] = lut(x, l0, l1, l2);
        dst_reg++;
    }
}

// min / max of two tiles, and a lane-model probe: vector 0 <- vector 1, vector 8 <- vector 0.
inline void minmax_face(uint32_t in0, uint32_t in1, uint32_t out) {
    for (uint32_t i = 0; i < 8; ++i) {
        vFloat a = dst_reg[in0 * 32 + i];
        vFloat b = dst_reg[in1 * 32 + i];
        vec_min_max(a, b);
        dst_reg[out * 32 + i] = b - a;  // max - min = |x - y|
    }
}
inline void lanes_probe() {
    vFloat v0 = dst_reg[0];
    dst_reg[0] = dst_reg[1];
    dst_reg[8] = v0;
}

inline void plus(float c) {
    for (int d = 0; d < 8; ++d) {
        dst_reg[0] = dst_reg[0] + c;
        dst_reg++;
    }
}

}  // namespace ckernel::sfpu
#endif

namespace {
constexpr auto cb_in = tt::CBIndex::c_0;
constexpr auto cb_out = tt::CBIndex::c_16;

// Four DST tiles per round (the fp32 DST's capacity), packed in order.
template <typename F>
void round(uint32_t n, F body) {
    tile_regs_acquire();
    body();
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(cb_out, n);
    pack_tile_block(0, cb_out, n);
    cb_push_back(cb_out, n);
    tile_regs_release();
}
}  // namespace

void kernel_main() {
    init_sfpu(cb_in, cb_out);
    cb_wait_front(cb_in, 2);
    round(4, [] {
        copy_tile(cb_in, 0, 0);
        copy_tile(cb_in, 1, 1);
        MATH(SFPU_BINARY_CALL_NO_TEMPLATE_ARGS(DST_SYNC_MODE, DST_ACCUM_MODE, add_face, 0, 1, 2, VectorMode::RC));
        MATH(_llk_math_eltwise_binary_sfpu_params_<false>(ckernel::sfpu::minmax_face, 0, 1, 3));
    });
    round(4, [] {
        for (uint32_t i = 0; i < 4; ++i) copy_tile(cb_in, 0, i);
        MATH(SFPU_UNARY_CALL(DST_SYNC_MODE, DST_ACCUM_MODE, piecewise, (8), 0, VectorMode::RC));
        MATH(SFPU_UNARY_CALL_NO_TEMPLATE_ARGS(DST_SYNC_MODE, DST_ACCUM_MODE, lut_face, 1, VectorMode::RC));
        MATH(SFPU_UNARY_CALL_NO_TEMPLATE_ARGS(DST_SYNC_MODE, DST_ACCUM_MODE, plus, 2, VectorMode::R, 100.0f));
        MATH(SFPU_UNARY_CALL_NO_TEMPLATE_ARGS(DST_SYNC_MODE, DST_ACCUM_MODE, plus, 3, VectorMode::C, -100.0f));
    });
    MATH(ckernel::llk_math_eltwise_unary_sfpu_init<SfpuType::unused>(ckernel::sfpu::set_constants));
    round(4, [] {
        for (int w = 0; w < 4; ++w) {
            copy_tile(cb_in, 0, w);
            MATH(_llk_math_eltwise_unary_sfpu_params_<false>(ckernel::sfpu::bits_face, w, VectorMode::RC, w));
        }
    });
    round(3, [] {
        for (int w = 4; w < 6; ++w) {
            copy_tile(cb_in, 0, w - 4);
            MATH(_llk_math_eltwise_unary_sfpu_params_<false>(ckernel::sfpu::bits_face, w - 4, VectorMode::RC, w));
        }
        copy_tile(cb_in, 0, 2);
        MATH(_llk_math_eltwise_unary_sfpu_params_<false>(ckernel::sfpu::lanes_probe, 2, VectorMode::None));
    });
    cb_pop_front(cb_in, 2);
}
