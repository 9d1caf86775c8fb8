// Reader of a unary op in the object API (Noc, CircularBuffer, designated-initializer args):
// tiles start .. start+count of one interleaved tensor into c_0.
#include <cstdint>

#include "api/dataflow/circular_buffer.h"
#include "api/dataflow/noc.h"
#include "api/tensor/noc_traits.h"

void kernel_main() {
    const uint32_t src_addr = get_arg_val<uint32_t>(0);
    const uint32_t start = get_arg_val<uint32_t>(1);
    const uint32_t count = get_arg_val<uint32_t>(2);

    constexpr uint32_t cb_id = tt::CBIndex::c_0;
    const uint32_t tile_bytes = get_tile_size(cb_id);
    constexpr auto src_args = TensorAccessorArgs<0>();
    const auto src = TensorAccessor(src_args, src_addr);

    Noc noc;
    CircularBuffer cb(cb_id);
    for (uint32_t i = start; i < start + count; ++i) {
        cb.reserve_back(1);
        // Two halves, to exercise both offsets.
        noc.async_read(src, cb, tile_bytes / 2, {.page_id = i}, {.offset_bytes = 0});
        noc.async_read(src, cb, tile_bytes / 2, {.page_id = i, .offset_bytes = tile_bytes / 2},
                       {.offset_bytes = tile_bytes / 2});
        noc.async_read_barrier();
        cb.push_back(1);
    }
}
