// api/debug/dprint.h -- DPRINT << ... << ENDL(); (tt-metal debug print).
//
// Text is collected per statement and printed through the kernel's print routing
// (one line per ENDL(), prefixed like TT-Lang's debug print).  The stream object is
// a temporary per statement, so interleaved kernels never mix their text.
#pragma once

#include <cstdint>
#include <cstdio>

#include "tilewright/bridge.h"

namespace tw {
struct Endl {};
struct Hex { uint32_t v; };
struct Dec { uint32_t v; };

class DPrintStream {
public:
    DPrintStream() = default;
    DPrintStream(const DPrintStream&) = delete;
    ~DPrintStream() { flush(); }

    DPrintStream& operator<<(const char* s) { append(s); return *this; }
    DPrintStream& operator<<(char c) { char b[2] = {c, 0}; append(b); return *this; }
    DPrintStream& operator<<(Endl) { append("\n"); flush(); return *this; }
    DPrintStream& operator<<(Hex h) { return fmt("0x%x", h.v); }
    DPrintStream& operator<<(Dec d) { return fmt("%u", d.v); }
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

private:
    template <typename T>
    DPrintStream& fmt(const char* f, T v) {
        char b[40];
        std::snprintf(b, sizeof b, f, v);
        append(b);
        return *this;
    }
    void append(const char* s) {
        while (*s && len_ < sizeof(buf_) - 1) buf_[len_++] = *s++;
        buf_[len_] = 0;
    }
    void flush() {
        if (len_) {
            tw::call("dprint", reinterpret_cast<uintptr_t>(buf_));
            len_ = 0;
            buf_[0] = 0;
        }
    }
    char buf_[512] = {0};
    uint32_t len_ = 0;
};
}  // namespace tw

inline tw::Endl ENDL() { return {}; }
inline tw::Hex HEX(uint32_t v) { return {v}; }
inline tw::Dec DEC(uint32_t v) { return {v}; }

#define DPRINT ::tw::DPrintStream()
#define DPRINT_DATA0(x) x
#define DPRINT_DATA1(x) x
#define DPRINT_MATH(x) x
#define DPRINT_PACK(x) x
#define DPRINT_UNPACK(x) x
