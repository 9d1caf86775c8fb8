// Tile transfer, core B's writer: c_1 to tiles 0 .. count-1 of an interleaved DRAM
// tensor, with the tile size and format of the CB as constant expressions.
#include <cstdint>

void kernel_main() {
    const uint32_t dst_addr = get_arg_val<uint32_t>(0);
    const uint32_t count = get_arg_val<uint32_t>(1);

    constexpr uint32_t cb_out = get_compile_time_arg_val(0);
    constexpr uint32_t tile_bytes = get_tile_size(cb_out);
    constexpr DataFormat format = get_dataformat(cb_out);

    const InterleavedAddrGenFast<true> dst = {
        .bank_base_address = dst_addr, .page_size = tile_bytes, .data_format = format};
    for (uint32_t t = 0; t < count; ++t) {
        cb_wait_front(cb_out, 1);
        noc_async_write_tile(t, dst, get_read_ptr(cb_out));
        noc_async_write_barrier();
        cb_pop_front(cb_out, 1);
    }
}
