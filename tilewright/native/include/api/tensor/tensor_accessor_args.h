// api/tensor/tensor_accessor_args.h -- TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>.
//
// tt-metal decodes a tensor's distribution from the kernel's compile-time (and common
// runtime) arguments.  Here the object only remembers the two offsets (so it stays a
// literal type: `constexpr auto args = TensorAccessorArgs<0>();` compiles); the decoding
// happens in Python (tilewright.device.kernel_api.accessor) when a TensorAccessor is
// built from it.
//
// next_compile_time_args_offset() is constexpr when the kernel's compile-time args are
// (KERNEL_COMPILE_TIME_ARGS defined: whole native kernels), so the tt-metal idiom
// `TensorAccessorArgs<args_a.next_compile_time_args_offset()>()` works; it needs only the
// word count of one description (interleaved: config + aligned page size; sharded:
// config, rank, banks, tensor and shard shapes, bank coordinates two per word).
#pragma once

#include <cstddef>
#include <cstdint>

#include "api/compile_time_args.h"
#include "tilewright/bridge.h"

namespace tw {
#ifdef KERNEL_COMPILE_TIME_ARGS
constexpr uint32_t accessor_args_words(std::size_t offset) {
    const uint32_t config = kernel_compile_time_args[offset];
    if ((config & 1u) == 0) return 2;  // interleaved
    const uint32_t rank = kernel_compile_time_args[offset + 1];
    const uint32_t banks = kernel_compile_time_args[offset + 2];
    return 3 + 2 * rank + (banks + 1) / 2;
}
#define TW_ACCESSOR_CONSTEXPR constexpr
#else
inline uint32_t accessor_args_words(std::size_t offset) {
    return static_cast<uint32_t>(tw::call("TensorAccessorArgs.num_words", offset, 0));
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
};
