// sfpu_math.h -- the SFPU's programs for exp, recip, sqrt, rsqrt, log, sigmoid and tanh.
//
// The C++ twin of tilewright/device/ops/sfpu_algorithms.py, operation for operation (its
// docstring has the lane model and the LLK sources); every constant comes from that module's
// CONSTANTS table (twrt_sfpu_math.h, generated).  Built with -ffp-contract=off: each float /
// double operation here is one IEEE operation, as numpy's, so both engines give the same bits
// (tests/native/test_sfpu_algorithms.py).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "twrt_formats.h"
#include "twrt_sfpu_math.h"

namespace twrt::sfpu {

inline uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }
inline float from(uint32_t u) { return std::bit_cast<float>(u); }

// SFPMAD: exact product (float64), one rounding of the sum to float32; a NaN is 0x7F800001.
inline float mad(float a, float b, float c) {
    float out = float(double(a) * double(b) + double(c));
    return std::isnan(out) ? from(0x7F800001u) : out;
}
inline float mul(float a, float b) { return mad(a, b, 0.0f); }
inline float add(float a, float b) { return mad(a, 1.0f, b); }
inline float neg(float x) { return from(bits(x) ^ 0x80000000u); }
inline bool negative(float x) { return (bits(x) >> 31) != 0; }  // SFPSETCC < 0: the sign bit
inline int32_t exexp(float x) { return int32_t((bits(x) >> 23) & 0xFFu) - 127; }
inline int32_t exexp_biased(float x) { return int32_t((bits(x) >> 23) & 0xFFu); }
inline float setexp(float x, int32_t e) { return from((bits(x) & 0x807FFFFFu) | ((uint32_t(e) & 0xFFu) << 23)); }
inline float setman(float x, uint32_t m) { return from((bits(x) & 0xFF800000u) | (m & 0x7FFFFFu)); }
inline float setsgn(float x, float s) { return from((bits(x) & 0x7FFFFFFFu) | (bits(s) & 0x80000000u)); }
inline float addexp(float x, int32_t delta) {
    uint32_t u = bits(x), field = (u >> 23) & 0xFFu;
    return field != 0 && field != 255 ? from(uint32_t(int64_t(u) + (int64_t(delta) << 23))) : x;
}
inline float to_bf16(float x) { return round_bf16(x); }
// numpy's maximum / minimum (a NaN in either operand propagates).
inline float vmax(float a, float b) { return (a > b || std::isnan(a)) ? a : b; }
inline float vmin(float a, float b) { return (a < b || std::isnan(a)) ? a : b; }
inline uint32_t shft(uint32_t v, int32_t n) {
    if (n >= 32 || n <= -32) return 0;
    return n >= 0 ? v << n : v >> -n;
}

constexpr float kInf = INFINITY;
inline const float kNaN = from(0x7FC00000u);

// -- exp ------------------------------------------------------------------------------------------

inline float exp_approx(float x) {
    float z = mad(kSfpu_exp_approx_a, vmax(x, kSfpu_exp_approx_low), kSfpu_exp_approx_b_minus_c);
    float r = std::isnan(z) ? 65535.0f : std::nearbyint(z);
    r = r < 0.0f ? 0.0f : r > 65535.0f ? 65535.0f : r;
    return from(uint32_t(r) << 15);
}

inline float horner3(float x, float c0, float c1, float c2) { return mad(x, mad(x, c2, c1), c0); }

inline float exp_21f(float x) {
    float xlog2 = vmin(vmax(mad(x, kSfpu_exp21f_one_ln2, 127.0f), 0.0f), 255.0f);
    uint32_t man = (bits(xlog2) & 0x7FFFFFu) | 0x800000u;
    uint32_t z = shft(man, exexp(xlog2));
    int32_t exponent = int32_t((z >> 23) & 0xFFu);
    float frac = float(int32_t(z & 0x7FFFFFu));
    frac = horner3(frac, kSfpu_exp21f_c0, kSfpu_exp21f_c1, kSfpu_exp21f_c2);
    return exponent >= 255 ? kInf : setexp(frac, exponent);
}

