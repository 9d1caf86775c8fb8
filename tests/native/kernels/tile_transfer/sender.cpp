// Tile transfer, core A's writer: each tile of c_0 goes over the NoC into core B's c_1
// (one page, so its write pointer is the CB's base, at the same L1 address on both cores:
// one CB configuration covers both).  Core B raises `free_sem` on A when its page is
// reserved; A raises `data_sem` on B when the tile has landed.
#include <cstdint>

void kernel_main() {
    const uint32_t peer_x = get_arg_val<uint32_t>(0);
    const uint32_t peer_y = get_arg_val<uint32_t>(1);
    const uint32_t count = get_arg_val<uint32_t>(2);
    const uint32_t free_sem = get_semaphore(get_arg_val<uint32_t>(3));
    const uint32_t data_sem = get_semaphore(get_arg_val<uint32_t>(4));

    constexpr uint32_t cb_src = get_compile_time_arg_val(0);
    constexpr uint32_t cb_dst = get_compile_time_arg_val(1);
    constexpr uint32_t tile_bytes = get_tile_size(cb_src);
    static_assert(tile_bytes == get_tile_size(cb_dst), "both CBs hold tiles of one format");

    const uint32_t peer = get_write_ptr(cb_dst);
    volatile tt_l1_ptr uint32_t* free_ptr = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(free_sem);
    for (uint32_t t = 0; t < count; ++t) {
        cb_wait_front(cb_src, 1);
        noc_semaphore_wait(free_ptr, 1);
        noc_semaphore_set(free_ptr, 0);
        noc_async_write(get_read_ptr(cb_src), get_noc_addr(peer_x, peer_y, peer), tile_bytes);
        noc_async_write_barrier();
        noc_semaphore_inc(get_noc_addr(peer_x, peer_y, data_sem), 1);
        cb_pop_front(cb_src, 1);
    }
}
