// api/debug/device_print.h -- DEVICE_PRINT(format, args...): tt-metal's newer debug print with
// std::format-style placeholders ({}, {N}, {{, }}, and specs such as {:>8}, {:#x}, {:.3f},
// {:08b}), printed like DPRINT (one line per '\n', the dprint server's prefix).
//
// The format string is checked at build time as tt-metal checks it: braces well formed, no
// mix of {} and {N}, as many {} as arguments, every {N} in range and every argument used.
// Specs: [[fill]align][sign][#][0][width][.precision][type] with the types d x X o b c s
// f F e E g G (integers, floats, bool, char, C strings; a float with no type prints its
// shortest round-trip form).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "api/debug/dprint.h"

namespace tw::device_print {

template <std::size_t N>
struct Count {
    static constexpr std::size_t value = N;
};
template <typename... A>
Count<sizeof...(A)> count(const A&...);

/** What a format string holds: ok, placeholder counts, highest index, used indices (bitmask). */
struct Shape {
    bool ok = true;
    int plain = 0, indexed = 0, max_index = -1;
    uint64_t used = 0;
};

constexpr Shape shape(const char* f) {
    Shape s;
    for (std::size_t i = 0; f[i]; ++i) {
        if (f[i] == '{') {
            if (f[i + 1] == '{') {
                ++i;
                continue;
            }
            std::size_t j = i + 1;
            if (f[j] >= '0' && f[j] <= '9') {
                int n = 0;
                while (f[j] >= '0' && f[j] <= '9') n = n * 10 + (f[j++] - '0');
                ++s.indexed;
                if (n > s.max_index) s.max_index = n;
                if (n < 64) s.used |= uint64_t(1) << n;
            } else if (f[j] == '}' || f[j] == ':') {
                ++s.plain;
            } else {
                s.ok = false;
                return s;
            }
            while (f[j] && f[j] != '}') ++j;
            if (!f[j]) {
                s.ok = false;
                return s;
            }
            i = j;
        } else if (f[i] == '}') {
            if (f[i + 1] != '}') {
                s.ok = false;
                return s;
            }
            ++i;
        }
    }
    return s;
}

constexpr bool all_used(const Shape& s, std::size_t n) {
    for (std::size_t i = 0; i < n && i < 64; ++i)
        if (!(s.used >> i & 1)) return false;
    return true;
}

/** One argument, type-erased for the runtime formatter. */
struct Arg {
    enum Kind { Int, Uint, Float, Bool, Char, Str } kind;
    int64_t i = 0;
    uint64_t u = 0;
    double f = 0;
    const char* s = nullptr;
};
template <typename T>
Arg arg(const T& v) {
    using D = std::decay_t<T>;
    Arg a{Arg::Int};
    if constexpr (std::is_same_v<D, bool>) {
        a.kind = Arg::Bool, a.u = v;
    } else if constexpr (std::is_same_v<D, char>) {
        a.kind = Arg::Char, a.u = uint64_t(uint8_t(v));
    } else if constexpr (std::is_floating_point_v<D>) {
        a.kind = Arg::Float, a.f = double(v);
    } else if constexpr (std::is_enum_v<D>) {
        a.kind = Arg::Int, a.i = int64_t(v);
    } else if constexpr (std::is_integral_v<D> && std::is_signed_v<D>) {
        a.kind = Arg::Int, a.i = int64_t(v);
    } else if constexpr (std::is_integral_v<D>) {
        a.kind = Arg::Uint, a.u = uint64_t(v);
    } else if constexpr (std::is_convertible_v<D, const char*>) {
        a.kind = Arg::Str, a.s = v;
    } else {
        static_assert(sizeof(D) == 0, "DEVICE_PRINT: this argument type cannot be printed");
    }
    return a;
}

inline void put(char*& o, char* end, char c) {
    if (o < end) *o++ = c;
}

/** Format `a` by the spec text [spec, spec_end) into o. */
inline void format_one(char*& o, char* end, const Arg& a, const char* spec, const char* spec_end) {
    char fill = ' ', align = 0, sign = '-', type = 0;
    bool alt = false, zero = false;
    int width = 0, prec = -1;
    const char* p = spec;
    auto is_align = [](char c) { return c == '<' || c == '>' || c == '^'; };
    if (p + 1 < spec_end && is_align(p[1])) fill = *p, align = p[1], p += 2;
    else if (p < spec_end && is_align(*p)) align = *p++;
    if (p < spec_end && (*p == '+' || *p == '-' || *p == ' ')) sign = *p++;
    if (p < spec_end && *p == '#') alt = true, ++p;
    if (p < spec_end && *p == '0') zero = true, ++p;
    while (p < spec_end && *p >= '0' && *p <= '9') width = width * 10 + (*p++ - '0');
    if (p < spec_end && *p == '.') {
        prec = 0, ++p;
        while (p < spec_end && *p >= '0' && *p <= '9') prec = prec * 10 + (*p++ - '0');
    }
    if (p < spec_end) type = *p;

    char body[96];
    body[0] = 0;
    const char* prefix = "";
    bool negative = false, numeric = true;
    if (a.kind == Arg::Str || (a.kind == Arg::Bool && type != 'd') || (a.kind == Arg::Char && type != 'd')) {
        numeric = false;
        const char* s = a.kind == Arg::Str ? (a.s ? a.s : "(null)") : a.kind == Arg::Bool ? (a.u ? "true" : "false")
                                                                                            : nullptr;
        if (s) std::snprintf(body, sizeof body, "%.*s", prec >= 0 ? prec : 80, s);
        else body[0] = char(a.u), body[1] = 0;
    } else if (a.kind == Arg::Float) {
        double v = a.f;
        negative = __builtin_signbit(v);
        if (negative) v = -v;
        char f = type ? type : 'g';
        if (!type && prec < 0) {  // shortest form that reads back as the same float
            for (int q = 1; q <= 17; ++q) {
                std::snprintf(body, sizeof body, "%.*g", q, v);
                double back = 0;
                std::sscanf(body, "%lf", &back);
                if (float(back) == float(v) || q == 17) break;
            }
        } else {
            char fm[8] = {'%', '.', '*', f, 0};
            std::snprintf(body, sizeof body, fm, prec >= 0 ? prec : 6, v);
        }
    } else {
        uint64_t mag = a.kind == Arg::Int ? (a.i < 0 ? 0 - uint64_t(a.i) : uint64_t(a.i)) : a.u;
        negative = a.kind == Arg::Int && a.i < 0;
        if (type == 'c') {
            numeric = false, body[0] = char(mag), body[1] = 0;
        } else if (type == 'b' || type == 'B') {
            char* b = body;
            int n = 64 - (mag ? __builtin_clzll(mag) : 63);
            for (int k = n - 1; k >= 0; --k) *b++ = char('0' + (mag >> k & 1));
            *b = 0;
            prefix = alt ? (type == 'b' ? "0b" : "0B") : "";
        } else {
            const char* fm = type == 'x' ? "%llx" : type == 'X' ? "%llX" : type == 'o' ? "%llo" : "%llu";
            std::snprintf(body, sizeof body, fm, static_cast<unsigned long long>(mag));
            if (alt) prefix = type == 'x' ? "0x" : type == 'X' ? "0X" : type == 'o' ? "0" : "";
        }
    }
    char head[4] = {0};
    int h = 0;
    if (numeric && negative) head[h++] = '-';
    else if (numeric && sign == '+') head[h++] = '+';
    else if (numeric && sign == ' ') head[h++] = ' ';
    const int len = int(std::strlen(body)) + h + int(std::strlen(prefix));
    int pad = width > len ? width - len : 0;
    if (zero && numeric && !align) {
        for (const char* c = head; *c; ++c) put(o, end, *c);
        for (const char* c = prefix; *c; ++c) put(o, end, *c);
        while (pad--) put(o, end, '0');
        for (const char* c = body; *c; ++c) put(o, end, *c);
        return;
    }
    if (!align) align = numeric ? '>' : '<';
    int left = align == '>' ? pad : align == '^' ? pad / 2 : 0, right = pad - left;
    while (left--) put(o, end, fill);
    for (const char* c = head; *c; ++c) put(o, end, *c);
    for (const char* c = prefix; *c; ++c) put(o, end, *c);
    for (const char* c = body; *c; ++c) put(o, end, *c);
    while (right--) put(o, end, fill);
}

inline void print(Loc loc, const char* f, const Arg* args, std::size_t n) {
    char out[512];
    char* o = out;
    char* end = out + sizeof(out) - 1;
    std::size_t next = 0;
    for (std::size_t i = 0; f[i]; ++i) {
        if (f[i] == '{' && f[i + 1] == '{') {
            put(o, end, '{'), ++i;
        } else if (f[i] == '}' && f[i + 1] == '}') {
            put(o, end, '}'), ++i;
        } else if (f[i] == '{') {
            std::size_t j = i + 1, index = next;
            if (f[j] >= '0' && f[j] <= '9') {
                index = 0;
                while (f[j] >= '0' && f[j] <= '9') index = index * 10 + std::size_t(f[j++] - '0');
            } else {
                ++next;
            }
            const char* spec = f + j + (f[j] == ':' ? 1 : 0);
            while (f[j] != '}') ++j;
            if (index < n) format_one(o, end, args[index], spec, f + j);
            i = j;
        } else {
            put(o, end, f[i]);
        }
    }
    *o = 0;
    DPrintStream(loc) << static_cast<const char*>(out);
}

template <typename... A>
void print_args(Loc loc, const char* f, const A&... a) {
    const Arg args[sizeof...(A) + 1] = {arg(a)..., Arg{Arg::Int}};
    print(loc, f, args, sizeof...(A));
}

}  // namespace tw::device_print

