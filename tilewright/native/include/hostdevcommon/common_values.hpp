// hostdevcommon/common_values.hpp -- values visible to host and device code.
#pragma once

#include <cstddef>
#include <cstdint>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int16_t i16;
typedef int32_t i32;
typedef int64_t i64;

constexpr static std::uint32_t INVALID = 0;
constexpr static std::uint32_t VALID = 1;