inline float exp_fp32(float a) {
    float j = mul(kSfpu_exp_inv_ln2, a);
    float kr = std::isnan(j) ? 0.0f : std::nearbyint(j);
    kr = kr < -32767.0f ? -32767.0f : kr > 32767.0f ? 32767.0f : kr;
    int32_t k = int32_t(kr);
    float jf = float(k);
    float f = mad(jf, kSfpu_exp_ln2_hi, a);
    f = mad(jf, kSfpu_exp_ln2_lo, f);
    float r = kSfpu_exp_p6;
    r = mad(r, f, kSfpu_exp_p5);
    r = mad(r, f, kSfpu_exp_p4);
    r = mad(r, f, kSfpu_exp_p3);
    r = mad(r, f, kSfpu_exp_p2);
    float y = mad(r, f, 1.0f);
    r = mad(y, f, 1.0f);
    float under = mul(from(bits(y) - 1u), 0.0f);
    int32_t e = exexp_biased(r) + k;
    if (e < 1) return under;
    return e < 255 ? setexp(r, e) : add(under, kInf);
}

inline float exp(float x, bool approx, bool fp32) {
    if (approx) return exp_approx(x);
    return fp32 ? exp_fp32(x) : to_bf16(exp_21f(x));
}

// -- recip ----------------------------------------------------------------------------------------

inline float reciprocal(float x, int iterations) {
    float negative_x = setman(-1.0f, bits(x));
    float y = mad(kSfpu_recip_k0, negative_x, kSfpu_recip_k1);
    uint32_t scale_bits = ~bits(x);
    y = mad(y, negative_x, kSfpu_recip_k2);
    float scale = setman(from(scale_bits), 0);
    float t = mad(negative_x, y, 1.0f);
    scale = mul(scale, 0.5f);
    y = mad(y, t, y);
    for (int i = 1; i < iterations; ++i) {
        t = mad(negative_x, y, 1.0f);
        y = mad(y, t, y);
    }
    return setsgn(mul(y, scale), x);
}

inline float recip(float x, bool approx, bool fp32) {
    if (approx) return reciprocal(x, 1);
    return fp32 ? reciprocal(x, 2) : to_bf16(reciprocal(x, 1));
}

// -- sqrt / rsqrt ---------------------------------------------------------------------------------

inline float root(float x, bool approx, bool reciprocal_root) {
    uint32_t xb = bits(x);
    float y = from((approx ? kSfpuBits_sqrt_approx_magic : kSfpuBits_sqrt_magic) - (xb >> 1));
    uint32_t inf_minus_x = 0x7F800000u - xb;
    bool finite_nonzero = inf_minus_x != 0 && xb != 0;
    if (approx) {
        float c = mul(x, y);
        float t = mad(neg(y), c, kSfpu_sqrt_approx_k1);
        if (reciprocal_root)
            y = finite_nonzero ? mul(y, t) : from(inf_minus_x);
        else
            y = xb != 0x7F800000u ? mul(c, t) : c;
    } else {
        float xy = mul(x, y);
        float c = mul(neg(y), xy);
        y = mul(y, mad(c, add(kSfpu_sqrt_k2, c), kSfpu_sqrt_k1));
        xy = mul(x, y);
        float one_minus_xyy = mad(neg(y), xy, 1.0f);
        if (reciprocal_root)
            y = finite_nonzero ? mad(one_minus_xyy, addexp(y, -1), y) : from(inf_minus_x);
        else if (int32_t(xb) < int32_t(0x7F800000))
            y = mad(one_minus_xyy, mul(0.5f, xy), xy);
    }
    return negative(x) ? kNaN : y;
}

inline float sqrt(float x, bool approx, bool fp32) {
    float y = root(x, approx, false);
    return fp32 ? y : to_bf16(y);
}

inline float rsqrt(float x, bool approx, bool fp32) {
    float y = root(x, approx, true);
    return fp32 ? y : to_bf16(y);
}

// -- log ------------------------------------------------------------------------------------------

inline float log_specials(float x, float value) {
    if (bits(x) == 0x7F800000u) return kInf;
    if (exexp(x) == 128 || negative(x)) return kNaN;
    return value;
}

inline float log_bf16(float x) {
    float m = setexp(x, 127);
    float series = kSfpu_log_c5;
    series = mad(m, series, kSfpu_log_c4);
    series = mad(m, series, kSfpu_log_c3);
    series = mad(m, series, kSfpu_log_c2);
    series = mad(m, series, kSfpu_log_c1);
    series = mad(m, series, kSfpu_log_c0);
    float value = mad(float(exexp(x)), kSfpu_log_ln2, series);
    if (x == 0.0f) value = -kInf;
    return to_bf16(log_specials(x, value));
}

