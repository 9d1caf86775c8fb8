// tilewright/sfpi_glue.h -- the glue user SFPI code runs through: tt-llk's SFPU call wrappers
// (_llk_math_eltwise_{unary,binary,ternary}_sfpu_params_ and the llk_math_* spellings), their
// start / face-advance / done steps, tt-metal's SFPU_*_CALL / SFPU_*_INIT macros and the
// init wrappers.  Included by api/compute/compute_kernel_api.h.
//
// A wrapper sets DST's row counter to the first face (unary: tile dst_index; binary and
// ternary: tile 0, the function indexing its tiles as dst_index * 32 vectors) and calls the
// function per face: VectorMode::RC all four faces, R faces 0 and 1, C faces 0 and 2, None
// once.  Between faces the counter returns to the face start plus 16 rows (the LLK's SETRWC
// on the carriage-return counter), whatever `dst_reg++` the function did.
#pragma once

#include <cstdint>
#include <utility>  // std::forward (already in the compute API's closure)

#include "sfpi.h"

/** SFPU op kinds of the init wrappers: accepted, not used (the emulation has no SFPU config). */
enum class SfpuType : int { unused = 0, custom = 1, add_fp32, sub_fp32, mul_fp32, div_fp32, add_int32, sub_int32 };

namespace ckernel {

enum class DstSync : int { SyncHalf = 0, SyncFull = 1 };

/** The vector-mode argument of a wrapper, carrying the caller's line for its errors. */
struct SfpuCallSite {
    int mode;
    tw::Loc loc;
    SfpuCallSite(VectorMode m, TW_LOC) : mode(int(m)), loc(loc) {}  // NOLINT: implicit, as tt-llk's int
    SfpuCallSite(int m, TW_LOC) : mode(m), loc(loc) {}               // NOLINT
};

namespace sfpi_glue {

inline void start(uint32_t first_row, tw::Loc loc) {
    // Every field is reset: a wrapper whose kernel failed inside it never reached done().
    auto& s = ::sfpi::detail::state;
    twrt_sfpi_begin(&s.view, loc);
    s.active = true;
    s.row = first_row;
    s.face = first_row;
    s.enabled = ~0u;
    s.depth = 0;
    s.ops = 0;
    s.loc = loc;
}

inline void next_face() {
    auto& s = ::sfpi::detail::state;
    s.face += 16;
    s.row = s.face;
}

inline void done() {
    auto& s = ::sfpi::detail::state;
    s.active = false;
    s.enabled = ~0u;
    twrt_sfpi_end(s.ops, s.loc);
}

inline void check_index(uint32_t idst, const char* what) {
    auto& s = ::sfpi::detail::state;
    if (int64_t(idst) >= s.view.tiles) {
        char msg[160];
        __builtin_snprintf(msg, sizeof msg, "SFPU call: %s %u is beyond the %d DST tiles of one acquire", what, idst,
                           s.view.tiles);
        twrt_fail(TW_ERR_KERNEL, msg, s.loc);
    }
}

/** Call `face(...)` per face of `mode`. */
template <typename Face>
inline void faces(int mode, Face&& face) {
    switch (static_cast<VectorMode>(mode)) {
        case VectorMode::R:
            for (int f = 0; f < 2; ++f) face(), next_face();
            next_face(), next_face();
            break;
        case VectorMode::C:
            for (int f = 0; f < 2; ++f) face(), next_face(), next_face();
            break;
        case VectorMode::RC:
            for (int f = 0; f < 4; ++f) face(), next_face();
            break;
        default: face(); break;
    }
}

}  // namespace sfpi_glue

template <DstSync DST_SYNC, bool DST_ACCUM>
inline void _sfpu_check_(uint32_t, VectorMode) {}
template <DstSync DST_SYNC, bool DST_ACCUM>
inline void _sfpu_binary_check_(uint32_t, uint32_t, uint32_t, VectorMode) {}
template <DstSync DST_SYNC, bool DST_ACCUM>
inline void _sfpu_ternary_check_(uint32_t, uint32_t, uint32_t, uint32_t, VectorMode) {}

// -- init wrappers: run the op's init function (it may set the programmable constants) -------------

template <SfpuType OP = SfpuType::unused, bool APPROXIMATE = false, typename... F>
inline void llk_math_eltwise_unary_sfpu_init(F&&... init_and_args) {
    if constexpr (sizeof...(F) > 0) {
        [](auto&& init, auto&&... args) { init(std::forward<decltype(args)>(args)...); }(
            std::forward<F>(init_and_args)...);
    }
}
template <SfpuType OP = SfpuType::unused, bool APPROXIMATE = false, typename... F>
inline void llk_math_eltwise_binary_sfpu_init(F&&... init_and_args) {
    llk_math_eltwise_unary_sfpu_init<OP, APPROXIMATE>(std::forward<F>(init_and_args)...);
}
template <SfpuType OP = SfpuType::unused, bool APPROXIMATE = false, typename... F>
inline void llk_math_eltwise_ternary_sfpu_init(F&&... init_and_args) {
    llk_math_eltwise_unary_sfpu_init<OP, APPROXIMATE>(std::forward<F>(init_and_args)...);
}

}  // namespace ckernel

