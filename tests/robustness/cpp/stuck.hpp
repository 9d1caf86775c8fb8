// stuck.hpp -- external functions that never return (the watchdog and Ctrl-C must stop them).
#pragma once

#include <cstdint>
#include <cstdlib>

inline void spin_forever(int32_t start) {
    volatile int32_t n = start;
    while (true) {  // STUCK LINE
        n = n + 1;
    }
}

inline void quit(int32_t status) {
    std::exit(status);  // QUIT LINE
}
