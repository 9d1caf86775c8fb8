// Writer: tiles start .. start+count from c_16 to an interleaved tensor.
#include <cstdint>

void kernel_main() {
    const uint32_t dst_addr = get_arg_val<uint32_t>(0);
    const uint32_t start = get_arg_val<uint32_t>(1);
    const uint32_t count = get_arg_val<uint32_t>(2);

    constexpr auto dst_args = TensorAccessorArgs<0>();
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    const auto dst = TensorAccessor(dst_args, dst_addr, get_tile_size(cb_out));

    for (uint32_t t = start; t < start + count; ++t) {
        cb_wait_front(cb_out, 1);
        noc_async_write_tile(t, dst, get_read_ptr(cb_out));
        noc_async_write_barrier();
        cb_pop_front(cb_out, 1);
    }
}
