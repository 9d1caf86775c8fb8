// Tile transfer, core B's reader: reserve the page of c_1, tell core A it is free, wait
// for A's tile, hand it to B's writer.
#include <cstdint>

void kernel_main() {
    const uint32_t peer_x = get_arg_val<uint32_t>(0);
    const uint32_t peer_y = get_arg_val<uint32_t>(1);
    const uint32_t count = get_arg_val<uint32_t>(2);
    const uint32_t free_sem = get_semaphore(get_arg_val<uint32_t>(3));
    const uint32_t data_sem = get_semaphore(get_arg_val<uint32_t>(4));

    constexpr uint32_t cb_dst = get_compile_time_arg_val(0);
    volatile tt_l1_ptr uint32_t* data_ptr = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(data_sem);
    for (uint32_t t = 0; t < count; ++t) {
        cb_reserve_back(cb_dst, 1);
        noc_semaphore_inc(get_noc_addr(peer_x, peer_y, free_sem), 1);
        noc_semaphore_wait(data_ptr, 1);
        noc_semaphore_set(data_ptr, 0);
        cb_push_back(cb_dst, 1);
    }
}
