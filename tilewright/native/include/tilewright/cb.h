// tilewright/cb.h -- the circular-buffer protocol calls shared by data-movement and compute
// kernels (tt-metal dataflow_api.h and api/compute/cb_api.h both provide them).
#pragma once

#include <cstdint>

#include "tilewright/common.h"

inline void cb_reserve_back(int32_t operand, int32_t num_pages) { tw::call("cb_reserve_back", operand, num_pages); }
inline void cb_push_back(int32_t operand, int32_t num_pages) { tw::call("cb_push_back", operand, num_pages); }
inline void cb_wait_front(int32_t operand, int32_t num_pages) { tw::call("cb_wait_front", operand, num_pages); }
inline void cb_pop_front(int32_t operand, int32_t num_pages) { tw::call("cb_pop_front", operand, num_pages); }

inline bool cb_pages_reservable_at_back(int32_t operand, int32_t num_pages) {
    return tw::call("cb_pages_reservable_at_back", operand, num_pages) != 0;
}
inline bool cb_pages_available_at_front(int32_t operand, int32_t num_pages) {
    return tw::call("cb_pages_available_at_front", operand, num_pages) != 0;
}
/** Bytes of one tile of the CB's format and tile shape (tt-metal: unpack_tile_size[cb]). */
inline int32_t get_tile_size(int32_t operand) { return static_cast<int32_t>(tw::call("get_tile_size", operand)); }
/** Elements of one tile of the CB (tile height x width). */
inline uint32_t get_tile_hw(int32_t operand) { return static_cast<uint32_t>(tw::call("get_tile_hw", operand)); }
/** Faces of one tile of the CB (4 for 32x32). */
inline uint32_t get_tile_num_faces(int32_t operand) {
    return static_cast<uint32_t>(tw::call("get_tile_num_faces", operand));
}
inline DataFormat get_dataformat(int32_t operand) {
    return static_cast<DataFormat>(tw::call("get_dataformat", operand));
}

