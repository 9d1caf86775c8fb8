// reader.cpp -- tt-metal style reader kernel: two tensors (TensorAccessorArgs from CTAs).
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t a_addr = get_arg_val<uint32_t>(0);
    uint32_t b_addr = get_arg_val<uint32_t>(1);
    uint32_t start = get_arg_val<uint32_t>(2);
    uint32_t count = get_arg_val<uint32_t>(3);
    constexpr uint32_t cb_a = get_compile_time_arg_val(0);
    constexpr uint32_t cb_b = get_compile_time_arg_val(1);
    constexpr auto args_a = TensorAccessorArgs<2>();
    constexpr auto args_b = TensorAccessorArgs<args_a.next_compile_time_args_offset()>();
    const auto a = TensorAccessor(args_a, a_addr, get_tile_size(cb_a));
    const auto b = TensorAccessor(args_b, b_addr, get_tile_size(cb_b));
    for (uint32_t t = start; t < start + count; ++t) {
        cb_reserve_back(cb_a, 1);
        noc_async_read_tile(t, a, get_write_ptr(cb_a));
        cb_reserve_back(cb_b, 1);
        noc_async_read_page(t, b, get_write_ptr(cb_b));
        noc_async_read_barrier();
        cb_push_back(cb_a, 1);
        cb_push_back(cb_b, 1);
    }
}
