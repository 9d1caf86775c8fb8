// twrt_formats.h -- the tile codecs of formats.cpp (32x32 tiles, values row-major).
#pragma once

#include <cstdint>

namespace twrt {

uint32_t bf16_bits(float f);   // round to nearest even, NaN -> 0x7FC0
float round_bf16(float f);
uint16_t half_bits(float f);     // IEEE half as numpy converts (NaN payloads kept)
float half_value(uint16_t h);
int32_t tile_bytes(uint32_t fmt);  // -1: the format has no tile form
bool is_integer(uint32_t fmt);
bool decode_tile(uint32_t fmt, const uint8_t* src, float* out);
/** -1 on success, -2 unsupported format, else the device-order index of a value an integer
 *  format cannot hold. */
int32_t encode_tile(uint32_t fmt, const float* values, uint8_t* dst);

}  // namespace twrt