// -- tt-llk's wrappers (global namespace, as in tt-llk) -------------------------------------------

template <typename... A>
inline void _llk_math_eltwise_unary_sfpu_init_(A&&...) {}
template <typename... A>
inline void _llk_math_eltwise_binary_sfpu_init_(A&&...) {}

inline void _llk_math_eltwise_unary_sfpu_start_(uint32_t dst_index, TW_LOC) {
    ckernel::sfpi_glue::start(dst_index * 64, loc);
    ckernel::sfpi_glue::check_index(dst_index, "dst_index");
}
template <ckernel::DstSync = ckernel::DstSync::SyncHalf>
inline void _llk_math_eltwise_binary_sfpu_start_(uint32_t dst_index, TW_LOC) {
    ckernel::sfpi_glue::start(dst_index * 64, loc);
}
inline void _llk_math_eltwise_unary_sfpu_inc_dst_face_addr_() { ckernel::sfpi_glue::next_face(); }
inline void _llk_math_eltwise_binary_sfpu_inc_dst_face_addr_() { ckernel::sfpi_glue::next_face(); }
inline void _llk_math_eltwise_unary_sfpu_done_() { ckernel::sfpi_glue::done(); }
inline void _llk_math_eltwise_binary_sfpu_done_() { ckernel::sfpi_glue::done(); }

/** Run `sfpu_func(args...)` per face of DST tile `dst_index`. */
template <bool APPROXIMATE = false, typename Callable, typename... Args>
inline void _llk_math_eltwise_unary_sfpu_params_(Callable&& sfpu_func, uint32_t dst_index,
                                                 ckernel::SfpuCallSite vector_mode = ckernel::VectorMode::RC,
                                                 Args&&... args) {
    ckernel::sfpi_glue::start(dst_index * 64, vector_mode.loc);
    ckernel::sfpi_glue::check_index(dst_index, "dst_index");
    ckernel::sfpi_glue::faces(vector_mode.mode, [&] { sfpu_func(args...); });
    ckernel::sfpi_glue::done();
}

/** Run `sfpu_func(in0, in1, out, args...)` per face; the function offsets its tiles itself. */
template <bool APPROXIMATE = false, typename Callable, typename... Args>
inline void _llk_math_eltwise_binary_sfpu_params_(Callable&& sfpu_func, uint32_t dst_index_in0, uint32_t dst_index_in1,
                                                  uint32_t dst_index_out,
                                                  ckernel::SfpuCallSite vector_mode = ckernel::VectorMode::RC,
                                                  Args&&... args) {
    ckernel::sfpi_glue::start(0, vector_mode.loc);
    ckernel::sfpi_glue::check_index(dst_index_in0, "dst_index_in0");
    ckernel::sfpi_glue::check_index(dst_index_in1, "dst_index_in1");
    ckernel::sfpi_glue::check_index(dst_index_out, "dst_index_out");
    ckernel::sfpi_glue::faces(vector_mode.mode,
                              [&] { sfpu_func(dst_index_in0, dst_index_in1, dst_index_out, args...); });
    ckernel::sfpi_glue::done();
}

/** Run `sfpu_func(in0, in1, in2, out, args...)` per face. */
template <bool APPROXIMATE = false, typename Callable, typename... Args>
inline void _llk_math_eltwise_ternary_sfpu_params_(Callable&& sfpu_func, uint32_t dst_index_in0,
                                                   uint32_t dst_index_in1, uint32_t dst_index_in2,
                                                   uint32_t dst_index_out,
                                                   ckernel::SfpuCallSite vector_mode = ckernel::VectorMode::RC,
                                                   Args&&... args) {
    ckernel::sfpi_glue::start(0, vector_mode.loc);
    ckernel::sfpi_glue::check_index(dst_index_in0, "dst_index_in0");
    ckernel::sfpi_glue::check_index(dst_index_in1, "dst_index_in1");
    ckernel::sfpi_glue::check_index(dst_index_in2, "dst_index_in2");
    ckernel::sfpi_glue::check_index(dst_index_out, "dst_index_out");
    ckernel::sfpi_glue::faces(vector_mode.mode, [&] {
        sfpu_func(dst_index_in0, dst_index_in1, dst_index_in2, dst_index_out, args...);
    });
    ckernel::sfpi_glue::done();
}

namespace ckernel {
// tt-metal's llk_api spellings of the same wrappers.
template <bool APPROXIMATE = false, typename Callable, typename... Args>
inline void llk_math_eltwise_unary_sfpu_params(Callable&& f, uint32_t dst_index, SfpuCallSite mode = VectorMode::RC,
                                               Args&&... args) {
    _llk_math_eltwise_unary_sfpu_params_<APPROXIMATE>(std::forward<Callable>(f), dst_index, mode,
                                                      std::forward<Args>(args)...);
}
template <bool APPROXIMATE = false, typename Callable, typename... Args>
inline void llk_math_eltwise_binary_sfpu_params(Callable&& f, uint32_t in0, uint32_t in1, uint32_t out,
                                                SfpuCallSite mode = VectorMode::RC, Args&&... args) {
    _llk_math_eltwise_binary_sfpu_params_<APPROXIMATE>(std::forward<Callable>(f), in0, in1, out, mode,
                                                       std::forward<Args>(args)...);
}
}  // namespace ckernel

