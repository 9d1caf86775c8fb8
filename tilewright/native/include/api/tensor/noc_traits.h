// api/tensor/noc_traits.h -- NoC address helpers used with tensor accessors.
#pragma once

#include <cstdint>

#define NOC_ADDR_LOCAL_BITS 36
#define NOC_ADDR_NODE_ID_BITS 6
#define NOC_UNICAST_ADDR_X(addr) ((uint32_t)(((uint64_t)(addr) >> 36) & 0x3F))
#define NOC_UNICAST_ADDR_Y(addr) ((uint32_t)(((uint64_t)(addr) >> 42) & 0x3F))
#define NOC_LOCAL_ADDR(addr) ((uint64_t)(addr) & ((1ULL << 36) - 1))
#define NOC_XY_ADDR(x, y, addr) \
    ((((uint64_t)(y) & 0x3F) << 42) | (((uint64_t)(x) & 0x3F) << 36) | ((uint64_t)(addr) & ((1ULL << 36) - 1)))
