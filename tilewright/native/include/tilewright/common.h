// tilewright/common.h -- definitions shared by the data-movement and compute kernel APIs:
// attribute macros, tt::DataFormat, tt::CBIndex, the core's identity, runtime and
// compile-time arguments (tt-metal: risc_attribs.h, kernel_structs.h, compile_time_args.h,
// dataflow_api.h "Args / identity").
#pragma once

#include <cstdint>

#include "tilewright/bridge.h"
#include "tilewright/runtime.h"

#ifndef FORCE_INLINE
#define FORCE_INLINE inline __attribute__((always_inline))
#endif
#ifndef ALWI
#define ALWI inline __attribute__((always_inline))
#endif
#ifndef tt_l1_ptr
#define tt_l1_ptr
#endif
#ifndef tt_reg_ptr
#define tt_reg_ptr
#endif
#ifndef KERNEL_BUILD
#define KERNEL_BUILD 1
#endif
#ifndef NOC_INDEX
#define NOC_INDEX 0
#endif

// tt::DataFormat: twrt_dataformat.h, generated from tilewright/device/formats/dataformat.py.
#include "twrt_dataformat.h"

namespace tt {

/** Circular-buffer indices c_0 .. c_63 (hostdevcommon/kernel_structs.h). */
enum CBIndex : uint8_t {
    c_0 = 0, c_1, c_2, c_3, c_4, c_5, c_6, c_7, c_8, c_9, c_10, c_11, c_12, c_13, c_14, c_15,
    c_16, c_17, c_18, c_19, c_20, c_21, c_22, c_23, c_24, c_25, c_26, c_27, c_28, c_29, c_30, c_31,
    c_32, c_33, c_34, c_35, c_36, c_37, c_38, c_39, c_40, c_41, c_42, c_43, c_44, c_45, c_46, c_47,
    c_48, c_49, c_50, c_51, c_52, c_53, c_54, c_55, c_56, c_57, c_58, c_59, c_60, c_61, c_62, c_63,
    SIZE = 64,
};

}  // namespace tt

using DataFormat = tt::DataFormat;

constexpr uint32_t NUM_CIRCULAR_BUFFERS = 64;

/** The NoC this kernel issues on (tt-metal: a per-RISC constant from the kernel's config). */
constexpr uint8_t noc_index = NOC_INDEX;

namespace tw {
/** `my_x[noc]` / `my_y[noc]`: this core's NoC coordinates. */
struct NocCoord {
    bool y;
    uint32_t operator[](uint32_t noc) const { return y ? twrt_my_noc_y(noc) : twrt_my_noc_x(noc); }
};
}  // namespace tw

inline constexpr tw::NocCoord my_x{false};
inline constexpr tw::NocCoord my_y{true};

inline uint32_t get_absolute_logical_x() { return twrt_logical_x(); }
inline uint32_t get_absolute_logical_y() { return twrt_logical_y(); }
inline uint32_t get_relative_logical_x() { return twrt_logical_x(); }
inline uint32_t get_relative_logical_y() { return twrt_logical_y(); }

// -- runtime and compile-time arguments -------------------------------------------------

/** Per-core runtime argument `arg_idx` reinterpreted as T (4-byte types). */
template <typename T>
inline T get_arg_val(int arg_idx, TW_LOC) {
    static_assert(sizeof(T) == 4, "runtime arguments are 4-byte values");
    const uint32_t word = twrt_arg(arg_idx, loc);
    T out;
    __builtin_memcpy(&out, &word, 4);
    return out;
}

/** Common (all-core) runtime argument `arg_idx` reinterpreted as T. */
template <typename T>
inline T get_common_arg_val(int arg_idx, TW_LOC) {
    static_assert(sizeof(T) == 4, "runtime arguments are 4-byte values");
    const uint32_t word = twrt_common_arg(arg_idx, loc);
    T out;
    __builtin_memcpy(&out, &word, 4);
    return out;
}

/** L1 address of runtime argument `arg_idx` (a pointer in native code, as on hardware). */
inline uint32_t get_arg_addr(int arg_idx) { return twrt_arg_addr(arg_idx); }
inline uint32_t get_common_arg_addr(int arg_idx) { return twrt_common_arg_addr(arg_idx); }

#include "api/compile_time_args.h"
