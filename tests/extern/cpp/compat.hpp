// compat.hpp -- external functions of the compatibility tests: argument reuse and the
// reference's selector example (compute and data-movement kernels include it).
#pragma once

#include <cstdint>

// Two accessor parameters bound to one object: the call reused one generated accessor.
template <typename A, typename B>
inline int64_t same_accessor(const A& a, int32_t middle, const B& b) {
    return (static_cast<const void*>(&a) == static_cast<const void*>(&b) ? 1000 : 0) + middle;
}

// The reference's selector example (external-functions docs), with bodies.  compute_entry
// produces one block of the drain DFB, which the operation allocates right after the
// descriptor DFB (first-fit, declaration order; the descriptor DFB is never shared).
template <typename Descriptor, int Scale, bool Flag>
inline void compute_entry(uint32_t input_address, int32_t count) {
    (void)input_address;
    (void)count;
    constexpr uint32_t drain = Descriptor::index + 1;
    cb_reserve_back(drain, 1);
    cb_push_back(drain, 1);
}
template <int Value>
inline void reader_entry(uint32_t input_address) { (void)input_address; }
inline void shared_entry() {}
inline void alias_entry() {}