#ifndef DST_SYNC_MODE
#define DST_SYNC_MODE ::ckernel::DstSync::SyncHalf
#endif

// tt-metal's SFPU call macros (llk_math_eltwise_*_sfpu_macros.h): FN names a function of
// ckernel::sfpu; TEMPLATES is a parenthesised template-argument list.
#define TW_SFPU_EXPAND(...) __VA_ARGS__
#define SFPU_UNARY_CALL(DST_SYNC, DST_ACCUM, FN, TEMPLATES, DST_IDX, VECTOR_MODE, ...) \
    _llk_math_eltwise_unary_sfpu_params_(::ckernel::sfpu::FN<TW_SFPU_EXPAND TEMPLATES>, DST_IDX, VECTOR_MODE, ##__VA_ARGS__)
#define SFPU_UNARY_CALL_NO_TEMPLATE_ARGS(DST_SYNC, DST_ACCUM, FN, DST_IDX, VECTOR_MODE, ...) \
    _llk_math_eltwise_unary_sfpu_params_(::ckernel::sfpu::FN, DST_IDX, VECTOR_MODE, ##__VA_ARGS__)
#define SFPU_BINARY_CALL(DST_SYNC, DST_ACCUM, FN, TEMPLATES, DST_IN0, DST_IN1, DST_OUT, VECTOR_MODE, ...)        \
    _llk_math_eltwise_binary_sfpu_params_(::ckernel::sfpu::FN<TW_SFPU_EXPAND TEMPLATES>, DST_IN0, DST_IN1, DST_OUT, \
                                          VECTOR_MODE, ##__VA_ARGS__)
#define SFPU_BINARY_CALL_NO_TEMPLATE_ARGS(DST_SYNC, DST_ACCUM, FN, DST_IN0, DST_IN1, DST_OUT, VECTOR_MODE, ...) \
    _llk_math_eltwise_binary_sfpu_params_(::ckernel::sfpu::FN, DST_IN0, DST_IN1, DST_OUT, VECTOR_MODE, ##__VA_ARGS__)
#define SFPU_TERNARY_CALL(DST_SYNC, DST_ACCUM, FN, TEMPLATES, DST_IN0, DST_IN1, DST_IN2, DST_OUT, VECTOR_MODE, ...) \
    _llk_math_eltwise_ternary_sfpu_params_(::ckernel::sfpu::FN<TW_SFPU_EXPAND TEMPLATES>, DST_IN0, DST_IN1, DST_IN2, \
                                           DST_OUT, VECTOR_MODE, ##__VA_ARGS__)
#define SFPU_TERNARY_CALL_NO_TEMPLATE_ARGS(DST_SYNC, DST_ACCUM, FN, DST_IN0, DST_IN1, DST_IN2, DST_OUT, VECTOR_MODE, \
                                           ...)                                                                   \
    _llk_math_eltwise_ternary_sfpu_params_(::ckernel::sfpu::FN, DST_IN0, DST_IN1, DST_IN2, DST_OUT, VECTOR_MODE,     \
                                           ##__VA_ARGS__)
#define SFPU_UNARY_INIT(OP) ::ckernel::llk_math_eltwise_unary_sfpu_init<::SfpuType::OP>()
#define SFPU_UNARY_INIT_FN(OP, INIT_FN, TEMPLATES) \
    ::ckernel::llk_math_eltwise_unary_sfpu_init<::SfpuType::OP>(INIT_FN<TW_SFPU_EXPAND TEMPLATES>)
#define SFPU_UNARY_INIT_FN_ARGS(OP, INIT_FN, TEMPLATES, ...) \
    ::ckernel::llk_math_eltwise_unary_sfpu_init<::SfpuType::OP>(INIT_FN<TW_SFPU_EXPAND TEMPLATES>, ##__VA_ARGS__)
#define SFPU_BINARY_INIT(OP) ::ckernel::llk_math_eltwise_binary_sfpu_init<::SfpuType::OP>()
#define SFPU_BINARY_INIT_FN_NO_ARGS(OP, INIT_FN) ::ckernel::llk_math_eltwise_binary_sfpu_init<::SfpuType::OP>(INIT_FN)
#define SFPU_BINARY_INIT_FN(OP, INIT_FN, TEMPLATES) \
    ::ckernel::llk_math_eltwise_binary_sfpu_init<::SfpuType::OP>(INIT_FN<TW_SFPU_EXPAND TEMPLATES>)
#define SFPU_BINARY_INIT_FN_ARGS(OP, INIT_FN, TEMPLATES, ...) \
    ::ckernel::llk_math_eltwise_binary_sfpu_init<::SfpuType::OP>(INIT_FN<TW_SFPU_EXPAND TEMPLATES>, ##__VA_ARGS__)

// SFPI code is written unqualified in most ckernel_sfpu headers (which `using namespace sfpi`).
using namespace sfpi;