inline float log_fp32(float x) {
    int32_t e = exexp(x);
    float m = setexp(x, 127);
    if (m >= kSfpu_log_sqrt2) {
        m = mul(m, 0.5f);
        e += 1;
    }
    float z = mul(add(m, -1.0f), reciprocal(add(m, 1.0f), 2));
    float z2 = mul(z, z);
    float series = kSfpu_log_s5;
    series = mad(z2, series, kSfpu_log_s4);
    series = mad(z2, series, kSfpu_log_s3);
    series = mad(z2, series, kSfpu_log_s2);
    series = mad(z2, series, kSfpu_log_s1);
    series = mad(z2, series, 1.0f);
    float ln_m = mul(2.0f, mul(z, series));
    float value = mad(float(e), kSfpu_log_ln2, ln_m);
    if (x == 0.0f) value = -kInf;
    return log_specials(x, value);
}

inline float log(float x, bool, bool fp32) { return fp32 ? log_fp32(x) : log_bf16(x); }

// -- sigmoid --------------------------------------------------------------------------------------

inline float sigmoid_lut(float x) {
    static const float kSlope[6] = {kSfpu_sigmoid_lut_a0, kSfpu_sigmoid_lut_a1, kSfpu_sigmoid_lut_a2,
                                    kSfpu_sigmoid_lut_a3, kSfpu_sigmoid_lut_a4, kSfpu_sigmoid_lut_a5};
    static const float kOffset[6] = {kSfpu_sigmoid_lut_b0, kSfpu_sigmoid_lut_b1, kSfpu_sigmoid_lut_b2,
                                     kSfpu_sigmoid_lut_b3, kSfpu_sigmoid_lut_b4, kSfpu_sigmoid_lut_b5};
    static const float kBreak[5] = {kSfpu_sigmoid_lut_break0, kSfpu_sigmoid_lut_break1, kSfpu_sigmoid_lut_break2,
                                    kSfpu_sigmoid_lut_break3, kSfpu_sigmoid_lut_break4};
    float a = from(bits(x) & 0x7FFFFFFFu);
    int piece = 5;
    for (int i = 4; i >= 0; --i)
        if (a < kBreak[i]) piece = i;
    return add(setsgn(mad(kSlope[piece], a, kOffset[piece]), x), 0.5f);
}

inline float sigmoid(float x, bool approx, bool fp32) {
    if (approx) return sigmoid_lut(x);
    if (fp32) return reciprocal(add(1.0f, exp_fp32(neg(x))), 2);
    return to_bf16(reciprocal(add(1.0f, exp_21f(neg(x))), 1));
}

// -- tanh -----------------------------------------------------------------------------------------

inline float fabs_bits(float x) { return from(bits(x) & 0x7FFFFFFFu); }

inline float tanh_fp32(float x) {
    if (fabs_bits(x) < kSfpu_tanh_small) {
        float x2 = mul(x, x);
        float p = kSfpu_tanh_q4;
        p = mad(x2, p, kSfpu_tanh_q3);
        p = mad(x2, p, kSfpu_tanh_q2);
        p = mad(x2, p, kSfpu_tanh_q1);
        p = mad(x2, p, kSfpu_tanh_q0);
        return mul(x, p);
    }
    return mad(2.0f, sigmoid(mul(2.0f, x), false, true), -1.0f);
}

inline float tanh_bf16(float x) {
    float a = fabs_bits(x);
    float p = kSfpu_tanh_p6;
    p = mad(a, p, kSfpu_tanh_p5);
    p = mad(a, p, kSfpu_tanh_p4);
    p = mad(a, p, kSfpu_tanh_p3);
    p = mad(a, p, kSfpu_tanh_p2);
    p = mad(a, p, kSfpu_tanh_p1);
    p = mad(a, p, 0.0f);
    return to_bf16(setsgn(vmin(p, 1.0f), x));
}

inline float tanh_lut(float x) {
    float a = fabs_bits(x);
    if (a < 1.0f) return setsgn(mad(kSfpu_tanh_lut_a0, a, kSfpu_tanh_lut_b0), x);
    if (a < 2.0f) return setsgn(mad(kSfpu_tanh_lut_a1, a, kSfpu_tanh_lut_b1), x);
    return setsgn(mad(kSfpu_tanh_lut_a2, a, kSfpu_tanh_lut_b2), x);
}

inline float tanh(float x, bool approx, bool fp32) {
    if (approx) return tanh_lut(x);
    return fp32 ? tanh_fp32(x) : tanh_bf16(x);
}

}  // namespace twrt::sfpu
