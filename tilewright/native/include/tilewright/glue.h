// tilewright/glue.h -- support for the entry points Tilewright generates around external calls.
//
// Every generated source defines
//
//     extern "C" int32_t tw_entry(const int64_t* tw_argv, int64_t* tw_result);
//
// whose body is TW_ENTRY_BEGIN ... TW_ENTRY_END.  Return codes: 0 = returned normally,
// 1 = unwound after a failing kernel-API callback (Python re-raises its exception),
// 2 = a C++ exception escaped the external function (message in tw_last_error()).
#pragma once

#include <cstdint>
#include <exception>

#include "tilewright/bridge.h"

TW_EXPORT void tw_bind(tw::Api* api) { tw::g_api = api; }

namespace tw {
inline char last_error[512];
inline void set_last_error(const char* text) {
    __builtin_strncpy(last_error, text ? text : "", sizeof(last_error) - 1);
    last_error[sizeof(last_error) - 1] = 0;
}
}  // namespace tw

TW_EXPORT const char* tw_last_error() { return tw::last_error; }

#define TW_ENTRY_BEGIN try {
#define TW_ENTRY_END                                  \
    }                                                 \
    catch (const ::tw::Abort&) {                      \
        return 1;                                     \
    }                                                 \
    catch (const std::exception& tw_exc) {            \
        ::tw::set_last_error(tw_exc.what());          \
        return 2;                                     \
    }                                                 \
    catch (...) {                                     \
        ::tw::set_last_error("a non-standard C++ exception"); \
        return 2;                                     \
    }                                                 \
    return 0;
