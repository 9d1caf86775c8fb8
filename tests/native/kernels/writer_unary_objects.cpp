// Writer of a unary op in the object API as ttnn's interleaved writer has it: compile-time
// arg 0 the CB, then the output's TensorAccessorArgs; a DataflowBuffer drained page by page.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/dataflow_buffer.h"
#include "api/dataflow/noc.h"
#include "api/tensor/noc_traits.h"

void kernel_main() {
    const uint32_t dst_addr = get_arg_val<uint32_t>(0);
    const uint32_t start = get_arg_val<uint32_t>(1);
    const uint32_t count = get_arg_val<uint32_t>(2);

    constexpr uint32_t cb_id = get_compile_time_arg_val(0);
    constexpr auto dst_args = TensorAccessorArgs<1>();
    const uint32_t page_bytes = get_local_cb_interface(cb_id).fifo_page_size;

    experimental::Noc noc;  // the older spelling
    DataflowBuffer dfb(cb_id);
    const auto dst = TensorAccessor(dst_args, dst_addr);
    for (uint32_t i = start; i < start + count; ++i) {
        dfb.wait_front(1);
        noc.async_write(dfb, dst, page_bytes, {}, {.page_id = i});
        noc.async_writes_flushed();
        dfb.pop_front(1);
    }
    noc.async_write_barrier();
}
