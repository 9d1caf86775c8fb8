// Loopback: copy a DRAM buffer through an L1 scratch buffer into another DRAM buffer, in
// chunks (one data-movement kernel, bank-addressed DRAM).
#include <cstdint>

void kernel_main() {
    const uint32_t l1_scratch = get_arg_val<uint32_t>(0);
    const uint32_t src_addr = get_arg_val<uint32_t>(1);
    const uint32_t dst_addr = get_arg_val<uint32_t>(2);
    const uint32_t num_bytes = get_arg_val<uint32_t>(3);
    const uint32_t chunk = get_arg_val<uint32_t>(4);

    for (uint32_t done = 0; done < num_bytes; done += chunk) {
        const uint32_t n = num_bytes - done < chunk ? num_bytes - done : chunk;
        noc_async_read(get_noc_addr_from_bank_id<true>(0, src_addr + done), l1_scratch, n);
        noc_async_read_barrier();
        noc_async_write(l1_scratch, get_noc_addr_from_bank_id<true>(0, dst_addr + done), n);
        noc_async_write_barrier();
    }
}
