// api/tensor/tensor_accessor_args.h -- TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>.
//
// tt-metal decodes a tensor's distribution from the kernel's compile-time (and common
// runtime) arguments.  The object only remembers the two offsets (so it stays a literal
// type: `constexpr auto args = TensorAccessorArgs<0>();` compiles); a TensorAccessor built
// from it reads the words (tilewright.device.kernel_api.accessor.tensor_accessor_args:
// interleaved = config, aligned page size; sharded = config, rank, banks, tensor and shard
// shapes, bank coordinates two per word).
//
// next_compile_time_args_offset() is constexpr when the kernel's compile-time args are
// (KERNEL_COMPILE_TIME_ARGS defined: whole native kernels), so the tt-metal idiom
// `TensorAccessorArgs<args_a.next_compile_time_args_offset()>()` works.
#pragma once

#include <cstddef>
#include <cstdint>

#include "api/compile_time_args.h"
#include "tilewright/runtime.h"

namespace tw {
#ifdef KERNEL_COMPILE_TIME_ARGS
constexpr uint32_t cta_count = sizeof(kernel_compile_time_args) / sizeof(uint32_t);
constexpr uint32_t accessor_args_words(std::size_t offset) {
    if (offset >= cta_count) return 1;  // not an accessor: the build of TensorAccessor reports it
    const uint32_t config = kernel_compile_time_args[offset];
    if ((config & 1u) == 0) return 2;  // interleaved
    const uint32_t rank = offset + 1 < cta_count ? kernel_compile_time_args[offset + 1] : 0;
    const uint32_t banks = offset + 2 < cta_count ? kernel_compile_time_args[offset + 2] : 0;
    return 3 + 2 * rank + (banks + 1) / 2;
}
inline uint32_t accessor_words(std::size_t offset, uint32_t* out, uint32_t cap, Loc) {
    uint32_t n = 0;
    for (std::size_t i = offset; i < cta_count && n < cap && n < accessor_args_words(offset); ++i)
        out[n++] = kernel_compile_time_args[i];
    return n;
}
#define TW_ACCESSOR_CONSTEXPR constexpr
#else
inline uint32_t accessor_words(std::size_t offset, uint32_t* out, uint32_t cap, Loc loc) {
    const uint32_t config = twrt_compile_time_arg(int(offset), loc);
    uint32_t n = 2;
    if (config & 1u) {
        const uint32_t rank = twrt_compile_time_arg(int(offset + 1), loc);
        const uint32_t banks = twrt_compile_time_arg(int(offset + 2), loc);
        n = 3 + 2 * rank + (banks + 1) / 2;
    }
    for (uint32_t i = 0; i < n && i < cap; ++i) out[i] = twrt_compile_time_arg(int(offset + i), loc);
    return n < cap ? n : cap;
}
inline uint32_t accessor_args_words(std::size_t offset) {
    uint32_t words[64];
    return accessor_words(offset, words, 64, TW_HERE);
}
#define TW_ACCESSOR_CONSTEXPR inline
#endif
}  // namespace tw

template <std::size_t CTA_OFFSET, std::size_t CRTA_OFFSET = 0>
struct TensorAccessorArgs {
    static constexpr std::size_t compile_time_args_offset = CTA_OFFSET;
    static constexpr std::size_t runtime_args_offset = CRTA_OFFSET;

    constexpr TensorAccessorArgs() = default;

    /** Offset of the next object's compile-time args. */
    static TW_ACCESSOR_CONSTEXPR uint32_t next_compile_time_args_offset() {
        return static_cast<uint32_t>(CTA_OFFSET + tw::accessor_args_words(CTA_OFFSET));
    }
    /** Offset of the next object's common runtime args (this encoding uses none). */
    static constexpr uint32_t next_common_runtime_args_offset() { return static_cast<uint32_t>(CRTA_OFFSET); }
};

namespace tensor_accessor::detail {
/**
 * The compile-time-args offset of the TENSOR_IDX-th of several TensorAccessorArgs laid end
 * to end from CTA_OFFSET (tt-metal's helper; the TT-Lang compiler emits it for every tensor
 * a kernel reads or writes).  Each object's words follow the previous one's.
 */
template <uint32_t TENSOR_IDX, uint32_t CTA_OFFSET>
TW_ACCESSOR_CONSTEXPR uint32_t get_tensor_accessor_args_cta_offset() {
    if constexpr (TENSOR_IDX == 0) {
        return CTA_OFFSET;
    } else {
        return TensorAccessorArgs<get_tensor_accessor_args_cta_offset<TENSOR_IDX - 1, CTA_OFFSET>()>::
            next_compile_time_args_offset();
    }
}
}  // namespace tensor_accessor::detail
