// api/compile_time_args.h -- get_compile_time_arg_val (tt-metal api/compile_time_args.h).
//
// When the build defines KERNEL_COMPILE_TIME_ARGS (a comma-separated list, as tt-metal's
// JIT build does), the values are constexpr.  Otherwise each use asks the running
// kernel for its compile-time argument at run time (not usable in constant
// expressions; external functions called from TT-Lang receive their values as
// template or function arguments instead).
#pragma once

#include <cstdint>

#include "tilewright/bridge.h"

#ifdef KERNEL_COMPILE_TIME_ARGS
constexpr uint32_t kernel_compile_time_args[] = {KERNEL_COMPILE_TIME_ARGS};
#define get_compile_time_arg_val(arg_idx) (kernel_compile_time_args[(arg_idx)])
#else
namespace tw {
inline uint32_t compile_time_arg(int index) {
    return static_cast<uint32_t>(tw::call("get_compile_time_arg_val", index));
}
}  // namespace tw
#define get_compile_time_arg_val(arg_idx) (::tw::compile_time_arg((arg_idx)))
#endif
