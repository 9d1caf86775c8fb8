// api/compute/eltwise_unary/fill.h -- fill_tile(idst, value): every element of DST[idst] = value.
#pragma once

#include <bit>

#include "api/compute/compute_kernel_api.h"

namespace ckernel {

inline void fill_tile_init(TW_LOC) { twrt_init(5, 0, 0, 0, 0, 0, loc); }
inline void fill_tile(uint32_t idst, float value, TW_LOC) { twrt_fill_tile(idst, std::bit_cast<uint32_t>(value), loc); }
/** The value given as its IEEE-754 bits (tt-metal's fill_tile_bitcast). */
inline void fill_tile_bitcast(uint32_t idst, uint32_t bits, TW_LOC) { twrt_fill_tile(idst, bits, loc); }

}  // namespace ckernel
