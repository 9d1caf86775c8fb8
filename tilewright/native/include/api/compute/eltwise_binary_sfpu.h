// api/compute/eltwise_binary_sfpu.h -- SFPU binary ops on two DST tiles (add/sub/mul/div),
// and api/compute/binary_max_min.h's binary_max_tile / binary_min_tile: odst = op(DST[idst0],
// DST[idst1]) elementwise in DST's precision.  Run by the native runtime (twrt_sfpu_binary).
#pragma once

#include "api/compute/compute_kernel_api.h"

namespace ckernel {

#define TW_SFPU_BINARY(name, code)                                                          \
    inline void name##_init(TW_LOC) { twrt_init(5, 0, 0, 0, 0, 0, loc); }                    \
    inline void name(uint32_t idst0, uint32_t idst1, uint32_t odst, TW_LOC) {              \
        twrt_sfpu_binary(code, idst0, idst1, odst, loc);                                     \
    }

TW_SFPU_BINARY(add_binary_tile, 0)
TW_SFPU_BINARY(sub_binary_tile, 1)
TW_SFPU_BINARY(mul_binary_tile, 2)
TW_SFPU_BINARY(div_binary_tile, 3)
TW_SFPU_BINARY(binary_max_tile, 4)
TW_SFPU_BINARY(binary_min_tile, 5)
#undef TW_SFPU_BINARY

}  // namespace ckernel
