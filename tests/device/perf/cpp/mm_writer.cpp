// mm_writer.cpp -- the C++ twin of programs.mm_writer: one output tile to DRAM.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t out_addr = get_arg_val<uint32_t>(0);
    uint32_t col = get_arg_val<uint32_t>(1);
    const auto out = TensorAccessor(TensorAccessorArgs<0>(), out_addr, 2048);
    cb_wait_front(16, 1);
    noc_async_write_tile(col, out, get_read_ptr(16));
    noc_async_write_barrier();
    cb_pop_front(16, 1);
}
