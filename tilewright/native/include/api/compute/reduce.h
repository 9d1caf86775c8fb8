// api/compute/reduce.h -- reduce_init / reduce_tile / reduce_uninit.
//
// reduce_tile accumulates into DST: REDUCE_ROW leaves each row's result in column 0,
// REDUCE_COL in row 0, REDUCE_SCALAR at [0, 0]; scaled by the scaler tile's [0, 0].
#pragma once

#include "api/compute/compute_kernel_api.h"

#ifndef REDUCE_OP
#define REDUCE_OP ckernel::PoolType::SUM
#endif
#ifndef REDUCE_DIM
#define REDUCE_DIM ckernel::ReduceDim::REDUCE_ROW
#endif

namespace ckernel {

template <PoolType reduce_type = REDUCE_OP, ReduceDim reduce_dim = REDUCE_DIM, bool enforce_fp32_accumulation = false>
inline void reduce_init(uint32_t icb, uint32_t icb_scaler, uint32_t ocb, TW_LOC) {
    detail::init(loc);
}

template <PoolType reduce_type = REDUCE_OP, ReduceDim reduce_dim = REDUCE_DIM, bool enforce_fp32_accumulation = false>
inline void reduce_tile(uint32_t icb, uint32_t icb_scaler, uint32_t itile, uint32_t itile_scaler, uint32_t idst,
                        TW_LOC) {
    twrt_reduce_tile(static_cast<int>(reduce_type), static_cast<int>(reduce_dim), icb, icb_scaler, itile, itile_scaler,
                     idst, loc);
}

template <bool enforce_fp32_accumulation = false>
inline void reduce_uninit(TW_LOC) {
    detail::init(loc);
}

}  // namespace ckernel
