// sharded_scale.hpp -- scale the bf16 elements of this node's shard of an L1-sharded tensor.
//
// Called with ttl.raw_addr(tensor): the address of the local shard, a pointer in native code.
#pragma once

#include <cstdint>
#include <cstring>

#include "api/tensor/local_tensor_accessor.h"

namespace sharded_scale_detail {
inline float bf16_to_float(uint16_t v) {
    uint32_t bits = static_cast<uint32_t>(v) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}
inline uint16_t float_to_bf16(float f) {  // round to nearest even
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits += 0x7FFF + ((bits >> 16) & 1);
    return static_cast<uint16_t>(bits >> 16);
}
}  // namespace sharded_scale_detail

template <uint32_t FactorBits>
inline void scale_shard(uint32_t shard_addr, uint32_t num_elements) {
    float factor;
    const uint32_t bits = FactorBits;
    std::memcpy(&factor, &bits, 4);
    uint16_t* p = reinterpret_cast<uint16_t*>(shard_addr);
    for (uint32_t i = 0; i < num_elements; ++i) {
        p[i] = sharded_scale_detail::float_to_bf16(sharded_scale_detail::bf16_to_float(p[i]) * factor);
    }
}

// The same through a LocalTensorAccessor (a base tensor passed to a compute kernel).
template <uint32_t FactorBits>
inline void scale_local(const LocalTensorAccessor<uint8_t>& shard, uint32_t num_elements) {
    scale_shard<FactorBits>(shard.get_bank_base_address(), num_elements);
}
