// api/compute/eltwise_unary/sfpu.h -- the unary SFPU ops Tilewright emulates (in place on DST).
//
// Each op NAME has NAME_tile_init<flags...>() and NAME_tile<flags...>(idst, ...); template
// flags and extra arguments (vector mode, scale) are accepted and ignored.  The list is
// checked against tilewright.device.kernel_api.compute.SFPU_UNARY by the test suite.
#pragma once

#include "api/compute/compute_kernel_api.h"

namespace ckernel {

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
    X(silu)

#define TW_SFPU_DEFINE(name)                                                             \
    template <auto... flags>                                                             \
    inline void name##_tile_init(uint32_t = 0, uint32_t = 0) {                          \
        detail::init();                                                                  \
    }                                                                                    \
    template <auto... flags>                                                             \
    inline void name##_tile(uint32_t idst, int32_t = 0, uint32_t = 0, uint32_t = 0) {   \
        tw::call(#name "_tile", idst);                                                   \
    }

TW_SFPU_OPS(TW_SFPU_DEFINE)
#undef TW_SFPU_DEFINE

}  // namespace ckernel
