// tilewright/cb_object.h -- experimental::CircularBuffer / DataflowBuffer: the object-style
// circular-buffer API of newer tt-metal kernels (data movement and compute).
#pragma once

#include <cstdint>

#include "tilewright/cb.h"

namespace experimental {

class CircularBuffer {
public:
    explicit constexpr CircularBuffer(uint32_t cb_id) : id_(cb_id) {}

    void reserve_back(int32_t n, TW_LOC) const { twrt_cb_reserve_back(int32_t(id_), n, loc); }
    void push_back(int32_t n, TW_LOC) const { twrt_cb_push_back(int32_t(id_), n, loc); }
    void wait_front(int32_t n, TW_LOC) const { twrt_cb_wait_front(int32_t(id_), n, loc); }
    void pop_front(int32_t n, TW_LOC) const { twrt_cb_pop_front(int32_t(id_), n, loc); }
    bool pages_reservable_at_back(int32_t n, TW_LOC) const {
        return twrt_cb_pages_reservable_at_back(int32_t(id_), n, loc);
    }
    bool pages_available_at_front(int32_t n, TW_LOC) const {
        return twrt_cb_pages_available_at_front(int32_t(id_), n, loc);
    }
    uint32_t get_write_ptr(TW_LOC) const { return twrt_cb_write_ptr(int32_t(id_), loc); }
    uint32_t get_read_ptr(TW_LOC) const { return twrt_cb_read_ptr(int32_t(id_), loc); }
    constexpr uint32_t get_tile_size(TW_LOC) const { return ::get_tile_size(int32_t(id_), loc); }
    uint32_t get_page_size(TW_LOC) const { return twrt_cb_info(int32_t(id_), 0, loc); }
    uint32_t get_entry_size(TW_LOC) const { return twrt_cb_info(int32_t(id_), 0, loc); }
    uint32_t get_cb_id() const { return id_; }
    /** Quasar dataflow buffers end a producer's stream; circular buffers need nothing. */
    void finish() const {}

private:
    uint32_t id_;
};

/** Quasar's dataflow buffer, on Wormhole / Blackhole a circular buffer. */
using DataflowBuffer = CircularBuffer;

}  // namespace experimental
