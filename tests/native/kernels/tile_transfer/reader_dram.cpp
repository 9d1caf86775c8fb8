// Tile transfer, core A's reader: tiles 0 .. count-1 of an interleaved DRAM tensor into
// c_0.  The page size and format of the address generator are constant expressions
// from the CB's descriptor (get_tile_size / get_dataformat are constexpr, as in
// tt-metal's NoC_tile_transfer example): a wrong build-time table garbles the copy.
#include <cstdint>

void kernel_main() {
    const uint32_t src_addr = get_arg_val<uint32_t>(0);
    const uint32_t count = get_arg_val<uint32_t>(1);

    constexpr uint32_t cb_in = get_compile_time_arg_val(0);
    constexpr uint32_t tile_bytes = get_tile_size(cb_in);
    constexpr DataFormat format = get_dataformat(cb_in);
    static_assert(tile_bytes > 0, "a configured CB has a tile size at build time");

    const InterleavedAddrGenFast<true> src = {
        .bank_base_address = src_addr, .page_size = tile_bytes, .data_format = format};
    for (uint32_t t = 0; t < count; ++t) {
        cb_reserve_back(cb_in, 1);
        noc_async_read_tile(t, src, get_write_ptr(cb_in));
        noc_async_read_barrier();
        cb_push_back(cb_in, 1);
    }
}
