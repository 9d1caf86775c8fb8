// Reader of two tensors: tiles 0 .. n2-1 of the second one into CB `cb2` (a reduce's
// scaler tile, a row of bias tiles), then the first one's NC x Ht x Wt tiles into c_0,
// row-major, or with chunk > 0 in column chunks of `chunk` tiles (for each chunk, for each
// row, the chunk's tiles: the order of REDUCE_COL's streaming policies).
// Runtime args: src, second, Ht, Wt, NC, chunk, cb2, n2.
#include <cstdint>

void kernel_main() {
    const uint32_t src_addr = get_arg_val<uint32_t>(0);
    const uint32_t scaler_addr = get_arg_val<uint32_t>(1);
    const uint32_t Ht = get_arg_val<uint32_t>(2);
    const uint32_t Wt = get_arg_val<uint32_t>(3);
    const uint32_t NC = get_arg_val<uint32_t>(4);
    const uint32_t chunk = get_arg_val<uint32_t>(5);

    const uint32_t cb2 = get_arg_val<uint32_t>(6);
    const uint32_t n2 = get_arg_val<uint32_t>(7);
    constexpr uint32_t cb_in = tt::CBIndex::c_0;
    constexpr auto src_args = TensorAccessorArgs<0>();
    constexpr auto scaler_args = TensorAccessorArgs<src_args.next_compile_time_args_offset()>();
    constexpr uint32_t tile_bytes = get_tile_size(cb_in);
    const auto src = TensorAccessor(src_args, src_addr, tile_bytes);
    const auto second = TensorAccessor(scaler_args, scaler_addr, get_tile_size(cb2));

    for (uint32_t t = 0; t < n2; ++t) {
        cb_reserve_back(cb2, 1);
        noc_async_read_tile(t, second, get_write_ptr(cb2));
        noc_async_read_barrier();
        cb_push_back(cb2, 1);
    }

    auto read = [&](uint32_t t) {
        cb_reserve_back(cb_in, 1);
        noc_async_read_tile(t, src, get_write_ptr(cb_in));
        noc_async_read_barrier();
        cb_push_back(cb_in, 1);
    };
    for (uint32_t nc = 0; nc < NC; ++nc) {
        const uint32_t base = nc * Ht * Wt;
        if (chunk == 0) {
            for (uint32_t t = 0; t < Ht * Wt; ++t) read(base + t);
            continue;
        }
        for (uint32_t c0 = 0; c0 < Wt; c0 += chunk) {
            const uint32_t n = Wt - c0 < chunk ? Wt - c0 : chunk;
            for (uint32_t r = 0; r < Ht; ++r)
                for (uint32_t j = 0; j < n; ++j) read(base + r * Wt + c0 + j);
        }
    }
}
