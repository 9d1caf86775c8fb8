// tilewright/bridge.h -- the escape hatch from native code to Python.
//
// Nearly every kernel-API function is implemented in the native runtime
// (tilewright/runtime.h).  The few that only Python can do (rare debugging aids) go
// through tw::call, which suspends the kernel's fiber with a request that the Python
// engine serves (tilewright/native/requests.py) before resuming it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tilewright/runtime.h"

namespace tw {

/** Call the Python implementation of kernel-API function `name` with integer args. */
template <typename... A>
inline int64_t call_at(Loc loc, const char* name, A... args) {
    static_assert(sizeof...(A) <= 15, "tw::call takes at most 15 arguments");
    const int64_t argv[sizeof...(A) + 1] = {static_cast<int64_t>(args)..., 0};
    return twrt_request(name, static_cast<int32_t>(sizeof...(A)), argv, loc);
}

#define TW_CALL(...) ::tw::call_at(TW_HERE, __VA_ARGS__)

}  // namespace tw
