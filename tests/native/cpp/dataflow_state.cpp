// dataflow_state.cpp -- data movement with the stateful NoC forms, transaction ids, bank-id
// addresses, whole-shard transfers and the CB descriptor queries.
// Compile-time args: accessor args of a (DRAM, 4 tiles), out (DRAM, 4 tiles), s (sharded L1).
// Runtime args: a, out, s addresses, number of DRAM banks.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "api/debug/dprint.h"

void kernel_main() {
    const uint32_t a_addr = get_arg_val<uint32_t>(0);
    const uint32_t out_addr = get_arg_val<uint32_t>(1);
    const uint32_t s_addr = get_arg_val<uint32_t>(2);
    const uint32_t banks = get_arg_val<uint32_t>(3);
    constexpr uint32_t cb = tt::CBIndex::c_0;
    constexpr auto a_args = TensorAccessorArgs<0>();
    constexpr auto out_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();
    constexpr auto s_args = TensorAccessorArgs<out_args.next_compile_time_args_offset()>();
    const uint32_t tile = get_tile_size(cb);
    const auto a = TensorAccessor(a_args, a_addr, tile);
    const auto out = TensorAccessor(out_args, out_addr, tile);
    const auto s = TensorAccessor(s_args, s_addr, tile);
    DPRINT << "tile " << tile << " hw " << get_tile_hw(cb) << " faces " << get_tile_num_faces(cb) << " format "
           << static_cast<uint32_t>(get_dataformat(cb)) << ENDL();
    for (uint32_t other = 1; other <= 2; ++other) {
        DPRINT << "cb " << other << " tile " << get_tile_size(other) << " format "
               << static_cast<uint32_t>(get_dataformat(other)) << ENDL();
    }

    // Reads: one page per flavour.
    cb_reserve_back(cb, 4);
    DPRINT << "reservable " << cb_pages_reservable_at_back(cb, 4) << ENDL();
    const uint32_t l1 = get_write_ptr(cb);
    uint64_t src = a.get_noc_addr(0);
    noc_async_read_one_packet_set_state(src, tile);
    noc_async_read_one_packet_with_state(static_cast<uint32_t>(src), l1);
    src = a.get_noc_addr(1);
    noc_async_read_set_state(src);
    noc_async_read_with_state(static_cast<uint32_t>(src), l1 + tile, tile / 2);
    noc_async_read_with_state(static_cast<uint32_t>(src) + tile / 2, l1 + tile + tile / 2, tile / 2);
    const uint64_t by_bank = get_noc_addr_from_bank_id<true>(2 % banks, a_addr + (2 / banks) * tile);
    DPRINT << "bank address matches " << (by_bank == a.get_noc_addr(2)) << ENDL();
    noc_async_read(by_bank, l1 + 2 * tile, tile);
    noc_async_read_set_trid(5);
    noc_async_read(a.get_noc_addr(3), l1 + 3 * tile, tile);
    noc_async_read_barrier_with_trid(5);
    noc_async_read_barrier();
    cb_push_back(cb, 4);

    // Writes: the same four pages back, one flavour each.
    cb_wait_front(cb, 4);
    DPRINT << "available " << cb_pages_available_at_front(cb, 4) << " reservable "
           << cb_pages_reservable_at_back(cb, 1) << ENDL();
    const uint32_t rd = get_read_ptr(cb);
    uint64_t dst = out.get_noc_addr(0);
    noc_async_write_one_packet_set_state(dst, tile);
    noc_async_write_one_packet_with_state(rd, static_cast<uint32_t>(dst));
    dst = out.get_noc_addr(1);
    noc_async_write_set_state(dst);
    noc_async_write_with_state(rd + tile, static_cast<uint32_t>(dst), tile / 2);
    noc_async_write_with_state(rd + tile + tile / 2, static_cast<uint32_t>(dst) + tile / 2, tile / 2);
    noc_async_write_set_trid(7);
    noc_async_write_one_packet_with_trid(rd + 2 * tile, out.get_noc_addr(2), tile, 7);
    dst = out.get_noc_addr(3);
    noc_async_write_one_packet_with_trid_set_state(dst);
    noc_async_write_one_packet_with_trid_with_state(rd + 3 * tile, static_cast<uint32_t>(dst), tile, 7);
    noc_async_write_barrier_with_trid(7);
    noc_async_write_barrier();
    cb_pop_front(cb, 4);

    // Whole shards: shard 1 of s overwrites shard 0.
    cb_reserve_back(cb, 4);
    noc_async_read_shard(1, s, get_write_ptr(cb));
    noc_async_read_barrier();
    noc_async_write_shard(0, s, get_write_ptr(cb));
    noc_async_write_barrier();
    cb_push_back(cb, 4);
    cb_pop_front(cb, 4);
}
