// Reader of a unary op: tiles start .. start+count of one interleaved tensor into c_0.
#include <cstdint>

void kernel_main() {
    const uint32_t src_addr = get_arg_val<uint32_t>(0);
    const uint32_t start = get_arg_val<uint32_t>(1);
    const uint32_t count = get_arg_val<uint32_t>(2);

    constexpr auto src_args = TensorAccessorArgs<0>();
    constexpr uint32_t cb_in = tt::CBIndex::c_0;
    const auto src = TensorAccessor(src_args, src_addr, get_tile_size(cb_in));

    for (uint32_t t = start; t < start + count; ++t) {
        cb_reserve_back(cb_in, 1);
        noc_async_read_tile(t, src, get_write_ptr(cb_in));
        noc_async_read_barrier();
        cb_push_back(cb_in, 1);
    }
}
