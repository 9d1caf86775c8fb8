// twrt_formats.h -- the tile codecs of formats.cpp (32x32 tiles, values row-major).
#pragma once

#include <cstdint>

namespace twrt {

/** bf16 bits of f: round to nearest even, every NaN -> 0x7FC0 (bf16.py). */
inline uint32_t bf16_bits(float f) {
    uint32_t b;
    __builtin_memcpy(&b, &f, 4);
    if ((b & 0x7F800000u) == 0x7F800000u && (b & 0x7FFFFF)) return 0x7FC0;
    return (b + 0x7FFF + ((b >> 16) & 1)) >> 16;
}
inline float round_bf16(float f) {
    uint32_t b = bf16_bits(f) << 16;
    float out;
    __builtin_memcpy(&out, &b, 4);
    return out;
}
uint16_t half_bits(float f);     // IEEE half as numpy converts (NaN payloads kept)
float half_value(uint16_t h);
int32_t tile_bytes(uint32_t fmt);  // -1: the format has no tile form
bool is_integer(uint32_t fmt);
bool decode_tile(uint32_t fmt, const uint8_t* src, float* out);
/** -1 on success, -2 unsupported format, else the device-order index of a value an integer
 *  format cannot hold. */
int32_t encode_tile(uint32_t fmt, const float* values, uint8_t* dst);
/** The codecs' copy in use: 1 AVX2, 0 baseline x86-64; want 0 / 1 selects, -1 asks. */
int32_t codec_simd(int32_t want);

}  // namespace twrt
