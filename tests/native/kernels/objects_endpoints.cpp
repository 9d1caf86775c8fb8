// The object API's other endpoints on one core: CoreLocalMem, UnicastEndpoint (read, write,
// inline_dw_write), MulticastEndpoint with the sender included, set_async_*_state / *_with_state,
// async_write_zeros on a buffer and on a tensor page, then the assembled page (CB c_1) out to
// a tensor through a DataflowBuffer.
// Runtime args: output address.  Compile-time args: the output's TensorAccessorArgs.
#include <cstdint>

#include "api/dataflow/dataflow_buffer.h"
#include "api/dataflow/endpoints.h"
#include "api/dataflow/noc.h"
#include "experimental/core_local_mem.h"

void kernel_main() {
    const uint32_t out_addr = get_arg_val<uint32_t>(0);
    constexpr auto out_args = TensorAccessorArgs<0>();
    const auto out = TensorAccessor(out_args, out_addr);

    Noc noc;
    const uint32_t x = my_x[noc.get_noc_id()], y = my_y[noc.get_noc_id()];
    DataflowBuffer scratch(tt::CBIndex::c_0), page(tt::CBIndex::c_1);
    scratch.reserve_back(1);
    page.reserve_back(1);
    const uint32_t src = scratch.get_write_ptr(), dst = page.get_write_ptr();

    CoreLocalMem<uint32_t> pattern(src);
    for (uint32_t i = 0; i < 16; ++i) pattern[i] = 100 + i;
    // words 0..15: a unicast write of the pattern
    noc.async_write(pattern, UnicastEndpoint{}, 64, {}, {.noc_x = x, .noc_y = y, .addr = dst});
    // word 16: an inline write
    noc.inline_dw_write(UnicastEndpoint{}, 0xABCDu, {.noc_x = x, .noc_y = y, .addr = dst + 64});
    // words 32..47: a unicast read back of words 0..15 (stateful form)
    noc.set_async_read_state(UnicastEndpoint{}, 64, {.noc_x = x, .noc_y = y, .addr = dst});
    noc.async_read_with_state(UnicastEndpoint{}, experimental::CoreLocalMem<uint32_t>(dst + 128), 64,
                              {.noc_x = x, .noc_y = y, .addr = dst}, {});
    // words 48..63: a multicast to this core alone, sender included, from pattern word 8 on
    noc.async_write_multicast<NocOptions::MCAST_INCL_SRC>(
        pattern, MulticastEndpoint{}, 32, 1, {.offset_bytes = 32},
        {.noc_x_start = x, .noc_y_start = y, .noc_x_end = x, .noc_y_end = y, .addr = dst + 192});
    // words 17..31 and 56..63: all ones; then 24..31 zeroed in L1 (async_write_zeros on a buffer)
    CoreLocalMem<uint32_t> words(dst);
    for (uint32_t i = 17; i < 32; ++i) words[i] = 0xFFFFFFFFu;
    for (uint32_t i = 56; i < 64; ++i) words[i] = 0xFFFFFFFFu;
    noc.async_write_zeros(page, 32, {.offset_bytes = 96});
    noc.write_zeros_l1_barrier();
    noc.async_write_barrier();
    page.push_back(1);

    page.wait_front(1);
    noc.async_write(page, out, 256, {}, {.page_id = 0});
    noc.async_write_barrier();
    page.pop_front(1);

    // words 56..63 of the tensor page: zeroed from a zeroed scratch buffer
    noc.async_write_zeros(scratch, 64);
    noc.write_zeros_l1_barrier();
    noc.async_write_zeros(out, 32, {.page_id = 0, .offset_bytes = 224}, scratch);
    noc.write_zeros_dram_barrier();
}
