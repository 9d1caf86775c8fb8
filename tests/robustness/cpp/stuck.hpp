// stuck.hpp -- external functions that never return or end the process (hostile inputs).
#pragma once

#include <cstdint>
#include <cstdlib>

#include <sys/syscall.h>
#include <unistd.h>

inline void spin_forever(int32_t start) {
    volatile int32_t n = start;
    while (true) {  // STUCK LINE
        n = n + 1;
    }
}

inline void quit(int32_t status) {
    std::exit(status);  // QUIT LINE
}

inline void exit_group_now(int32_t status) {
    syscall(SYS_exit_group, status);  // past any interception: the process just ends
}
