// formats.cpp -- tile codecs, bit-identical to tilewright/device/formats (the tests
// compare them on random data with NaN, infinities and denormals):
//
//   bf16      round to nearest even, every NaN -> 0x7FC0 (bf16.py)
//   fp32      raw bits;  fp16  IEEE half, round to nearest even (numpy's cast)
//   bfp*_b / bfp*   shared exponent per 16-element face row, the exact packer of
//             blockfloat.py (max exponent, shift, round half to even, saturate) and
//             the unpacker's bit assembly (normalise, flush)
//   integers  two's complement little-endian; decoding to float is a C cast
//
// Tiles are 32x32 (4 faces of 16x16); values cross this module in row-major order.
#include <cmath>

#include "twrt.h"
#include "twrt_format_table.h"
#include "twrt_formats.h"

namespace twrt {

namespace {

// twrt::Fmt and format_info(): twrt_format_table.h, generated from device/formats/dataformat.py.

// Row-major index of device element i of a 32x32 tile (face-major, row-major in a face).
struct Order {
    uint16_t rm[1024];
    Order() {
        for (int i = 0; i < 1024; ++i) {
            int face = i / 256, r = (i % 256) / 16, c = i % 16;
            rm[i] = uint16_t(((face / 2) * 16 + r) * 32 + (face % 2) * 16 + c);
        }
    }
};
const Order kOrder;

inline uint32_t bits_of(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}
inline float float_of(uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}

int bfp_width(uint32_t fmt) { return format_info(fmt).bfp_mantissa; }
bool bfp_exp_a(uint32_t fmt) { return format_info(fmt).bfp_exp_a != 0; }

void decode_bfp(uint32_t fmt, const uint8_t* src, float* out) {
    const int w = bfp_width(fmt);
    const int code_bits = w + 1;
    const uint32_t max_mag = (1u << w) - 1;
    const int rebias = bfp_exp_a(fmt) ? 112 : 0;
    const uint8_t* mant = src + 64;
    for (int i = 0; i < 1024; ++i) {
        int32_t shared = src[i / 16];
        uint32_t code;
        if (code_bits == 8) {
            code = mant[i];
        } else {
            int per_byte = 8 / code_bits;
            code = (mant[i / per_byte] >> ((i % per_byte) * code_bits)) & ((1u << code_bits) - 1);
        }
        uint32_t mag = code & max_mag, sign = code >> w, bits;
        if (mag == 0) {
            bits = sign << 31;
        } else {
            int top = 31 - __builtin_clz(mag);
            int normalise = (w - 1) - top;
            if (normalise > shared) {
                bits = 0;
            } else {
                uint32_t fraction = (((mag << normalise) << 1) & max_mag) << (23 - w);
                uint32_t exponent = uint32_t(shared - normalise + rebias);
                bits = (sign << 31) | ((exponent << 23) & 0xFFFFFFFFu) | fraction;
            }
        }
        out[kOrder.rm[i]] = float_of(bits);
    }
}

void encode_bfp(uint32_t fmt, const float* values, uint8_t* dst, uint32_t tile_bytes) {
    const int w = bfp_width(fmt);
    const bool a = bfp_exp_a(fmt);
    const int shift = 24 - w;
    std::memset(dst, 0, tile_bytes);
    uint8_t codes[1024];
    for (int b = 0; b < 64; ++b) {
        uint32_t bits[16], mant[16];
        uint8_t exp[16];
        bool nonzero[16];
        uint8_t shared = 0;
        for (int j = 0; j < 16; ++j) {
            bits[j] = bits_of(values[kOrder.rm[b * 16 + j]]);
            exp[j] = uint8_t((bits[j] >> 23) & 0xFF);
            nonzero[j] = exp[j] != 0;
            mant[j] = bits[j] & 0x7FFFFF;
            if (a) {
                int rebiased = int(exp[j]) - 112;
                if (rebiased > 31) mant[j] = 0x7FFFFF;
                if (rebiased < 0) mant[j] = 0;
                exp[j] = uint8_t(rebiased < 0 ? 0 : rebiased > 31 ? 31 : rebiased);
            }
            if (exp[j] > shared) shared = exp[j];
        }
        dst[b] = shared;
        for (int j = 0; j < 16; ++j) {
            uint32_t m = mant[j] | (1u << 23);
            uint32_t dist = uint32_t(shared - exp[j]);
            if (dist > 31) dist = 31;
            m >>= dist;
            uint32_t kept = (m >> shift) & 1;
            m += (1u << (shift - 1)) - 1 + kept;
            m >>= shift;
            if (m > (1u << w) - 1) m = (1u << w) - 1;
            uint32_t mag = nonzero[j] ? m : 0;
            uint32_t code = mag ? (((bits[j] >> (31 - w)) & 0xFF) & (1u << w)) | mag : 0;
            codes[b * 16 + j] = uint8_t(code);
        }
    }
    uint8_t* mant = dst + 64;
    if (w == 7) {
        std::memcpy(mant, codes, 1024);
    } else {
        int code_bits = w + 1, per_byte = 8 / code_bits;
        for (int i = 0; i < 1024; ++i) mant[i / per_byte] |= uint8_t(codes[i] << ((i % per_byte) * code_bits));
    }
}

}  // namespace

// IEEE half <-> float as numpy converts: round to nearest even, and NaN payloads kept as they
// are (numpy's npy_floatbits_to_halfbits / npy_halfbits_to_floatbits do not quiet a NaN).
uint16_t half_bits(float f) {
    uint32_t b = bits_of(f);
    if ((b & 0x7F800000u) == 0x7F800000u && (b & 0x7FFFFF)) {
        uint16_t h = uint16_t(0x7C00u + ((b & 0x7FFFFF) >> 13));
        if (h == 0x7C00u) ++h;
        return uint16_t(((b >> 16) & 0x8000u) | h);
    }
    _Float16 h = static_cast<_Float16>(f);
    uint16_t out;
    std::memcpy(&out, &h, 2);
    return out;
}

float half_value(uint16_t h) {
    if ((h & 0x7C00u) == 0x7C00u && (h & 0x3FF)) {
        return float_of((uint32_t(h & 0x8000u) << 16) | 0x7F800000u | (uint32_t(h & 0x3FF) << 13));
    }
    _Float16 v;
    std::memcpy(&v, &h, 2);
    return float(v);
}

int32_t tile_bytes(uint32_t fmt) { return format_info(fmt).tile_bytes; }

bool is_integer(uint32_t fmt) { return format_info(fmt).integer != 0; }

namespace {

// The codecs' bodies, compiled twice below: once for baseline x86-64 (SSE2) and once for
// AVX2, chosen per CPU at load time.  The runtime is built once per machine and its cache
// may be shared by other machines, so it is not built with -march; the AVX2 copy packs a
// tile about twice as fast.  AVX2 without FMA under -ffp-contract=off is the same IEEE
// arithmetic and the same integer steps lane for lane, so both copies give the same bits
// (tests/native/test_runtime.py runs the codec tests on each).

// The bf16 rows in GCC's vector extensions, so the AVX2 copy gets 256-bit registers and
// the baseline copy SSE2 halves.  Left to the auto-vectoriser, a face-row loop carried an
// alias check and a scalar tail (encode 40% slower), and decode was 2x slower once the
// row stride was a variable.  The lane counts are the fastest GCC 12 lowers (decode 48 ns,
// encode 145 ns a tile on AVX2; 16-lane encode lowers to 550 ns, 8-lane decode to 67).
// The baseline copy, for CPUs without AVX2, pays for one body: encode 700 ns (SSE2 has
// no unsigned 32-bit min or pack), against 400 ns for its scalar loop.
typedef uint32_t U32x8 __attribute__((vector_size(32)));
typedef int32_t I32x8 __attribute__((vector_size(32)));
typedef uint16_t U16x8 __attribute__((vector_size(16)));
typedef uint16_t U16x16 __attribute__((vector_size(32)));
typedef uint32_t U32x16 __attribute__((vector_size(64)));

// One face row: 16 bf16 to 16 floats (the upper halves).
[[gnu::always_inline]] inline void decode_bf16_row(const uint8_t* s, float* d) {
    U16x16 h;
    std::memcpy(&h, s, sizeof h);
    U32x16 b = __builtin_convertvector(h, U32x16) << 16;
    std::memcpy(d, &b, sizeof b);
}

// The formats decoded through the element order table (row stride 32 only; decode_tile
// stages other strides through a tile).
[[gnu::always_inline]] inline bool decode_other(uint32_t fmt, const uint8_t* src, float* out) {
    switch (fmt) {
        case Float16:
            for (int i = 0; i < 1024; ++i) {
                uint16_t h;
                std::memcpy(&h, src + 2 * i, 2);
                out[kOrder.rm[i]] = half_value(h);
            }
            return true;
        case Int32:
            for (int i = 0; i < 1024; ++i) {
                int32_t v;
                std::memcpy(&v, src + 4 * i, 4);
                out[kOrder.rm[i]] = float(v);
            }
            return true;
        case UInt32: case RawUInt32:
            for (int i = 0; i < 1024; ++i) {
                uint32_t v;
                std::memcpy(&v, src + 4 * i, 4);
                out[kOrder.rm[i]] = float(v);
            }
            return true;
        case UInt16: case RawUInt16:
            for (int i = 0; i < 1024; ++i) {
                uint16_t v;
                std::memcpy(&v, src + 2 * i, 2);
                out[kOrder.rm[i]] = float(v);
            }
            return true;
        case UInt8: case RawUInt8:
            for (int i = 0; i < 1024; ++i) out[kOrder.rm[i]] = float(src[i]);
            return true;
        case Int8:
            for (int i = 0; i < 1024; ++i) out[kOrder.rm[i]] = float(int8_t(src[i]));
            return true;
        default:
            if (bfp_width(fmt)) {
                decode_bfp(fmt, src, out);
                return true;
            }
            return false;
    }
}

// Tile values row-major with row stride ld (32: a tile on its own; more: one tile of a
// row of tiles laid side by side, as a matmul block's B operand).
[[gnu::always_inline]] inline bool decode_impl(uint32_t fmt, const uint8_t* src, float* out, int ld) {
    switch (fmt) {
        case Float16_b:  // face by face: 16 contiguous values per face row
            for (int f = 0; f < 4; ++f)
                for (int r = 0; r < 16; ++r)
                    decode_bf16_row(src + 2 * (f * 256 + r * 16), out + ((f / 2) * 16 + r) * ld + (f % 2) * 16);
            return true;
        case Float32:
            for (int f = 0; f < 4; ++f)
                for (int r = 0; r < 16; ++r)
                    std::memcpy(out + ((f / 2) * 16 + r) * ld + (f % 2) * 16, src + 4 * (f * 256 + r * 16), 64);
            return true;
        default:
            return ld == 32 && decode_other(fmt, src, out);
    }
}

}  // namespace

// Integer packing: the value must be finite, integral and in range (plain.py's policy);
// returns the device-order index of the first value that is not, or -1.
template <typename T>
static int32_t encode_ints(const float* values, uint8_t* dst, double lo, double hi) {
    for (int i = 0; i < 1024; ++i) {
        float v = values[kOrder.rm[i]];
        if (!std::isfinite(v) || v != std::trunc(v) || double(v) < lo || double(v) > hi) return i;
        T t = static_cast<T>(double(v));
        std::memcpy(dst + sizeof(T) * i, &t, sizeof(T));
    }
    return -1;
}

namespace {

// A NaN is a magnitude above the infinity's bits (all lanes ones where so).
[[gnu::always_inline]] inline I32x8 is_nan_lanes(U32x8 b) {
    return reinterpret_cast<I32x8>(b & 0x7FFFFFFFu) > 0x7F800000;
}

// bf16_bits (twrt_formats.h) on 8 lanes: the same integer steps, lane by lane.
[[gnu::always_inline]] inline U32x8 bf16_bits_lanes(U32x8 b) {
    U32x8 rounded = (b + 0x7FFFu + ((b >> 16) & 1u)) >> 16;
    U32x8 nan = reinterpret_cast<U32x8>(is_nan_lanes(b));
    return (rounded & ~nan) | (nan & 0x7FC0u);
}

// One face row: 16 values to 16 bf16.
[[gnu::always_inline]] inline void encode_bf16_row(const float* v, uint8_t* d) {
    for (int half = 0; half < 2; ++half) {
        U32x8 b;
        std::memcpy(&b, v + 8 * half, sizeof b);
        U16x8 h = __builtin_convertvector(bf16_bits_lanes(b), U16x8);
        std::memcpy(d + 16 * half, &h, sizeof h);
    }
}

[[gnu::always_inline]] inline int32_t encode_impl(uint32_t fmt, const float* values, uint8_t* dst) {
    switch (fmt) {
        case Float16_b:
            for (int f = 0; f < 4; ++f)
                for (int r = 0; r < 16; ++r)
                    encode_bf16_row(values + ((f / 2) * 16 + r) * 32 + (f % 2) * 16, dst + 2 * (f * 256 + r * 16));
            return -1;
        case Float32:
            for (int f = 0; f < 4; ++f)
                for (int r = 0; r < 16; ++r)
                    std::memcpy(dst + 4 * (f * 256 + r * 16), values + ((f / 2) * 16 + r) * 32 + (f % 2) * 16, 64);
            return -1;
        case Float16:
            for (int i = 0; i < 1024; ++i) {
                uint16_t h = half_bits(values[kOrder.rm[i]]);
                std::memcpy(dst + 2 * i, &h, 2);
            }
            return -1;
        case Int32: return encode_ints<int32_t>(values, dst, -2147483648.0, 2147483647.0);
        case UInt32: case RawUInt32: return encode_ints<uint32_t>(values, dst, 0.0, 4294967295.0);
        case UInt16: case RawUInt16: return encode_ints<uint16_t>(values, dst, 0.0, 65535.0);
        case UInt8: case RawUInt8: return encode_ints<uint8_t>(values, dst, 0.0, 255.0);
        case Int8: return encode_ints<int8_t>(values, dst, -128.0, 127.0);
        default:
            if (bfp_width(fmt)) {
                encode_bfp(fmt, values, dst, uint32_t(tile_bytes(fmt)));
                return -1;
            }
            return -2;
    }
}

// DST's precision (compute.cpp's write_dst and accumulate_dst): round_bf16 of each value,
// or of d + p, on 8-lane vectors, so the AVX2 copy applies.
typedef float F32x8 __attribute__((vector_size(32)));

[[gnu::always_inline]] inline F32x8 round_bf16_lanes(F32x8 f) {
    return reinterpret_cast<F32x8>(bf16_bits_lanes(reinterpret_cast<U32x8>(f)) << 16);
}

[[gnu::always_inline]] inline void dst_round_impl(float* d, const float* v) {
    for (int i = 0; i < 1024; i += 8) {
        F32x8 x;
        std::memcpy(&x, v + i, sizeof x);
        x = round_bf16_lanes(x);
        std::memcpy(d + i, &x, sizeof x);
    }
}

// x + y as numpy's float32 d + p gives it: where both are NaN, x86 returns the first
// operand's NaN, quieted.  The compiler may commute a vector add (GCC did in the baseline
// copy), so that payload is chosen here rather than left to the operand order.
[[gnu::always_inline]] inline F32x8 add_lanes(F32x8 x, F32x8 y) {
    U32x8 xb = reinterpret_cast<U32x8>(x);
    U32x8 both = reinterpret_cast<U32x8>(is_nan_lanes(xb) & is_nan_lanes(reinterpret_cast<U32x8>(y)));
    U32x8 sum = reinterpret_cast<U32x8>(x + y);
    return reinterpret_cast<F32x8>((sum & ~both) | ((xb | 0x00400000u) & both));
}

[[gnu::always_inline]] inline void dst_accumulate_impl(float* d, const float* p, int ldp, bool bf16) {
    for (int r = 0; r < 32; ++r) {
        for (int c = 0; c < 32; c += 8) {
            F32x8 x, y;
            std::memcpy(&x, d + r * 32 + c, sizeof x);
            std::memcpy(&y, p + r * ldp + c, sizeof y);
            x = add_lanes(x, y);
            if (bf16) x = round_bf16_lanes(x);
            std::memcpy(d + r * 32 + c, &x, sizeof x);
        }
    }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TW_AVX2_CODECS 1
__attribute__((target("avx2"))) bool decode_avx2(uint32_t fmt, const uint8_t* src, float* out, int ld) {
    return decode_impl(fmt, src, out, ld);
}
__attribute__((target("avx2"))) int32_t encode_avx2(uint32_t fmt, const float* values, uint8_t* dst) {
    return encode_impl(fmt, values, dst);
}
__attribute__((target("avx2"))) void dst_round_avx2(float* d, const float* v) { dst_round_impl(d, v); }
__attribute__((target("avx2"))) void dst_accumulate_avx2(float* d, const float* p, int ldp, bool bf16) {
    dst_accumulate_impl(d, p, ldp, bf16);
}
const bool g_has_avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
}();
bool g_avx2 = g_has_avx2;
#endif

}  // namespace

// The AVX2 copy of fn (fn##_avx2) where this CPU has it and codec_simd has not turned it
// off, else the baseline one (fn##_impl).
#ifdef TW_AVX2_CODECS
#define TW_CODEC_COPY(fn, ...) (g_avx2 ? fn##_avx2(__VA_ARGS__) : fn##_impl(__VA_ARGS__))
#else
#define TW_CODEC_COPY(fn, ...) fn##_impl(__VA_ARGS__)
#endif

bool decode_tile(uint32_t fmt, const uint8_t* src, float* out, int ld) {
    if (fmt == Float16_b || fmt == Float32 || ld == 32) return TW_CODEC_COPY(decode, fmt, src, out, ld);
    float tile[1024];
    if (!TW_CODEC_COPY(decode, fmt, src, tile, 32)) return false;
    for (int r = 0; r < 32; ++r) std::memcpy(out + r * ld, tile + r * 32, 32 * sizeof(float));
    return true;
}

int32_t encode_tile(uint32_t fmt, const float* values, uint8_t* dst) {
    return TW_CODEC_COPY(encode, fmt, values, dst);
}

void dst_round(float* d, const float* v) { TW_CODEC_COPY(dst_round, d, v); }

void dst_accumulate(float* d, const float* p, int ldp, bool bf16) { TW_CODEC_COPY(dst_accumulate, d, p, ldp, bf16); }

/** Which copy of the codecs runs: 1 the AVX2 one, 0 the baseline.  want 0 / 1 selects
 *  (1 only where the CPU has AVX2), -1 only asks. */
int32_t codec_simd(int32_t want) {
#ifdef TW_AVX2_CODECS
    if (want >= 0) g_avx2 = want == 1 && g_has_avx2;
    return g_avx2 ? 1 : 0;
#else
    (void)want;
    return 0;
#endif
}

}  // namespace twrt

// Test hooks: the codecs on caller buffers (tests/native compare them with device/formats).
TW_EXPORT int32_t twrt_test_decode(uint32_t fmt, const uint8_t* src, float* out) {
    return twrt::decode_tile(fmt, src, out) ? 0 : -1;
}
TW_EXPORT int32_t twrt_test_encode(uint32_t fmt, const float* values, uint8_t* dst) {
    return twrt::encode_tile(fmt, values, dst);
}
TW_EXPORT int32_t twrt_test_codec_simd(int32_t want) { return twrt::codec_simd(want); }
TW_EXPORT void twrt_test_dst_round(float* d, const float* v) { twrt::dst_round(d, v); }
TW_EXPORT void twrt_test_dst_accumulate(float* d, const float* p, int32_t ldp, int32_t bf16) {
    twrt::dst_accumulate(d, p, ldp, bf16 != 0);
}
