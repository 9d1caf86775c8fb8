// Reuse + multicast matmul, in0 side (reader processor).  The core in column 0 of each grid
// row reads that row's block of A (per_core_M x block_w tiles per K block) from DRAM and
// multicasts it along the row; the other cores of the row receive it.  Handshake per block:
// a receiver clears its receiver semaphore, increments the sender's sender semaphore and
// waits for VALID; the sender waits until every receiver is ready, multicasts the block,
// then multicasts VALID into the receivers' semaphores.
#include <cstdint>

#include "hostdevcommon/common_values.hpp"

void kernel_main() {
    uint32_t i = 0;
    const uint32_t a_addr = get_arg_val<uint32_t>(i++);
    const uint32_t Kt = get_arg_val<uint32_t>(i++);
    const uint32_t block_w = get_arg_val<uint32_t>(i++);
    const uint32_t per_core_M = get_arg_val<uint32_t>(i++);
    const uint32_t m0 = get_arg_val<uint32_t>(i++);  // first output tile row of this core
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
    constexpr auto a_args = TensorAccessorArgs<2>();

    constexpr uint32_t cb = tt::CBIndex::c_0;
    const uint32_t tile_bytes = get_tile_size(cb);
    const uint32_t block_tiles = per_core_M * block_w;
    const auto a = TensorAccessor(a_args, a_addr, tile_bytes);
    volatile tt_l1_ptr uint32_t* sender_ptr = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sender_sem);
    volatile tt_l1_ptr uint32_t* receiver_ptr = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(receiver_sem);

    for (uint32_t kb = 0; kb < Kt / block_w; ++kb) {
        cb_reserve_back(cb, block_tiles);
        const uint32_t l1 = get_write_ptr(cb);
        if (is_sender) {
            uint32_t dst = l1;
            for (uint32_t r = 0; r < per_core_M; ++r) {
                for (uint32_t c = 0; c < block_w; ++c) {
                    noc_async_read_tile((m0 + r) * Kt + kb * block_w + c, a, dst);
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
                *receiver_ptr = VALID;  // a plain store through an L1 pointer, multicast next
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
}
