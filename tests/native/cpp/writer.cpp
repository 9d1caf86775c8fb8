// writer.cpp -- tt-metal style writer kernel (old header spelling).
#include <cstdint>

#include "dataflow_api.h"

void kernel_main() {
    uint32_t out_addr = get_arg_val<uint32_t>(0);
    uint32_t start = get_arg_val<uint32_t>(1);
    uint32_t count = get_arg_val<uint32_t>(2);
    constexpr uint32_t cb_out = 16;
    const auto out = TensorAccessor(TensorAccessorArgs<0>(), out_addr, get_tile_size(cb_out));
    for (uint32_t t = start; t < start + count; ++t) {
        cb_wait_front(cb_out, 1);
        noc_async_write_tile(t, out, get_read_ptr(cb_out));
        noc_async_write_barrier();
        cb_pop_front(cb_out, 1);
    }
}
