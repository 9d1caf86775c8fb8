// tilewright/cb.h -- the circular-buffer protocol calls shared by data-movement and compute
// kernels (tt-metal dataflow_api.h and api/compute/cb_api.h both provide them), and the
// read-only view of a CB interface (get_local_cb_interface).
#pragma once

#include <cstdint>
#include <type_traits>

#include "tilewright/common.h"

inline void cb_reserve_back(int32_t operand, int32_t num_pages, TW_LOC) { twrt_cb_reserve_back(operand, num_pages, loc); }
inline void cb_push_back(int32_t operand, int32_t num_pages, TW_LOC) { twrt_cb_push_back(operand, num_pages, loc); }
inline void cb_wait_front(int32_t operand, int32_t num_pages, TW_LOC) { twrt_cb_wait_front(operand, num_pages, loc); }
inline void cb_pop_front(int32_t operand, int32_t num_pages, TW_LOC) { twrt_cb_pop_front(operand, num_pages, loc); }

/** True if num_pages can be reserved now (a false answer lets the other kernels run). */
inline bool cb_pages_reservable_at_back(int32_t operand, int32_t num_pages, TW_LOC) {
    return twrt_cb_pages_reservable_at_back(operand, num_pages, loc);
}
/** True if num_pages are filled now (a false answer lets the other kernels run). */
inline bool cb_pages_available_at_front(int32_t operand, int32_t num_pages, TW_LOC) {
    return twrt_cb_pages_available_at_front(operand, num_pages, loc);
}
namespace tw {

/** One CB's descriptor as the kernel's build saw it (tt-metal's JIT build generates the
 * program's CB formats and tile shapes into each kernel: unpack_src_format[],
 * unpack_tile_size[] ...).  The build defines TW_CB_TABLE from the program's CBs on the
 * kernel's cores (native/kernels.py, device/cb.py kernel_cb_table); it is part of the
 * kernel's build key. */
struct CbBuildEntry {
    int32_t index;
    uint32_t format;
    uint32_t tile_bytes;
    uint32_t tile_hw;
    uint32_t faces;
};

#ifndef TW_CB_TABLE
#define TW_CB_TABLE
#endif
inline constexpr CbBuildEntry cb_build_table[] = {TW_CB_TABLE{-1, 0, 0, 0, 0}};

/** Deliberately not constexpr: a constant-evaluated get_tile_size / get_dataformat /
 * get_tile_hw / get_tile_num_faces of a CB index reaches it when the index is not
 * configured on the kernel's cores, or differs between them -- the compiler then names
 * this function in its "call to non-'constexpr' function" error. */
inline CbBuildEntry cb_not_configured_alike_on_every_core_of_this_kernel(int32_t) { return {}; }

constexpr CbBuildEntry cb_build_entry(int32_t operand) {
    for (const CbBuildEntry& e : cb_build_table) {
        if (e.index >= 0 && e.index == operand) return e;
    }
    return cb_not_configured_alike_on_every_core_of_this_kernel(operand);
}

}  // namespace tw

/** Bytes of one tile of the CB's format and tile shape (tt-metal: unpack_tile_size[cb]):
 * a constant expression from the build's CB table, at run time the core's CB. */
constexpr uint32_t get_tile_size(int32_t operand, TW_LOC) {
    if (std::is_constant_evaluated()) return tw::cb_build_entry(operand).tile_bytes;
    return twrt_cb_info(operand, 4, loc);
}
/** Elements of one tile of the CB (tile height x width). */
constexpr uint32_t get_tile_hw(int32_t operand, TW_LOC) {
    if (std::is_constant_evaluated()) return tw::cb_build_entry(operand).tile_hw;
    return twrt_cb_info(operand, 5, loc);
}
/** Faces of one tile of the CB (4 for 32x32). */
constexpr uint32_t get_tile_num_faces(int32_t operand, TW_LOC) {
    if (std::is_constant_evaluated()) return tw::cb_build_entry(operand).faces;
    return twrt_cb_info(operand, 6, loc);
}
/** The CB's data format (tt-metal: unpack_src_format[cb]). */
constexpr DataFormat get_dataformat(int32_t operand, TW_LOC) {
    if (std::is_constant_evaluated()) return static_cast<DataFormat>(tw::cb_build_entry(operand).format);
    return static_cast<DataFormat>(twrt_cb_info(operand, 7, loc));
}

/** A snapshot of a CB interface, as tt-metal's LocalCBInterface names its fields. */
struct LocalCBInterface {
    uint32_t fifo_size;
    uint32_t fifo_limit;
    uint32_t fifo_page_size;
    uint32_t fifo_num_pages;
    uint32_t fifo_rd_ptr;
    uint32_t fifo_wr_ptr;
    uint32_t tiles_acked;
    uint32_t tiles_received;
};

inline LocalCBInterface get_local_cb_interface(uint32_t cb_id, TW_LOC) {
    int32_t cb = static_cast<int32_t>(cb_id);
    return LocalCBInterface{twrt_cb_info(cb, 2, loc),  twrt_cb_info(cb, 8, loc),      twrt_cb_info(cb, 0, loc),
                            twrt_cb_info(cb, 1, loc),  twrt_cb_read_ptr(cb, loc),     twrt_cb_write_ptr(cb, loc),
                            twrt_cb_info(cb, 10, loc), twrt_cb_info(cb, 9, loc)};
}
