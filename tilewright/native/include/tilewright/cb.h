// tilewright/cb.h -- the circular-buffer protocol calls shared by data-movement and compute
// kernels (tt-metal dataflow_api.h and api/compute/cb_api.h both provide them), and the
// read-only view of a CB interface (get_local_cb_interface).
#pragma once

#include <cstdint>

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
/** Bytes of one tile of the CB's format and tile shape (tt-metal: unpack_tile_size[cb]). */
inline uint32_t get_tile_size(int32_t operand, TW_LOC) { return twrt_cb_info(operand, 4, loc); }
/** Elements of one tile of the CB (tile height x width). */
inline uint32_t get_tile_hw(int32_t operand, TW_LOC) { return twrt_cb_info(operand, 5, loc); }
/** Faces of one tile of the CB (4 for 32x32). */
inline uint32_t get_tile_num_faces(int32_t operand, TW_LOC) { return twrt_cb_info(operand, 6, loc); }
inline DataFormat get_dataformat(int32_t operand, TW_LOC) {
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
