// Reader of the tile matmul: for each output tile of this core (row-major ids start ..
// start+count of an Mt x Nt grid), the Kt tiles of A's row into c_0 and of B's column into c_1.
#include <cstdint>

void kernel_main() {
    const uint32_t a_addr = get_arg_val<uint32_t>(0);
    const uint32_t b_addr = get_arg_val<uint32_t>(1);
    const uint32_t Kt = get_arg_val<uint32_t>(2);
    const uint32_t Nt = get_arg_val<uint32_t>(3);
    const uint32_t start = get_arg_val<uint32_t>(4);
    const uint32_t count = get_arg_val<uint32_t>(5);

    constexpr auto a_args = TensorAccessorArgs<0>();
    constexpr auto b_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();
    const uint32_t tile_bytes = get_tile_size(tt::CBIndex::c_0);
    const auto a = TensorAccessor(a_args, a_addr, tile_bytes);
    const auto b = TensorAccessor(b_args, b_addr, tile_bytes);

    for (uint32_t out = start; out < start + count; ++out) {
        const uint32_t m = out / Nt, n = out % Nt;
        for (uint32_t k = 0; k < Kt; ++k) {
            cb_reserve_back(tt::CBIndex::c_0, 1);
            noc_async_read_tile(m * Kt + k, a, get_write_ptr(tt::CBIndex::c_0));
            cb_reserve_back(tt::CBIndex::c_1, 1);
            noc_async_read_tile(k * Nt + n, b, get_write_ptr(tt::CBIndex::c_1));
            noc_async_read_barrier();
            cb_push_back(tt::CBIndex::c_0, 1);
            cb_push_back(tt::CBIndex::c_1, 1);
        }
    }
}
