// api/compute/bcast.h -- binary ops with B broadcast along rows, columns or as a scalar.
#pragma once

#include "api/compute/compute_kernel_api.h"

namespace ckernel {

#define TW_BCAST(op)                                                                                    \
    inline void op##_tiles_bcast_rows(uint32_t a, uint32_t b, uint32_t ia, uint32_t ib, uint32_t idst) { \
        tw::call(#op "_tiles_bcast_rows", a, b, ia, ib, idst);                                          \
    }                                                                                                   \
    inline void op##_tiles_bcast_cols(uint32_t a, uint32_t b, uint32_t ia, uint32_t ib, uint32_t idst) { \
        tw::call(#op "_tiles_bcast_cols", a, b, ia, ib, idst);                                          \
    }                                                                                                   \
    inline void op##_tiles_bcast_scalar(uint32_t a, uint32_t b, uint32_t ia, uint32_t ib, uint32_t idst) { \
        tw::call(#op "_tiles_bcast_scalar", a, b, ia, ib, idst);                                        \
    }                                                                                                   \
    template <BroadcastType bcast>                                                                      \
    inline void op##_tiles_bcast(uint32_t a, uint32_t b, uint32_t ia, uint32_t ib, uint32_t idst) {     \
        static_assert(bcast != BroadcastType::NONE, "use " #op "_tiles for BroadcastType::NONE");       \
        if constexpr (bcast == BroadcastType::ROW) op##_tiles_bcast_rows(a, b, ia, ib, idst);            \
        else if constexpr (bcast == BroadcastType::COL) op##_tiles_bcast_cols(a, b, ia, ib, idst);       \
        else op##_tiles_bcast_scalar(a, b, ia, ib, idst);                                               \
    }                                                                                                   \
    inline void op##_bcast_rows_init_short(uint32_t a, uint32_t b) { detail::init(a, b); }              \
    inline void op##_bcast_cols_init_short(uint32_t a, uint32_t b) { detail::init(a, b); }              \
    inline void op##_bcast_scalar_init_short(uint32_t a, uint32_t b) { detail::init(a, b); }            \
    inline void op##_tiles_bcast_scalar_init_short(uint32_t a, uint32_t b) { detail::init(a, b); }

TW_BCAST(add)
TW_BCAST(sub)
TW_BCAST(mul)
#undef TW_BCAST

template <EltwiseBinaryType op, BroadcastType dim>
inline void init_bcast(uint32_t icb0, uint32_t icb1, uint32_t ocb) {
    detail::init(icb0, icb1, ocb);
}

}  // namespace ckernel
