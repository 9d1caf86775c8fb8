// Reuse + multicast matmul, in1 side and output (writer processor).  The core in row 0 of
// each grid column reads that column's block of B (block_w x per_core_N tiles per K block)
// and multicasts it down the column (same handshake as mcast_in0.cpp); at the end every
// core writes its per_core_M x per_core_N output block.
#include <cstdint>

#include "hostdevcommon/common_values.hpp"

void kernel_main() {
    uint32_t i = 0;
    const uint32_t b_addr = get_arg_val<uint32_t>(i++);
    const uint32_t out_addr = get_arg_val<uint32_t>(i++);
    const uint32_t Kt = get_arg_val<uint32_t>(i++);
    const uint32_t Nt = get_arg_val<uint32_t>(i++);
    const uint32_t block_w = get_arg_val<uint32_t>(i++);
    const uint32_t per_core_M = get_arg_val<uint32_t>(i++);
    const uint32_t per_core_N = get_arg_val<uint32_t>(i++);
    const uint32_t m0 = get_arg_val<uint32_t>(i++);
    const uint32_t n0 = get_arg_val<uint32_t>(i++);
    const uint32_t is_sender = get_arg_val<uint32_t>(i++);
    const uint32_t sender_x = get_arg_val<uint32_t>(i++);
    const uint32_t sender_y = get_arg_val<uint32_t>(i++);
    const uint32_t mcast_x0 = get_arg_val<uint32_t>(i++);
    const uint32_t mcast_y0 = get_arg_val<uint32_t>(i++);
    const uint32_t mcast_x1 = get_arg_val<uint32_t>(i++);
    const uint32_t mcast_y1 = get_arg_val<uint32_t>(i++);
    const uint32_t num_dests = get_arg_val<uint32_t>(i++);
    const uint32_t sender_sem = get_semaphore(get_compile_time_arg_val(0));
    const uint32_t receiver_sem = get_semaphore(get_compile_time_arg_val(1));
    constexpr auto b_args = TensorAccessorArgs<2>();
    constexpr auto out_args = TensorAccessorArgs<b_args.next_compile_time_args_offset()>();

    constexpr uint32_t cb = tt::CBIndex::c_1;
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    const uint32_t tile_bytes = get_tile_size(cb);
    const uint32_t block_tiles = block_w * per_core_N;
    const auto b = TensorAccessor(b_args, b_addr, tile_bytes);
    const auto out = TensorAccessor(out_args, out_addr, get_tile_size(cb_out));
    volatile tt_l1_ptr uint32_t* sender_ptr = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sender_sem);
    volatile tt_l1_ptr uint32_t* receiver_ptr = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(receiver_sem);

    for (uint32_t kb = 0; kb < Kt / block_w; ++kb) {
        cb_reserve_back(cb, block_tiles);
        const uint32_t l1 = get_write_ptr(cb);
        if (is_sender) {
            uint32_t dst = l1;
            for (uint32_t r = 0; r < block_w; ++r) {
                for (uint32_t c = 0; c < per_core_N; ++c) {
                    noc_async_read_tile((kb * block_w + r) * Nt + n0 + c, b, dst);
                    dst += tile_bytes;
                }
            }
            noc_async_read_barrier();
            if (num_dests > 0) {
                noc_semaphore_wait(sender_ptr, num_dests);
                noc_semaphore_set(sender_ptr, 0);
                noc_async_write_multicast(
                    l1, get_noc_multicast_addr(mcast_x0, mcast_y0, mcast_x1, mcast_y1, l1), block_tiles * tile_bytes,
                    num_dests);
                *receiver_ptr = VALID;
                noc_semaphore_set_multicast(
                    receiver_sem, get_noc_multicast_addr(mcast_x0, mcast_y0, mcast_x1, mcast_y1, receiver_sem),
                    num_dests);
            }
        } else {
            noc_semaphore_set(receiver_ptr, INVALID);
            noc_semaphore_inc(get_noc_addr(sender_x, sender_y, sender_sem), 1);
            noc_semaphore_wait(receiver_ptr, VALID);
        }
        cb_push_back(cb, block_tiles);
    }

    cb_wait_front(cb_out, per_core_M * per_core_N);
    uint32_t src = get_read_ptr(cb_out);
    for (uint32_t r = 0; r < per_core_M; ++r) {
        for (uint32_t c = 0; c < per_core_N; ++c) {
            noc_async_write_tile((m0 + r) * Nt + n0 + c, out, src);
            src += get_tile_size(cb_out);
        }
    }
    noc_async_write_barrier();
    cb_pop_front(cb_out, per_core_M * per_core_N);
}
