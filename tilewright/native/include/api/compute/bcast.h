// api/compute/bcast.h -- binary ops with B broadcast along rows, columns or as a scalar.
#pragma once

#include "api/compute/compute_kernel_api.h"
#include "twrt_sfpu_ops.h"

namespace ckernel {

#define TW_BCAST_ARGS uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst
#define TW_BCAST(op, code)                                                                                  \
    inline void op##_tiles_bcast_rows(TW_BCAST_ARGS, TW_LOC) {                                              \
        twrt_binary(code, 1, icb0, icb1, itile0, itile1, idst, loc);                                        \
    }                                                                                                       \
    inline void op##_tiles_bcast_cols(TW_BCAST_ARGS, TW_LOC) {                                              \
        twrt_binary(code, 2, icb0, icb1, itile0, itile1, idst, loc);                                        \
    }                                                                                                       \
    inline void op##_tiles_bcast_scalar(TW_BCAST_ARGS, TW_LOC) {                                            \
        twrt_binary(code, 3, icb0, icb1, itile0, itile1, idst, loc);                                        \
    }                                                                                                       \
    template <BroadcastType bcast>                                                                          \
    inline void op##_tiles_bcast(TW_BCAST_ARGS, TW_LOC) {                                                   \
        static_assert(bcast != BroadcastType::NONE, "use " #op "_tiles for BroadcastType::NONE");           \
        twrt_binary(code, bcast == BroadcastType::ROW ? 1 : bcast == BroadcastType::COL ? 2 : 3, icb0, icb1, \
                    itile0, itile1, idst, loc);                                                             \
    }                                                                                                       \
    inline void op##_bcast_rows_init_short(uint32_t icb0, uint32_t icb1, TW_LOC) {                          \
        detail::init_cbs(loc, icb0, icb1);                                                                  \
    }                                                                                                       \
    inline void op##_bcast_cols_init_short(uint32_t icb0, uint32_t icb1, TW_LOC) {                          \
        detail::init_cbs(loc, icb0, icb1);                                                                  \
    }                                                                                                       \
    inline void op##_bcast_scalar_init_short(uint32_t icb0, uint32_t icb1, TW_LOC) {                        \
        detail::init_cbs(loc, icb0, icb1);                                                                  \
    }                                                                                                       \
    inline void op##_tiles_bcast_scalar_init_short(uint32_t icb0, uint32_t icb1, TW_LOC) {                  \
        detail::init_cbs(loc, icb0, icb1);                                                                  \
    }

TW_BCAST(add, TW_FPU_add)
TW_BCAST(sub, TW_FPU_sub)
TW_BCAST(mul, TW_FPU_mul)
#undef TW_BCAST
#undef TW_BCAST_ARGS

/** DST[idst] = tile `itile` of `icb` broadcast (ROW: row 0 down the tile, COL: column 0 across,
 *  SCALAR: element [0, 0] everywhere). */
template <BroadcastType bcast>
inline void unary_bcast_init(uint32_t icb, uint32_t ocb, TW_LOC) {
    detail::init_cbs(loc, icb, ocb);
}
template <BroadcastType bcast>
inline void unary_bcast(uint32_t icb, uint32_t itile, uint32_t idst, TW_LOC) {
    static_assert(bcast != BroadcastType::NONE, "unary_bcast needs ROW, COL or SCALAR");
    twrt_unary_bcast(bcast == BroadcastType::ROW ? 1 : bcast == BroadcastType::COL ? 2 : 3, icb, itile, idst, loc);
}

template <EltwiseBinaryType op, BroadcastType dim>
inline void init_bcast(uint32_t icb0, uint32_t icb1, uint32_t ocb, TW_LOC) {
    detail::init_cbs(loc, icb0, icb1);
}

}  // namespace ckernel
