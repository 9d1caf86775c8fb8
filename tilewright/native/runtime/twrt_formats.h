// twrt_formats.h -- the tile codecs of formats.cpp (32x32 tiles, values row-major).
#pragma once

#include <cstdint>

namespace twrt {

/** bf16 bits of f: round to nearest even, every NaN -> 0x7FC0 (bf16.py). */
inline uint32_t bf16_bits(float f) {
    uint32_t b;
    __builtin_memcpy(&b, &f, 4);
    uint32_t rounded = (b + 0x7FFF + ((b >> 16) & 1)) >> 16;
    // A NaN is |b| above the infinity's bits: one signed compare of the magnitude (it is
    // below 2^31), which a vector loop does in two instructions, then a select.
    return int32_t(b & 0x7FFFFFFFu) > 0x7F800000 ? 0x7FC0u : rounded;
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
/** The tile's values row-major into out, rows ld floats apart (32: a tile on its own). */
bool decode_tile(uint32_t fmt, const uint8_t* src, float* out, int ld = 32);
/** -1 on success, -2 unsupported format, else the device-order index of a value an integer
 *  format cannot hold. */
int32_t encode_tile(uint32_t fmt, const float* values, uint8_t* dst);
/** DST tile d = v rounded to bf16 (round_bf16 of each value; d may be v). */
void dst_round(float* d, const float* v);
/** DST tile d += the tile at p (rows ldp floats apart), each sum rounded to bf16 if bf16. */
void dst_accumulate(float* d, const float* p, int ldp, bool bf16);
/** The codecs' copy in use: 1 AVX2, 0 baseline x86-64; want 0 / 1 selects, -1 asks. */
int32_t codec_simd(int32_t want);

}  // namespace twrt
