// api/compute/eltwise_unary/sfpu.h -- the unary SFPU ops Tilewright emulates (in place on DST).
//
// Each op NAME has NAME_tile_init<flags...>() and NAME_tile<flags...>(idst, ...); template
// flags and extra arguments (vector mode, scale) are accepted and ignored.  The lists are
// checked against tilewright.device.kernel_api.compute.SFPU_UNARY / SFPU_UNARY_PARAM by
// the test suite.
//
// Parameters are passed as tt-metal passes them: a float as its IEEE-754 bits in a
// uint32_t (std::bit_cast<uint32_t>(0.1f)), an integer as itself (power_iterative_tile's
// exponent, round_tile's decimals).
#pragma once

#include "api/compute/compute_kernel_api.h"

namespace ckernel {

// Ops without parameters.
#define TW_SFPU_OPS(X) \
    X(exp)             \
    X(log)             \
    X(sqrt)            \
    X(rsqrt)           \
    X(recip)           \
    X(relu)            \
    X(gelu)            \
    X(sigmoid)         \
    X(tanh)            \
    X(sin)             \
    X(cos)             \
    X(tan)             \
    X(abs)             \
    X(negative)        \
    X(square)          \
    X(exp2)            \
    X(expm1)           \
    X(log1p)           \
    X(floor)           \
    X(ceil)            \
    X(sign)            \
    X(silu)            \
    X(asin)            \
    X(acos)            \
    X(atan)            \
    X(asinh)           \
    X(acosh)           \
    X(atanh)           \
    X(hardsigmoid)     \
    X(softsign)        \
    X(signbit)         \
    X(trunc)           \
    X(frac)

// Ops with one uint32_t parameter (float bits, or an integer for power_iterative).
#define TW_SFPU_PARAM_OPS(P) \
    P(leaky_relu)            \
    P(elu)                   \
    P(prelu)                 \
    P(relu_max)              \
    P(relu_min)              \
    P(rsub)                  \
    P(power)                 \
    P(power_iterative)       \
    P(add_unary)             \
    P(sub_unary)             \
    P(mul_unary)             \
    P(div_unary)             \
    P(rsub_unary)

#define TW_SFPU_DEFINE(name)                                                             \
    template <auto... flags>                                                             \
    inline void name##_tile_init(uint32_t = 0, uint32_t = 0) {                          \
        tw::call("sfpu.init");                                                           \
    }                                                                                    \
    template <auto... flags>                                                             \
    inline void name##_tile(uint32_t idst, int32_t = 0, uint32_t = 0, uint32_t = 0) {   \
        tw::call(#name "_tile", idst);                                                   \
    }

#define TW_SFPU_PARAM_DEFINE(name)                                 \
    template <auto... flags>                                       \
    inline void name##_tile_init(uint32_t = 0, uint32_t = 0) {    \
        tw::call("sfpu.init");                                     \
    }                                                              \
    template <auto... flags>                                       \
    inline void name##_tile(uint32_t idst, uint32_t param0 = 0) { \
        tw::call(#name "_tile", idst, param0);                     \
    }

TW_SFPU_OPS(TW_SFPU_DEFINE)
TW_SFPU_PARAM_OPS(TW_SFPU_PARAM_DEFINE)
#undef TW_SFPU_DEFINE
#undef TW_SFPU_PARAM_DEFINE

/** softplus(x) = log(1 + exp(beta*x)) * beta_reciprocal, x where beta*x > threshold (float bits). */
template <auto... flags>
inline void softplus_tile_init() {
    tw::call("sfpu.init");
}
template <auto... flags>
inline void softplus_tile(uint32_t idst, uint32_t beta, uint32_t beta_reciprocal, uint32_t threshold) {
    tw::call("softplus_tile", idst, beta, beta_reciprocal, threshold);
}

/** round_tile(idst, decimals): round to `decimals` decimal places, ties to even. */
template <auto... flags>
inline void round_tile_init() {
    tw::call("sfpu.init");
}
template <auto... flags>
inline void round_tile(uint32_t idst, int32_t decimals) {
    tw::call("round_tile", idst, decimals);
}

inline void binop_with_scalar_tile_init() { tw::call("sfpu.init"); }
inline void rounding_op_tile_init() { tw::call("sfpu.init"); }

}  // namespace ckernel
