// writer.hpp -- write a DFB's blocks to pages of an interleaved tensor (TensorAccessor).
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"

template <typename Src, typename Accessor>
inline void write_tiles(const Accessor& dst, uint32_t start_tile, uint32_t num_tiles) {
    for (uint32_t done = 0; done < num_tiles; done += Src::pages_per_block) {
        cb_wait_front(Src::index, Src::pages_per_block);
        uint32_t l1_read_addr = get_read_ptr(Src::index);
        for (uint32_t t = 0; t < Src::pages_per_block; ++t) {
            noc_async_write_page(start_tile + done + t, dst, l1_read_addr);
            l1_read_addr += Src::page_size_bytes;
        }
        noc_async_write_barrier();
        cb_pop_front(Src::index, Src::pages_per_block);
    }
}

// The same with an InterleavedAddrGenFast built from a raw DRAM address (older kernels).
template <uint32_t CbIndex, uint32_t PageBytes>
inline void write_tiles_addrgen(uint32_t dram_addr, uint32_t start_tile, uint32_t num_tiles, uint32_t per_block) {
    const InterleavedAddrGenFast<true> gen = {
        .bank_base_address = dram_addr, .page_size = PageBytes, .data_format = DataFormat::Float16_b};
    for (uint32_t done = 0; done < num_tiles; done += per_block) {
        cb_wait_front(CbIndex, per_block);
        uint32_t addr = get_read_ptr(CbIndex);
        for (uint32_t t = 0; t < per_block; ++t) {
            noc_async_write_tile(start_tile + done + t, gen, addr);
            addr += PageBytes;
        }
        noc_async_write_barrier();
        cb_pop_front(CbIndex, per_block);
    }
}
