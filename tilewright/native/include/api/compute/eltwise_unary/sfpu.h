// api/compute/eltwise_unary/sfpu.h -- the unary SFPU ops (in place on DST), run by the native
// runtime (twrt_sfpu; the op list is tilewright.native.runtime.SFPU_OPS, generated into
// twrt_sfpu_ops.h).
//
// Each op NAME has NAME_tile_init<flags...>() and NAME_tile<flags...>(idst, ...); template
// flags (approximation modes) are accepted.  Parameters are passed as tt-metal passes them:
// a float as its IEEE-754 bits in a uint32_t (std::bit_cast<uint32_t>(0.1f)), an integer as
// itself (power_iterative_tile's exponent, round_tile's decimals).  SFPU_OP_CHAIN_0 and the
// SFPU_OP_*_INCLUDE defines that ttnn generates work unchanged (eltwise_unary/eltwise_unary.h).
#pragma once

#include "api/compute/compute_kernel_api.h"
#include "twrt_sfpu_ops.h"

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
    X(frac)            \
    X(erf)             \
    X(erfc)

// Ops with one parameter (float bits, or an integer for power_iterative).
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

// Ops with two parameters.
#define TW_SFPU_PARAM2_OPS(P) \
    P(hardtanh)               \
    P(clamp)                  \
    P(threshold)              \
    P(selu)                   \
    P(celu)

#define TW_SFPU_DEFINE(name)                                                                  \
    template <auto... flags>                                                                  \
    inline void name##_tile_init(uint32_t = 0, uint32_t = 0, TW_LOC) {                       \
        twrt_init(5, 0, 0, 0, 0, 0, loc);                                                     \
    }                                                                                         \
    template <auto... flags>                                                                  \
    inline void name##_tile(uint32_t idst, int32_t = 0, uint32_t = 0, uint32_t = 0, TW_LOC) { \
        twrt_sfpu(TW_SFPU_##name, idst, 0, 0, 0, loc);                                        \
    }

#define TW_SFPU_PARAM_DEFINE(name)                                                \
    template <auto... flags>                                                      \
    inline void name##_tile_init(uint32_t = 0, uint32_t = 0, TW_LOC) {           \
        twrt_init(5, 0, 0, 0, 0, 0, loc);                                         \
    }                                                                             \
    template <auto... flags>                                                      \
    inline void name##_tile(uint32_t idst, uint32_t param0 = 0, TW_LOC) {        \
        twrt_sfpu(TW_SFPU_##name, idst, param0, 0, 0, loc);                       \
    }

#define TW_SFPU_PARAM2_DEFINE(name)                                                         \
    template <auto... flags>                                                                \
    inline void name##_tile_init(uint32_t = 0, uint32_t = 0, TW_LOC) {                     \
        twrt_init(5, 0, 0, 0, 0, 0, loc);                                                   \
    }                                                                                       \
    template <auto... flags>                                                                \
    inline void name##_tile(uint32_t idst, uint32_t param0, uint32_t param1, TW_LOC) {     \
        twrt_sfpu(TW_SFPU_##name, idst, param0, param1, 0, loc);                            \
    }

TW_SFPU_OPS(TW_SFPU_DEFINE)
TW_SFPU_PARAM_OPS(TW_SFPU_PARAM_DEFINE)
TW_SFPU_PARAM2_OPS(TW_SFPU_PARAM2_DEFINE)
#undef TW_SFPU_DEFINE
#undef TW_SFPU_PARAM_DEFINE
#undef TW_SFPU_PARAM2_DEFINE

/** softplus(x) = log(1 + exp(beta*x)) * beta_reciprocal, x where beta*x > threshold (float bits). */
template <auto... flags>
inline void softplus_tile_init(TW_LOC) {
    twrt_init(5, 0, 0, 0, 0, 0, loc);
}
template <auto... flags>
inline void softplus_tile(uint32_t idst, uint32_t beta, uint32_t beta_reciprocal, uint32_t threshold, TW_LOC) {
    twrt_sfpu(TW_SFPU_softplus, idst, beta, beta_reciprocal, threshold, loc);
}

/** round_tile(idst, decimals): round to `decimals` decimal places, ties to even. */
template <auto... flags>
inline void round_tile_init(TW_LOC) {
    twrt_init(5, 0, 0, 0, 0, 0, loc);
}
template <auto... flags>
inline void round_tile(uint32_t idst, int32_t decimals, TW_LOC) {
    twrt_sfpu(TW_SFPU_round, idst, uint32_t(decimals), 0, 0, loc);
}

inline void binop_with_scalar_tile_init(TW_LOC) { twrt_init(5, 0, 0, 0, 0, 0, loc); }
inline void rounding_op_tile_init(TW_LOC) { twrt_init(5, 0, 0, 0, 0, 0, loc); }

}  // namespace ckernel
