// contract.hpp -- external functions whose DFB actions differ from a typical declaration.
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"

// Reserves a whole block but pushes it in two halves.
template <typename D>
inline void push_in_halves() {
    cb_reserve_back(D::index, D::pages_per_block);
    cb_push_back(D::index, D::pages_per_block / 2);
    cb_push_back(D::index, D::pages_per_block / 2);
}

// Fills one block (reserve + push).
template <typename D>
inline void fill_block() {
    cb_reserve_back(D::index, D::pages_per_block);
    cb_push_back(D::index, D::pages_per_block);
}

// Claims to only look at the DFB, but pops the block it looked at.
template <typename D>
inline uint32_t peek_and_pop(uint32_t) {
    cb_wait_front(D::index, D::pages_per_block);
    uint32_t first = *reinterpret_cast<volatile uint16_t*>(get_read_ptr(D::index));
    cb_pop_front(D::index, D::pages_per_block);
    return first;
}

// Only looks: waits for the front block and reads it (no pop).
template <typename D>
inline int32_t peek(uint32_t) {
    return static_cast<int32_t>(*reinterpret_cast<volatile uint16_t*>(get_read_ptr(D::index)));
}

// Touches a circular buffer by its raw index (not a declared dependency).
inline void touch_cb(uint32_t index) {
    cb_reserve_back(index, 1);
    cb_push_back(index, 1);
}
