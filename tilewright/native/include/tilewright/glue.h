// tilewright/glue.h -- support for the entry points Tilewright generates around external calls
// and whole kernels.
//
// Every generated source defines
//
//     extern "C" int32_t tw_entry(const int64_t* tw_argv, int64_t* tw_result);
//
// whose body is TW_ENTRY_BEGIN ... TW_ENTRY_END; the native runtime runs it on a fiber.
// Return codes: 0 = returned normally, 2 = a C++ exception escaped (message in
// tw_last_error()).  A failing kernel-API call never returns: the runtime stops the
// fiber and Python raises the error.
#pragma once

#include <cstdint>
#include <exception>

#include "tilewright/runtime.h"

namespace tw {
inline char last_error[512];
inline void set_last_error(const char* text) {
    __builtin_strncpy(last_error, text ? text : "", sizeof(last_error) - 1);
    last_error[sizeof(last_error) - 1] = 0;
}
}  // namespace tw

TW_EXPORT const char* tw_last_error() { return tw::last_error; }

#define TW_ENTRY_BEGIN try {
#define TW_ENTRY_END                                          \
    }                                                         \
    catch (const std::exception& tw_exc) {                    \
        ::tw::set_last_error(tw_exc.what());                  \
        return 2;                                             \
    }                                                         \
    catch (...) {                                             \
        ::tw::set_last_error("a non-standard C++ exception"); \
        return 2;                                             \
    }                                                         \
    return 0;
