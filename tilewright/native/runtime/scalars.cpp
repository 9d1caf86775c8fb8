// scalars.cpp -- the float scalar semantics of compiled TT-Lang kernels that need the C++
// library: Python's repr of a float (print) and Python's float floor division / modulo.
//
// ttlang/support.h calls these instead of defining them inline: <charconv> and <cmath>
// would put 12 MB more into the precompiled header every compiled kernel loads (35 ms of
// its 0.15 s build with g++ 12), for functions a kernel calls only when it prints a float
// or divides floats.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "floor_divmod.h"
#include "twrt.h"

/** Python's repr (and str) of a float: the shortest round-trip digits (std::to_chars), in
 *  fixed notation when the decimal point falls in (-4, 16] of them, else d.ddde+XX, as
 *  CPython's float_repr (format_float_short, mode 'r'). */
TW_EXPORT void twrt_float_repr(double v, char* s) {
    if (std::isnan(v)) { std::strcpy(s, "nan"); return; }
    char* o = s;
    if (std::signbit(v)) { *o++ = '-'; v = -v; }
    if (std::isinf(v)) { std::strcpy(o, "inf"); return; }
    char sci[40];
    auto r = std::to_chars(sci, sci + sizeof sci, v, std::chars_format::scientific);
    *r.ptr = 0;
    char digits[24]; int n = 0;
    const char* p = sci;
    for (; *p && *p != 'e'; ++p) if (*p != '.') digits[n++] = *p;
    digits[n] = 0;
    int exp = 0;
    for (const char* q = p + 2; *q; ++q) exp = exp * 10 + (*q - '0');
    int decpt = (p[1] == '-' ? -exp : exp) + 1;
    if (decpt <= -4 || decpt > 16) {
        *o++ = digits[0];
        if (n > 1) { *o++ = '.'; std::memcpy(o, digits + 1, n - 1); o += n - 1; }
        std::snprintf(o, 16, "e%+03d", decpt - 1);
    } else if (decpt <= 0) {
        *o++ = '0'; *o++ = '.';
        for (int i = 0; i < -decpt; ++i) *o++ = '0';
        std::memcpy(o, digits, n); o[n] = 0;
    } else if (decpt >= n) {
        std::memcpy(o, digits, n); o += n;
        for (int i = n; i < decpt; ++i) *o++ = '0';
        std::strcpy(o, ".0");
    } else {
        std::memcpy(o, digits, decpt); o += decpt; *o++ = '.';
        std::memcpy(o, digits + decpt, n - decpt); o[n - decpt] = 0;
    }
}

/** Python's float divmod (CPython's float_divmod): the quotient floored, the remainder's
 *  sign following the divisor, signed zeros as CPython gives them.  b != 0 (the caller
 *  raises the interpreter's error first). */
TW_EXPORT void twrt_float_divmod(double a, double b, double* q, double* r) { twrt::floor_divmod(a, b, q, r); }
