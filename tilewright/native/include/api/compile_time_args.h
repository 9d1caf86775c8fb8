// api/compile_time_args.h -- get_compile_time_arg_val and named compile-time arguments
// (tt-metal api/compile_time_args.h).
//
// When the build defines KERNEL_COMPILE_TIME_ARGS (a comma-separated list, as tt-metal's
// JIT build does), the values are constexpr; KERNEL_COMPILE_TIME_ARG_MAP lists the named
// ones as {"name", value} pairs for get_named_compile_time_arg_val("name").  Without them
// (external functions called from TT-Lang) each use asks the running kernel at run time.
#pragma once

#include <cstdint>

#include "tilewright/runtime.h"

#ifdef KERNEL_COMPILE_TIME_ARGS
constexpr uint32_t kernel_compile_time_args[] = {KERNEL_COMPILE_TIME_ARGS};
#define get_compile_time_arg_val(arg_idx) (kernel_compile_time_args[(arg_idx)])
#else
namespace tw {
inline uint32_t compile_time_arg(int index, TW_LOC) { return twrt_compile_time_arg(index, loc); }
}  // namespace tw
#define get_compile_time_arg_val(arg_idx) (::tw::compile_time_arg((arg_idx)))
#endif

namespace tw {
struct NamedArg {
    const char* name;
    uint32_t value;
};
constexpr bool same_name(const char* a, const char* b) {
    while (*a && *a == *b) ++a, ++b;
    return *a == *b;
}
#ifdef KERNEL_COMPILE_TIME_ARG_MAP
constexpr NamedArg named_compile_time_args[] = {KERNEL_COMPILE_TIME_ARG_MAP};
#else
constexpr NamedArg named_compile_time_args[] = {{"", 0}};
#endif
constexpr uint32_t named_arg(const char* name) {
    for (const NamedArg& a : named_compile_time_args)
        if (a.name[0] && same_name(a.name, name)) return a.value;
    // Not constant: a kernel asking for a name its program does not give fails to build.
    throw "get_named_compile_time_arg_val: the kernel's program has no named compile-time argument of that name";
}
}  // namespace tw

#define get_named_compile_time_arg_val(name) (::tw::named_arg(name))
