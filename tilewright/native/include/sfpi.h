// sfpi.h -- SFPI, the C++ vector language of the Tensix SFPU, emulated on DST.
//
// User SFPU code (tt-metal's custom_sfpi_add and the ckernel_sfpu_*.h style) runs inside an
// SFPU call wrapper (_llk_math_eltwise_{unary,binary,ternary}_sfpu_params_ or the
// SFPU_*_CALL macros, tilewright/sfpi_glue.h), which points the DST row counter at a face and
// calls the function once per face.  The lane model is Wormhole's (tt-isa-documentation,
// WormholeB0 SFPLOAD / SFPSTORE):
//
//   * a vector has 32 lanes; dst_reg[i] is the vector at DST row address A = base + 2*i,
//     where base is the wrapper's row counter (advanced by `dst_reg++`, two rows a step);
//   * lane l of address A is DST row (A & ~3) + l/8, column 2*(l%8) + ((A & 2) ? 1 : 0): a
//     vector is the even or the odd columns of four DST rows of 16 datums;
//   * a 32x32 tile is 64 DST rows (four 16x16 faces, face f at rows 16f), so 32 vectors:
//     dst_reg[32*t + 8*f + k] is vector k of face f of DST tile t when base is 0.
//
// Values: vFloat is IEEE float32 per lane (the SFPU's denormal flushing and its MAD
// rounding are not modelled), vInt two's complement int32, vUInt uint32.  A store into a
// bf16 DST (fp32_dest_acc_en off) flushes denormals and truncates the mantissa, as SFPSTORE
// does; a float32 DST keeps the bits.  Lane predication (v_if / v_elseif / v_else / v_endif,
// nested, v_and) masks every assignment to a vector variable and every DST store.
//
// SFPI names this emulation does not implement are declared and fail at build time with a
// static_assert naming them (see the end of this file).
#pragma once

#include <cstdint>  // no <cmath> / <bit>: every compute kernel includes this header (build time)

#include "tilewright/runtime.h"

namespace sfpi {

constexpr int SFP_LANES = 32;
constexpr int SFP_DESTREG_STRIDE = 2;

class vFloat;
class vInt;
class vUInt;
class vCond;

namespace detail {

/** The SFPU's state while a wrapper runs its SFPI function (one at a time: a fiber never
 *  switches inside SFPI code, which makes no blocking calls). */
struct State {
    twrt_DstView view{nullptr, 0, 0};
    bool active = false;
    uint32_t row = 0;            // the DST row counter (RWC Dst)
    uint32_t face = 0;           // its carriage-return value: the current face's first row
    uint32_t enabled = ~0u;      // lanes enabled by the predication stack
    int depth = 0;               // open v_if blocks
    uint64_t ops = 0;            // vector instructions executed (the wrapper's cost)
    tw::Loc loc{"", 0};          // the wrapper's call site
};
inline State state;

template <typename... T>
inline constexpr bool unsupported = false;

[[noreturn]] inline void fail(const char* what) { twrt_fail(TW_ERR_KERNEL, what, state.loc); }

constexpr float as_float(uint32_t b) { return __builtin_bit_cast(float, b); }
constexpr uint32_t as_bits(float f) { return __builtin_bit_cast(uint32_t, f); }

/** The DST float (row-major 32x32 tiles) holding lane `lane` of the vector at row address `addr`. */
inline float* lane_ptr(uint32_t addr, int lane) {
    const uint32_t row = (addr & ~3u) + uint32_t(lane / 8);
    const uint32_t col = uint32_t(lane % 8) * 2 + ((addr & 2u) ? 1u : 0u);
    const uint32_t tile = row / 64, face = (row % 64) / 16, face_row = row % 16;
    if (int64_t(tile) >= state.view.tiles) {
        twrt_fail(TW_ERR_KERNEL,
                  "sfpi::dst_reg: the vector reaches past the DST tiles of one acquire "
                  "(row address beyond the last tile)",
                  state.loc);
    }
    return state.view.dst + size_t(tile) * 1024 + ((face / 2) * 16 + face_row) * 32 + (face % 2) * 16 + col;
}

inline void need_wrapper() {
    if (!state.active)
        twrt_fail(TW_ERR_KERNEL,
                  "sfpi::dst_reg used outside an SFPU call wrapper (_llk_math_eltwise_*_sfpu_params_ or "
                  "SFPU_*_CALL): nothing points the DST row counter at a tile",
                  TW_HERE);
}

/** SFPSTORE into DST: bf16 DST flushes denormals and truncates toward zero. */
inline float store_value(uint32_t bits) {
    if (state.view.fp32) return as_float(bits);
    if ((bits & 0x7F800000u) == 0) bits &= 0x80000000u;
    return as_float(bits & 0xFFFF0000u);
}

struct Lanes {
    uint32_t b[SFP_LANES];
};

}  // namespace detail

/** A lane mask: the result of a vector comparison, combined with && || !. */
class vCond {
public:
    explicit vCond(uint32_t mask) : mask_(mask) {}
    uint32_t mask() const { return mask_; }
    vCond operator&&(const vCond& o) const { return vCond(mask_ & o.mask_); }
    vCond operator||(const vCond& o) const { return vCond(mask_ | o.mask_); }
    vCond operator!() const { return vCond(~mask_); }

private:
    uint32_t mask_;
};

/** The common part of the vector types: 32 lanes of 32 bits; assignment honours predication. */
template <typename Self>
class vBase {
public:
    uint32_t bits(int lane) const { return l_.b[lane]; }
    uint32_t& bits(int lane) { return l_.b[lane]; }

