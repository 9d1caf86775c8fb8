// mm_reader.cpp -- the C++ twin of programs.mm_reader (tests/device/perf/programs.py):
// each core reads its in1 tile per K step; the sender reads the in0 tile and multicasts
// it (linked) to the receivers after they signal ready, then sets their valid flag.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t a_addr = get_arg_val<uint32_t>(0);
    uint32_t b_addr = get_arg_val<uint32_t>(1);
    uint32_t kt = get_arg_val<uint32_t>(2);
    uint32_t col = get_arg_val<uint32_t>(3);
    uint32_t ncols = get_arg_val<uint32_t>(4);
    uint32_t sender_x = get_arg_val<uint32_t>(5);
    uint32_t sender_y = get_arg_val<uint32_t>(6);
    uint32_t x0 = get_arg_val<uint32_t>(7), y0 = get_arg_val<uint32_t>(8);
    uint32_t x1 = get_arg_val<uint32_t>(9), y1 = get_arg_val<uint32_t>(10);
    uint32_t n_recv = get_arg_val<uint32_t>(11);
    uint32_t is_sender = get_arg_val<uint32_t>(12);
    constexpr auto args_a = TensorAccessorArgs<0>();
    constexpr auto args_b = TensorAccessorArgs<args_a.next_compile_time_args_offset()>();
    const auto a = TensorAccessor(args_a, a_addr, 2048);
    const auto b = TensorAccessor(args_b, b_addr, 2048);
    uint32_t ready = get_semaphore(0);
    uint32_t valid = get_semaphore(1);
    auto* ready_ptr = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(ready);
    auto* valid_ptr = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(valid);
    for (uint32_t k = 0; k < kt; ++k) {
        cb_reserve_back(1, 1);
        noc_async_read_tile(k * ncols + col, b, get_write_ptr(1));
        cb_reserve_back(0, 1);
        uint32_t dst = get_write_ptr(0);
        if (is_sender) {
            noc_async_read_tile(k, a, dst);
            noc_async_read_barrier();
            noc_semaphore_wait(ready_ptr, n_recv);
            noc_semaphore_set(ready_ptr, 0);
            noc_async_write_multicast(dst, get_noc_multicast_addr(x0, y0, x1, y1, dst), 2048, n_recv, true);
            noc_semaphore_set(valid_ptr, 1);
            noc_semaphore_set_multicast(valid, get_noc_multicast_addr(x0, y0, x1, y1, valid), n_recv);
            noc_async_write_barrier();
        } else {
            noc_semaphore_set(valid_ptr, 0);
            noc_semaphore_inc(get_noc_addr(sender_x, sender_y, ready), 1);
            noc_semaphore_wait(valid_ptr, 1);
            noc_async_read_barrier();
        }
        cb_push_back(1, 1);
        cb_push_back(0, 1);
    }
}
