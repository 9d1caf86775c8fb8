// floor_divmod.h -- floor division and modulo, written once for Python's floats (double,
// TT-Lang's compile-time scalars: scalars.cpp) and numpy's float32 (the SFPU's floor_div /
// remainder: compute.cpp); numpy's npy_divmod is CPython's float_divmod in float32.
#pragma once

#include <cmath>

namespace twrt {

/** a // b and a % b as CPython's float_divmod computes them: the quotient floored, the
 *  remainder's sign following the divisor, signed zeros as CPython gives them.  b != 0
 *  (callers decide what a zero divisor means). */
template <class T>
inline void floor_divmod(T a, T b, T* div, T* mod) {
    T m = std::fmod(a, b);
    T d = (a - m) / b;
    if (m != T(0)) {
        if ((b < T(0)) != (m < T(0))) {
            m += b;
            d -= T(1);
        }
    } else {
        m = std::copysign(T(0), b);
    }
    if (d != T(0)) {
        T f = std::floor(d);
        if (d - f > T(0.5)) f += T(1);
        d = f;
    } else {
        d = std::copysign(T(0), a / b);
    }
    *div = d;
    *mod = m;
}

}  // namespace twrt