    detail::Lanes l_{};  // the lanes (internal)

protected:
    void assign(const detail::Lanes& v) {
        const uint32_t m = detail::state.enabled;
        if (m == ~0u) {
            l_ = v;
        } else {
            for (int i = 0; i < SFP_LANES; ++i)
                if (m >> i & 1) l_.b[i] = v.b[i];
        }
        ++detail::state.ops;
    }
};

class vFloat : public vBase<vFloat> {
public:
    vFloat() = default;
    constexpr vFloat(float f) {  // NOLINT: SFPI converts scalars implicitly
        for (auto& b : l_.b) b = detail::as_bits(f);
    }
    constexpr vFloat(double f) : vFloat(float(f)) {}  // NOLINT
    vFloat(const vFloat&) = default;
    vFloat& operator=(const vFloat& o) {
        assign(o.l_);
        return *this;
    }
    float operator[](int lane) const { return detail::as_float(l_.b[lane]); }

    template <typename F>
    static vFloat map(F f) {
        vFloat r;
        for (int i = 0; i < SFP_LANES; ++i) r.l_.b[i] = detail::as_bits(f(i));
        ++detail::state.ops;
        return r;
    }
    float f(int lane) const { return detail::as_float(l_.b[lane]); }

    vFloat operator-() const {
        vFloat r;
        for (int i = 0; i < SFP_LANES; ++i) r.l_.b[i] = l_.b[i] ^ 0x80000000u;
        ++detail::state.ops;
        return r;
    }
    vFloat& operator+=(const vFloat& o) { return *this = *this + o; }
    vFloat& operator-=(const vFloat& o) { return *this = *this - o; }
    vFloat& operator*=(const vFloat& o) { return *this = *this * o; }

    friend vFloat operator+(const vFloat& a, const vFloat& b) {
        return map([&](int i) { return a.f(i) + b.f(i); });
    }
    friend vFloat operator-(const vFloat& a, const vFloat& b) {
        return map([&](int i) { return a.f(i) - b.f(i); });
    }
    friend vFloat operator*(const vFloat& a, const vFloat& b) {
        return map([&](int i) { return a.f(i) * b.f(i); });
    }
    template <typename T>
    friend vFloat operator/(const vFloat&, const T&) {
        static_assert(detail::unsupported<T>,
                      "sfpi: vFloat division is not an SFPU instruction (write a reciprocal, e.g. Newton steps)");
        return {};
    }

