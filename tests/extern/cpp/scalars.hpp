// scalars.hpp -- scalar results, template arguments and dispatch conditions.
#pragma once

#include <cstdint>
#include <cstring>

inline int32_t add_i32(int32_t a, int32_t b) { return a + b; }
inline int64_t times_big(int64_t a) { return a * 4000000000LL; }
inline int64_t identity_i64(int64_t v) { return v; }

template <int A, bool B, uint32_t FloatBits, uint32_t U, int N>
inline int64_t encode_template() {
    float f;
    const uint32_t bits = FloatBits;
    std::memcpy(&f, &bits, 4);
    return static_cast<int64_t>(A) * 1000000 + (B ? 100000 : 0) + static_cast<int64_t>(f * 100) +
           static_cast<int64_t>(U) * 10 + N;
}

template <typename D>
inline int64_t describe() {
    return D::index * 1000000 + D::pages_per_block * 10000 + D::block_count * 1000 + D::page_size_bytes / 1024;
}

template <uint32_t Id>
inline int64_t dfb_id() { return Id; }

inline int32_t pick(int32_t value) { return value; }
