// Reader of a binary eltwise op: tiles start .. start+count of two interleaved tensors into
// c_0 and c_1, one tile at a time.  Compile-time args: the two TensorAccessorArgs.
#include <cstdint>

void kernel_main() {
    const uint32_t a_addr = get_arg_val<uint32_t>(0);
    const uint32_t b_addr = get_arg_val<uint32_t>(1);
    const uint32_t start = get_arg_val<uint32_t>(2);
    const uint32_t count = get_arg_val<uint32_t>(3);

    constexpr auto a_args = TensorAccessorArgs<0>();
    constexpr auto b_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();
    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    constexpr uint32_t cb_b = tt::CBIndex::c_1;
    const uint32_t tile_bytes = get_tile_size(cb_a);
    const auto a = TensorAccessor(a_args, a_addr, tile_bytes);
    const auto b = TensorAccessor(b_args, b_addr, tile_bytes);

    for (uint32_t t = start; t < start + count; ++t) {
        cb_reserve_back(cb_a, 1);
        cb_reserve_back(cb_b, 1);
        noc_async_read_tile(t, a, get_write_ptr(cb_a));
        noc_async_read_tile(t, b, get_write_ptr(cb_b));
        noc_async_read_barrier();
        cb_push_back(cb_a, 1);
        cb_push_back(cb_b, 1);
    }
}