    // Comparisons as SFPI lowers them: the sign and the zero-ness of a - b (SFPSETCC), so
    // -0.0 < 0.0 holds and a NaN difference compares by its sign bit.
    friend vCond operator<(const vFloat& a, const vFloat& b) { return cmp(a, b, 0); }
    friend vCond operator>=(const vFloat& a, const vFloat& b) { return cmp(a, b, 1); }
    friend vCond operator==(const vFloat& a, const vFloat& b) { return cmp(a, b, 2); }
    friend vCond operator!=(const vFloat& a, const vFloat& b) { return cmp(a, b, 3); }
    friend vCond operator>(const vFloat& a, const vFloat& b) { return cmp(a, b, 4); }
    friend vCond operator<=(const vFloat& a, const vFloat& b) { return cmp(a, b, 5); }

private:
    static vCond cmp(const vFloat& a, const vFloat& b, int how) {
        uint32_t m = 0;
        for (int i = 0; i < SFP_LANES; ++i) {
            const float d = a.f(i) - b.f(i);
            const bool neg = __builtin_signbit(d), zero = d == 0.0f;
            const bool t = how == 0 ? neg : how == 1 ? !neg : how == 2 ? zero : how == 3 ? !zero : how == 4 ? !neg && !zero
                                                                                                             : neg || zero;
            m |= uint32_t(t) << i;
        }
        ++detail::state.ops;
        return vCond(m);
    }
};

/** Integer vectors: vInt (two's complement, signed compare) and vUInt (unsigned). */
template <typename Self, bool Signed>
class vIntBase : public vBase<Self> {
public:
    using vBase<Self>::l_;

    vIntBase() = default;
    constexpr vIntBase(int32_t v) {  // NOLINT
        for (auto& b : l_.b) b = uint32_t(v);
    }
    constexpr vIntBase(uint32_t v) {  // NOLINT
        for (auto& b : l_.b) b = v;
    }

    template <typename F>
    static Self map(F f) {
        Self r;
        for (int i = 0; i < SFP_LANES; ++i) r.l_.b[i] = uint32_t(f(i));
        ++detail::state.ops;
        return r;
    }
    uint32_t u(int lane) const { return l_.b[lane]; }
    int32_t s(int lane) const { return int32_t(l_.b[lane]); }

    friend Self operator+(const Self& a, const Self& b) { return map([&](int i) { return a.u(i) + b.u(i); }); }
    friend Self operator-(const Self& a, const Self& b) { return map([&](int i) { return a.u(i) - b.u(i); }); }
    friend Self operator&(const Self& a, const Self& b) { return map([&](int i) { return a.u(i) & b.u(i); }); }
    friend Self operator|(const Self& a, const Self& b) { return map([&](int i) { return a.u(i) | b.u(i); }); }
    friend Self operator^(const Self& a, const Self& b) { return map([&](int i) { return a.u(i) ^ b.u(i); }); }
    Self operator~() const {
        const Self& a = static_cast<const Self&>(*this);
        return map([&](int i) { return ~a.u(i); });
    }
    Self operator-() const {
        const Self& a = static_cast<const Self&>(*this);
        return map([&](int i) { return 0u - a.u(i); });
    }
    /** Shift left by a scalar (SFPSHFT). */
    Self operator<<(uint32_t n) const {
        const Self& a = static_cast<const Self&>(*this);
        return map([&](int i) { return n >= 32 ? 0u : a.u(i) << n; });
    }
    Self& operator+=(const Self& o) { return self() = self() + o; }
    Self& operator-=(const Self& o) { return self() = self() - o; }
    Self& operator&=(const Self& o) { return self() = self() & o; }
    Self& operator|=(const Self& o) { return self() = self() | o; }
    Self& operator^=(const Self& o) { return self() = self() ^ o; }
    Self& operator<<=(uint32_t n) { return self() = self() << n; }
    template <typename T>
    friend Self operator*(const Self&, const T&) {
        static_assert(detail::unsupported<T>,
                      "sfpi: integer vector multiplication is not an SFPU instruction on Wormhole");
        return {};
    }
    template <typename T>
    friend Self operator%(const Self&, const T&) {
        static_assert(detail::unsupported<T>, "sfpi: integer vector modulo is not an SFPU instruction");
        return {};
    }
    template <typename T>
    friend Self operator/(const Self&, const T&) {
        static_assert(detail::unsupported<T>, "sfpi: integer vector division is not an SFPU instruction");
        return {};
    }

