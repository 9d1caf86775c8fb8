// api/tensor/local_tensor_accessor.h -- LocalTensorAccessor<T>: a tensor's node-local L1 region.
//
// For a sharded L1 tensor this is the local shard (pages row-major, each at the L1
// alignment).  Constructed from the region's L1 base address (a pointer: L1 is mapped at
// its own addresses while the kernel runs); usable on data-movement and compute kernels.
#pragma once

#include <cstdint>

#include "api/core_local_mem.h"

template <typename T>
class LocalTensorAccessor {
public:
    explicit LocalTensorAccessor(uint32_t bank_base_address) noexcept
        : mem_(static_cast<uintptr_t>(bank_base_address)) {}

    /** Element `index` of the local region (read or write); not bounds-checked. */
    T& operator[](uint32_t index) const { return mem_[index]; }

    /** L1 base address of the local region. */
    uint32_t get_bank_base_address() const noexcept { return static_cast<uint32_t>(mem_.get_address()); }

    CoreLocalMem<T> local_mem() const noexcept { return mem_; }

private:
    CoreLocalMem<T> mem_;
};