#define TW_DEVICE_PRINT_CHECK(format, ...)                                                                          \
    static_assert(::tw::device_print::shape(format).ok,                                                              \
                  "Invalid format string: unescaped '{' must be followed by '{', '}', or a digit");                 \
    static_assert(!(::tw::device_print::shape(format).plain && ::tw::device_print::shape(format).indexed),           \
                  "Cannot mix indexed ({0}) and non-indexed ({}) placeholders in the same format string");          \
    static_assert(::tw::device_print::shape(format).indexed ||                                                       \
                      std::size_t(::tw::device_print::shape(format).plain) ==                                        \
                          decltype(::tw::device_print::count(__VA_ARGS__))::value,                                   \
                  "Number of {} placeholders must match number of arguments");                                      \
    static_assert(!::tw::device_print::shape(format).indexed ||                                                      \
                      (std::size_t(::tw::device_print::shape(format).max_index + 1) <=                               \
                           decltype(::tw::device_print::count(__VA_ARGS__))::value &&                                \
                       ::tw::device_print::all_used(::tw::device_print::shape(format),                               \
                                                    decltype(::tw::device_print::count(__VA_ARGS__))::value)),       \
                  "Indexed placeholders must be in range and reference every argument")

#undef DEVICE_PRINT
#define DEVICE_PRINT(format, ...)                                                   \
    do {                                                                            \
        TW_DEVICE_PRINT_CHECK(format, ##__VA_ARGS__);                               \
        ::tw::device_print::print_args(TW_HERE, format __VA_OPT__(, ) __VA_ARGS__); \
    } while (0)
#define DEVICE_PRINT_UNPACK(format, ...) \
    do { ::tw::TriscScope tw_scope_(1); DEVICE_PRINT(format, ##__VA_ARGS__); } while (0)
#define DEVICE_PRINT_MATH(format, ...) \
    do { ::tw::TriscScope tw_scope_(2); DEVICE_PRINT(format, ##__VA_ARGS__); } while (0)
#define DEVICE_PRINT_PACK(format, ...) \
    do { ::tw::TriscScope tw_scope_(4); DEVICE_PRINT(format, ##__VA_ARGS__); } while (0)
#define DEVICE_PRINT_DATA0(format, ...) \
    do { if (noc_index == 0) DEVICE_PRINT(format, ##__VA_ARGS__); } while (0)
#define DEVICE_PRINT_DATA1(format, ...) \
    do { if (noc_index == 1) DEVICE_PRINT(format, ##__VA_ARGS__); } while (0)