    friend vCond operator<(const Self& a, const Self& b) { return cmp(a, b, [](auto x, auto y) { return x < y; }); }
    friend vCond operator<=(const Self& a, const Self& b) { return cmp(a, b, [](auto x, auto y) { return x <= y; }); }
    friend vCond operator>(const Self& a, const Self& b) { return cmp(a, b, [](auto x, auto y) { return x > y; }); }
    friend vCond operator>=(const Self& a, const Self& b) { return cmp(a, b, [](auto x, auto y) { return x >= y; }); }
    friend vCond operator==(const Self& a, const Self& b) { return cmp(a, b, [](auto x, auto y) { return x == y; }); }
    friend vCond operator!=(const Self& a, const Self& b) { return cmp(a, b, [](auto x, auto y) { return x != y; }); }

protected:
    Self& self() { return static_cast<Self&>(*this); }
    template <typename F>
    static vCond cmp(const Self& a, const Self& b, F f) {
        uint32_t m = 0;
        for (int i = 0; i < SFP_LANES; ++i) {
            const bool t = Signed ? f(a.s(i), b.s(i)) : f(a.u(i), b.u(i));
            m |= uint32_t(t) << i;
        }
        ++detail::state.ops;
        return vCond(m);
    }
};

class vInt : public vIntBase<vInt, true> {
public:
    using vIntBase::vIntBase;
    vInt() = default;
    vInt(const vInt&) = default;
    vInt(const vUInt& o);  // NOLINT: SFPI converts between the integer types
    vInt& operator=(const vInt& o) {
        assign(o.l_);
        return *this;
    }
    int32_t operator[](int lane) const { return s(lane); }
    template <typename T>
    vInt operator>>(const T&) const {
        static_assert(detail::unsupported<T>,
                      "sfpi: arithmetic right shift of vInt (Wormhole's SFPSHFT is logical: reinterpret<vUInt> "
                      "and shift that)");
        return {};
    }
};

class vUInt : public vIntBase<vUInt, false> {
public:
    using vIntBase::vIntBase;
    vUInt() = default;
    vUInt(const vUInt&) = default;
    vUInt(const vInt& o) { l_ = o.l_; }  // NOLINT
    vUInt& operator=(const vUInt& o) {
        assign(o.l_);
        return *this;
    }
    uint32_t operator[](int lane) const { return u(lane); }
    /** Logical shift right by a scalar (SFPSHFT with a negative amount). */
    vUInt operator>>(uint32_t n) const {
        return map([&](int i) { return n >= 32 ? 0u : u(i) >> n; });
    }
    vUInt& operator>>=(uint32_t n) { return *this = *this >> n; }
    friend class vInt;
};

inline vInt::vInt(const vUInt& o) { l_ = o.l_; }

/** reinterpret<vFloat>(vInt), reinterpret<vInt>(vFloat), ...: the same 32 bits per lane. */
template <typename To, typename From>
To reinterpret(const From& v) {
    To r;
    r.l_ = v.l_;
    return r;
}

// -- DST -------------------------------------------------------------------------------------

/** dst_reg[i]: the vector at DST row address (row counter + 2*i). */
class DstRow {
public:
    explicit DstRow(uint32_t addr) : addr_(addr) {}

    detail::Lanes load() const {
        detail::need_wrapper();
        detail::Lanes l;
        for (int i = 0; i < SFP_LANES; ++i) l.b[i] = detail::as_bits(*detail::lane_ptr(addr_, i));
        ++detail::state.ops;
        return l;
    }
    operator vFloat() const { return from<vFloat>(); }  // NOLINT
    operator vInt() const { return from<vInt>(); }      // NOLINT
    operator vUInt() const { return from<vUInt>(); }    // NOLINT

    template <typename V>
    const DstRow& store(const V& v) const {
        detail::need_wrapper();
        const uint32_t m = detail::state.enabled;
        for (int i = 0; i < SFP_LANES; ++i)
            if (m >> i & 1) *detail::lane_ptr(addr_, i) = detail::store_value(v.bits(i));
        ++detail::state.ops;
        return *this;
    }
    const DstRow& operator=(const vFloat& v) const { return store(v); }
    const DstRow& operator=(const vInt& v) const { return store(v); }
    const DstRow& operator=(const vUInt& v) const { return store(v); }
    const DstRow& operator=(float v) const { return store(vFloat(v)); }
    const DstRow& operator=(const DstRow& o) const { return store(vFloat(o)); }

