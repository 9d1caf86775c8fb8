// runtime_resources.hpp -- operation runtime resources (reference C.11), data movement:
// a per-node runtime argument, a caller semaphore and a JIT define fill one block of `dfb`.
#pragma once

#include <cstdint>

#include "api/dataflow/circular_buffer.h"
#include "api/dataflow/dataflow_api.h"

// Runtime resources: a per-node word and a caller semaphore fill one block of `dfb`.
inline void fill_from_runtime_args(uint32_t dfb) {
    uint32_t value = get_arg_val<uint32_t>(0);
    const uint32_t semaphore_id = get_arg_val<uint32_t>(1);
    auto* semaphore = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(semaphore_id));
    noc_semaphore_set(semaphore, 1);
    noc_semaphore_wait(semaphore, 1);
#if defined(VALUE_OFFSET)
    value += VALUE_OFFSET;
#endif
    CircularBuffer out(dfb);
    out.reserve_back(1);
    auto* words = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(out.get_write_ptr());
    for (uint32_t i = 0; i < 32 * 32; ++i) {
        words[i] = value;  // float32 bits
    }
    out.push_back(1);
}
