// The SFPI function of sfpi_add.cpp: one face of DST[out] = DST[in0] + DST[in1].
#pragma once

#include <cstdint>

#include "sfpi.h"

namespace ckernel::sfpu {

inline void tw_add_tile_face(uint32_t in0, uint32_t in1, uint32_t out) {
    constexpr uint32_t vectors_per_tile = 32;  // 64 DST rows of 16, two rows a vector
    for (uint32_t i = 0; i < 8; ++i) {         // eight vectors of 32 lanes: one 16x16 face
        sfpi::vFloat a = sfpi::dst_reg[in0 * vectors_per_tile + i];
        sfpi::vFloat b = sfpi::dst_reg[in1 * vectors_per_tile + i];
        sfpi::dst_reg[out * vectors_per_tile + i] = a + b;
    }
}

}  // namespace ckernel::sfpu
