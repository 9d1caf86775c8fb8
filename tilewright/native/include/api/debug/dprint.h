// api/debug/dprint.h -- DPRINT << ... << ENDL(); (tt-metal debug print).
//
// Text is collected per statement and printed to the run's output, one line per
// ENDL(), prefixed as tt-metal's dprint server does: "<chip>:(<x>, <y>):<RISC>: ".  The
// three TRISCs of a compute kernel run as one thread here, so a plain DPRINT in a
// compute kernel prints once per TRISC (TR0, TR1, TR2) as on hardware, and
// DPRINT_UNPACK / DPRINT_MATH / DPRINT_PACK print once.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "tilewright/bridge.h"

namespace tw {
struct Endl {};
struct Hex { uint32_t v; };
struct Dec { uint32_t v; };
struct SetW { int w; };
struct F32 { float v; };
struct U32 { uint32_t v; };
/** Tilewright only: the statement is a compiled TT-Lang print, printed once with the
 *  interpreter's "[<place> <kernel>] " prefix instead of the dprint server's. */
struct TtlangPrint {};

/** TRISCs a DPRINT statement prints from (bit 0 unpack, 1 math, 2 pack). */
inline thread_local uint32_t dprint_triscs = 7;

struct TriscScope {
    uint32_t saved;
    explicit TriscScope(uint32_t mask) : saved(dprint_triscs) { dprint_triscs = mask; }
    ~TriscScope() { dprint_triscs = saved; }
};

class DPrintStream {
public:
    explicit DPrintStream(Loc loc) : loc_(loc) {}
    DPrintStream(const DPrintStream&) = delete;
    ~DPrintStream() { flush(); }

    DPrintStream& operator<<(const char* s) { append(s); return *this; }
    DPrintStream& operator<<(char c) { char b[2] = {c, 0}; append(b); return *this; }
    DPrintStream& operator<<(TtlangPrint) { mode_ = 1; return *this; }
    DPrintStream& operator<<(Endl) { append("\n"); flush(); return *this; }
    DPrintStream& operator<<(Hex h) { return fmt("0x%x", h.v); }
    DPrintStream& operator<<(Dec d) { return fmt("%u", d.v); }
    DPrintStream& operator<<(SetW w) { width_ = w.w; return *this; }
    DPrintStream& operator<<(F32 f) { return fmt("%g", static_cast<double>(f.v)); }
    DPrintStream& operator<<(U32 u) { return fmt("%u", u.v); }
    DPrintStream& operator<<(bool v) { append(v ? "true" : "false"); return *this; }
    DPrintStream& operator<<(int32_t v) { return fmt("%d", v); }
    DPrintStream& operator<<(uint32_t v) { return fmt("%u", v); }
    DPrintStream& operator<<(int64_t v) { return fmt("%lld", static_cast<long long>(v)); }
    DPrintStream& operator<<(uint64_t v) { return fmt("%llu", static_cast<unsigned long long>(v)); }
    DPrintStream& operator<<(long long v) { return fmt("%lld", v); }
    DPrintStream& operator<<(unsigned long long v) { return fmt("%llu", v); }
    DPrintStream& operator<<(int16_t v) { return fmt("%d", v); }
    DPrintStream& operator<<(uint16_t v) { return fmt("%u", v); }
    DPrintStream& operator<<(uint8_t v) { return fmt("%u", v); }
    DPrintStream& operator<<(float v) { return fmt("%g", static_cast<double>(v)); }
    DPrintStream& operator<<(double v) { return fmt("%g", v); }
    template <typename E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
    DPrintStream& operator<<(E v) { return fmt("%lld", static_cast<long long>(v)); }

private:
    template <typename T>
    DPrintStream& fmt(const char* f, T v) {
        char b[48];
        std::snprintf(b, sizeof b, f, v);
        if (width_ > 0) {
            char padded[64];
            std::snprintf(padded, sizeof padded, "%*s", width_, b);
            append(padded);
            width_ = 0;
        } else {
            append(b);
        }
        return *this;
    }
    void append(const char* s) {
        while (*s && len_ < sizeof(buf_) - 1) buf_[len_++] = *s++;
        buf_[len_] = 0;
    }
    void flush() {
        if (len_) {
            const int64_t args[3] = {int64_t(reinterpret_cast<uintptr_t>(buf_)), int64_t(dprint_triscs),
                                     int64_t(mode_)};
            twrt_request("dprint", 3, args, loc_);
            len_ = 0;
            buf_[0] = 0;
        }
    }
    Loc loc_;
    char buf_[512] = {0};
    uint32_t len_ = 0;
    int width_ = 0;
    int mode_ = 0;
};
}  // namespace tw

inline tw::Endl ENDL() { return {}; }
inline tw::Hex HEX(uint32_t v) { return {v}; }
inline tw::Dec DEC(uint32_t v) { return {v}; }
inline tw::SetW SETW(int w) { return {w}; }
inline tw::F32 F32(float v) { return {v}; }
inline tw::U32 U32(uint32_t v) { return {v}; }
inline tw::TtlangPrint TTLANG_PRINT() { return {}; }

#define DPRINT ::tw::DPrintStream(TW_HERE)
#define DPRINT_DATA0(x) x
#define DPRINT_DATA1(x) x
#define DPRINT_UNPACK(x) do { ::tw::TriscScope tw_scope_(1); x; } while (0)
#define DPRINT_MATH(x) do { ::tw::TriscScope tw_scope_(2); x; } while (0)
#define DPRINT_PACK(x) do { ::tw::TriscScope tw_scope_(4); x; } while (0)

// DEVICE_PRINT(format, args...): the std::format-style print (api/debug/device_print.h).
#include "api/debug/device_print.h"