    // Arithmetic and comparisons on a DST row read it as a vFloat.
    friend vFloat operator+(const DstRow& a, const vFloat& b) { return vFloat(a) + b; }
    friend vFloat operator-(const DstRow& a, const vFloat& b) { return vFloat(a) - b; }
    friend vFloat operator*(const DstRow& a, const vFloat& b) { return vFloat(a) * b; }
    vFloat operator-() const { return -vFloat(*this); }
    friend vCond operator<(const DstRow& a, const vFloat& b) { return vFloat(a) < b; }
    friend vCond operator<=(const DstRow& a, const vFloat& b) { return vFloat(a) <= b; }
    friend vCond operator>(const DstRow& a, const vFloat& b) { return vFloat(a) > b; }
    friend vCond operator>=(const DstRow& a, const vFloat& b) { return vFloat(a) >= b; }
    friend vCond operator==(const DstRow& a, const vFloat& b) { return vFloat(a) == b; }
    friend vCond operator!=(const DstRow& a, const vFloat& b) { return vFloat(a) != b; }
    const DstRow& operator+=(const vFloat& v) const { return store(vFloat(*this) + v); }
    const DstRow& operator-=(const vFloat& v) const { return store(vFloat(*this) - v); }
    const DstRow& operator*=(const vFloat& v) const { return store(vFloat(*this) * v); }

private:
    template <typename V>
    V from() const {
        V v;
        auto lanes = load();
        for (int i = 0; i < SFP_LANES; ++i) v.bits(i) = lanes.b[i];
        return v;
    }
    uint32_t addr_;
};

class DstReg {
public:
    DstRow operator[](int i) const { return DstRow(detail::state.row + uint32_t(SFP_DESTREG_STRIDE * i)); }
    /** dst_reg++: the row counter moves on one vector (two DST rows). */
    void operator++(int) const { detail::state.row += SFP_DESTREG_STRIDE; }
    void operator++() const { detail::state.row += SFP_DESTREG_STRIDE; }
    void operator+=(int n) const { detail::state.row += uint32_t(SFP_DESTREG_STRIDE * n); }
};
inline constexpr DstReg dst_reg{};

// -- constants ---------------------------------------------------------------------------------

inline constexpr vFloat vConst0 = vFloat(0.0f);
inline constexpr vFloat vConst1 = vFloat(1.0f);
inline constexpr vFloat vConstNeg1 = vFloat(-1.0f);
inline constexpr vFloat vConst0p8373 = vFloat(0.8373f);
/** The programmable constant registers (set in an init function). */
constinit inline vFloat vConstFloatPrgm0{0.0f}, vConstFloatPrgm1{0.0f}, vConstFloatPrgm2{0.0f};
constinit inline vInt vConstIntPrgm0{0}, vConstIntPrgm1{0}, vConstIntPrgm2{0};

/** Scalars as SFPLOADI takes them: bf16 (fp16b) and fp16 (fp16a) immediates. */
inline float s2vFloat16b(float f) { return detail::as_float(detail::as_bits(f) & 0xFFFF0000u); }
inline float s2vFloat16b(uint32_t bits) { return detail::as_float(bits << 16); }
inline float s2vFloat16a(float f) { return f; }

// -- predication -------------------------------------------------------------------------------

namespace detail {
/** One v_if ... v_endif block: the lanes of the enclosing block, those a branch already took. */
class CCBlock {
public:
    CCBlock() : outer_(state.enabled), taken_(0) { ++state.depth; }
    ~CCBlock() {
        state.enabled = outer_;
        --state.depth;
    }
    CCBlock(const CCBlock&) = delete;
    CCBlock& operator=(const CCBlock&) = delete;
    void branch(const vCond& c) {
        state.enabled = outer_ & ~taken_ & c.mask();
        taken_ |= state.enabled;
        ++state.ops;
    }
    void otherwise() { state.enabled = outer_ & ~taken_; }
    /** v_and: narrow the current branch. */
    void narrow(const vCond& c) {
        state.enabled &= c.mask();
        ++state.ops;
    }

private:
    uint32_t outer_, taken_;
};
}  // namespace detail

// -- intrinsics (sfpi_lib) -----------------------------------------------------------------------

inline vFloat abs(const vFloat& v) {
    return vFloat::map([&](int i) { return detail::as_float(v.bits(i) & 0x7FFFFFFFu); });
}
inline vInt abs(const vInt& v) {
    return vInt::map([&](int i) { return v.s(i) < 0 ? 0u - v.u(i) : v.u(i); });
}
/** The unbiased exponent (SFPEXEXP). */
inline vInt exexp(const vFloat& v) {
    return vInt::map([&](int i) { return int32_t((v.bits(i) >> 23) & 0xFF) - 127; });
}
inline vInt exexp_nodebias(const vFloat& v) {
    return vInt::map([&](int i) { return int32_t((v.bits(i) >> 23) & 0xFF); });
}
/** The mantissa with its hidden bit (exman8) or without (exman9) (SFPEXMAN). */
inline vInt exman8(const vFloat& v) {
    return vInt::map([&](int i) { return (v.bits(i) & 0x7FFFFFu) | 0x800000u; });
}
inline vInt exman9(const vFloat& v) {
    return vInt::map([&](int i) { return v.bits(i) & 0x7FFFFFu; });
}
/** Replace the biased exponent field (SFPSETEXP). */
inline vFloat setexp(const vFloat& v, uint32_t e) {
    return vFloat::map([&](int i) { return detail::as_float((v.bits(i) & ~0x7F800000u) | ((e & 0xFF) << 23)); });
}
inline vFloat setexp(const vFloat& v, const vInt& e) {
    return vFloat::map(
        [&](int i) { return detail::as_float((v.bits(i) & ~0x7F800000u) | ((e.u(i) & 0xFF) << 23)); });
}
/** Replace the mantissa field (SFPSETMAN). */
inline vFloat setman(const vFloat& v, uint32_t m) {
    return vFloat::map([&](int i) { return detail::as_float((v.bits(i) & ~0x7FFFFFu) | (m & 0x7FFFFFu)); });
}
inline vFloat setman(const vFloat& v, const vInt& m) {
    return vFloat::map([&](int i) { return detail::as_float((v.bits(i) & ~0x7FFFFFu) | (m.u(i) & 0x7FFFFFu)); });
}
/** Replace the sign: bit 0 of an immediate, or the sign bit of another vector (SFPSETSGN). */
inline vFloat setsgn(const vFloat& v, int32_t s) {
    return vFloat::map([&](int i) { return detail::as_float((v.bits(i) & 0x7FFFFFFFu) | (uint32_t(s & 1) << 31)); });
}
inline vFloat setsgn(const vFloat& v, const vFloat& s) {
    return vFloat::map(
        [&](int i) { return detail::as_float((v.bits(i) & 0x7FFFFFFFu) | (s.bits(i) & 0x80000000u)); });
}
inline vFloat setsgn(const vFloat& v, const vInt& s) {
    return vFloat::map(
        [&](int i) { return detail::as_float((v.bits(i) & 0x7FFFFFFFu) | (s.u(i) & 0x80000000u)); });
}
/** Add to the exponent field: v * 2^e for normal values (SFPDIVP2); 0, inf and NaN unchanged. */
inline vFloat addexp(const vFloat& v, int32_t e) {
    return vFloat::map([&](int i) {
        const uint32_t b = v.bits(i), ex = (b >> 23) & 0xFF;
        if (ex == 0 || ex == 0xFF) return detail::as_float(b);
        return detail::as_float((b & ~0x7F800000u) | ((uint32_t(int32_t(ex) + e) & 0xFF) << 23));
    });
}
/** Leading zeros of the 32 bits (SFPLZ); 32 for zero. */
inline vInt lz(const vInt& v) {
    return vInt::map([&](int i) { return v.u(i) ? __builtin_clz(v.u(i)) : 32; });
}
inline vInt lz(const vUInt& v) { return lz(vInt(v)); }
inline vInt lz(const vFloat& v) { return lz(reinterpret<vInt>(v)); }
/** Logical shift by a per-lane amount: left for positive, right for negative (SFPSHFT). */
inline vUInt shft(const vUInt& v, const vInt& amount) {
    return vUInt::map([&](int i) {
        const int32_t n = amount.s(i);
        return n >= 32 || n <= -32 ? 0u : n >= 0 ? v.u(i) << n : v.u(i) >> -n;
    });
}
inline vUInt shft(const vUInt& v, int32_t n) { return shft(v, vInt(n)); }

/** int32 -> float32, rounding to nearest even. */
inline vFloat int32_to_float(const vInt& v, int round_mode = 0) {
    (void)round_mode;
    return vFloat::map([&](int i) { return float(v.s(i)); });
}
namespace detail {
inline void nearest_only(int round_mode, const char* what) {
    if (round_mode != 0)
        twrt_fail(TW_ERR_KERNEL, what, state.loc);
}
template <int64_t Lo, int64_t Hi>
inline uint32_t to_int(float x) {
    if (__builtin_isnan(x)) return 0;
    // Round to nearest even: adding 2^23 leaves no fraction bits (default rounding mode).
    const float a = __builtin_fabsf(x);
    const float r = a < 8388608.0f ? __builtin_copysignf((a + 8388608.0f) - 8388608.0f, x) : x;
    const int64_t v = r < float(Lo) ? Lo : r > float(Hi) ? Hi : int64_t(r);
    return uint32_t(int32_t(v));
}
}  // namespace detail
/** float -> integer, rounding to nearest even and saturating (SFPSTOCHRND, round_mode 0). */
inline vUInt float_to_int16(const vFloat& v, int round_mode = 0) {
    detail::nearest_only(round_mode, "sfpi::float_to_int16: stochastic rounding (round_mode 1) is not supported");
    return vUInt::map([&](int i) { return detail::to_int<-32768, 32767>(v.f(i)); });
}
inline vUInt float_to_uint16(const vFloat& v, int round_mode = 0) {
    detail::nearest_only(round_mode, "sfpi::float_to_uint16: stochastic rounding (round_mode 1) is not supported");
    return vUInt::map([&](int i) { return detail::to_int<0, 65535>(v.f(i)); });
}
inline vUInt float_to_int8(const vFloat& v, int round_mode = 0) {
    detail::nearest_only(round_mode, "sfpi::float_to_int8: stochastic rounding (round_mode 1) is not supported");
    return vUInt::map([&](int i) { return detail::to_int<-127, 127>(v.f(i)); });
}
inline vUInt float_to_uint8(const vFloat& v, int round_mode = 0) {
    detail::nearest_only(round_mode, "sfpi::float_to_uint8: stochastic rounding (round_mode 1) is not supported");
    return vUInt::map([&](int i) { return detail::to_int<0, 255>(v.f(i)); });
}
/** float32 rounded (nearest even) to bf16 precision, kept in float32 layout (low 16 bits 0). */
inline vUInt float_to_fp16b(const vFloat& v, int round_mode = 0) {
    detail::nearest_only(round_mode, "sfpi::float_to_fp16b: stochastic rounding (round_mode 1) is not supported");
    return vUInt::map([&](int i) {
        const uint32_t b = v.bits(i);
        if ((b & 0x7F800000u) == 0x7F800000u && (b & 0x7FFFFFu)) return (b | 0x00400000u) & 0xFFFF0000u;
        return (b + 0x7FFFu + ((b >> 16) & 1)) & 0xFFFF0000u;
    });
}

/** SFPLUT: a piecewise linear function of |v| from three packed coefficient pairs
 *  (lut keeps v's sign, lut_sign the computed one). */
namespace detail {
inline float lut8(uint32_t x) {
    x &= 0xFF;
    if (x == 0xFF) return 0.0f;
    return as_float(((x >> 7) << 31) | ((127 - ((x >> 4) & 7)) << 23) | ((x & 0xF) << 19));
}
inline vFloat lut(const vFloat& v, const vUInt& l0, const vUInt& l1, const vUInt& l2, bool retain) {
    return vFloat::map([&](int i) {
        const uint32_t l3 = v.bits(i), b = l3 & 0x7FFFFFFFu;
        const uint32_t c = b < 0x3F800000u ? l0.u(i) : b < 0x40000000u ? l1.u(i) : l2.u(i);
        uint32_t d = as_bits(lut8(c >> 8) * as_float(b) + lut8(c));
        if (retain) d = (d & 0x7FFFFFFFu) | (l3 & 0x80000000u);
        return as_float(d);
    });
}
}  // namespace detail
inline vFloat lut(const vFloat& v, const vUInt& l0, const vUInt& l1, const vUInt& l2) {
    return detail::lut(v, l0, l1, l2, true);
}
inline vFloat lut_sign(const vFloat& v, const vUInt& l0, const vUInt& l1, const vUInt& l2) {
    return detail::lut(v, l0, l1, l2, false);
}

/** Lanewise min into a, max into b (SFPSWAP); vec_swap exchanges them (both under predication). */
inline void vec_min_max(vFloat& a, vFloat& b) {
    const vFloat lo = vFloat::map([&](int i) { return a.f(i) < b.f(i) ? a.f(i) : b.f(i); });
    const vFloat hi = vFloat::map([&](int i) { return a.f(i) < b.f(i) ? b.f(i) : a.f(i); });
    a = lo;
    b = hi;
}
inline void vec_swap(vFloat& a, vFloat& b) {
    const vFloat t = a;
    a = b;
    b = t;
}

// -- not implemented: a build error naming the construct -----------------------------------------

template <typename... A>
vFloat lut(const vFloat&, const vUInt&, const vUInt&, const vUInt&, A...) {
    static_assert(detail::unsupported<A...>, "sfpi::lut with an offset argument is not supported by Tilewright");
    return {};
}
template <typename... A>
vFloat lut2(A&&...) {
    static_assert(detail::unsupported<A...>, "sfpi::lut2 (SFPLUTFP32) is not supported by Tilewright");
    return {};
}
template <typename... A>
vFloat lut2_sign(A&&...) {
    static_assert(detail::unsupported<A...>, "sfpi::lut2_sign (SFPLUTFP32) is not supported by Tilewright");
    return {};
}
template <typename... A>
vFloat float_to_fp16a(A&&...) {
    static_assert(detail::unsupported<A...>, "sfpi::float_to_fp16a is not supported by Tilewright");
    return {};
}
template <typename... A>
void subvec_transp(A&&...) {
    static_assert(detail::unsupported<A...>, "sfpi::subvec_transp (cross-lane) is not supported by Tilewright");
}
template <typename... A>
vFloat subvec_shflror1(A&&...) {
    static_assert(detail::unsupported<A...>, "sfpi::subvec_shflror1 (cross-lane) is not supported by Tilewright");
    return {};
}
template <typename... A>
vFloat subvec_shflshr1(A&&...) {
    static_assert(detail::unsupported<A...>, "sfpi::subvec_shflshr1 (cross-lane) is not supported by Tilewright");
    return {};
}
enum class LRegs : int { LReg0, LReg1, LReg2, LReg3, LReg4, LReg5, LReg6, LReg7 };
struct LRegFile {
    template <typename I>
    vFloat operator[](I) const {
        static_assert(detail::unsupported<I>,
                      "sfpi::l_reg (direct LREG access) is not supported by Tilewright: use vFloat / vInt variables");
        return {};
    }
};
inline constexpr LRegFile l_reg{};
struct TileIdConst {
    template <typename T>
    operator T() const {  // NOLINT
        static_assert(detail::unsupported<T>, "sfpi::vConstTileId (lane ids) is not supported by Tilewright");
        return {};
    }
};
inline constexpr TileIdConst vConstTileId{};

}  // namespace sfpi

// -- v_if / v_elseif / v_else / v_endif ------------------------------------------------------------

#define v_if(cond)                   \
    {                                \
        ::sfpi::detail::CCBlock tw_cc; \
        tw_cc.branch(cond);
#define v_elseif(cond) tw_cc.branch(cond);
#define v_else tw_cc.otherwise();
#define v_endif }
#define v_block \
    {           \
        ::sfpi::detail::CCBlock tw_cc;
#define v_endblock }
#define v_and(cond) tw_cc.narrow(cond)
