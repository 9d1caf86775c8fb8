// failures.hpp -- external functions that fail in native ways.
#pragma once

#include <cstdint>
#include <stdexcept>

inline void throw_error(int32_t code) {
    if (code != 0) throw std::runtime_error("bad code from the external function");
}

inline void crash_now(int32_t how) {
    volatile int32_t* p = nullptr;
    if (how == 1) *p = 42;  // SIGSEGV
    __builtin_trap();       // SIGILL otherwise
}

int32_t never_defined(int32_t x);

inline int32_t call_missing(int32_t x) { return never_defined(x) + 1; }
