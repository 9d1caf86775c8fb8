// Add two integers on a RISC-V: read them from DRAM into L1, add them through plain L1
// pointers, write the sum back to DRAM.
#include <cstdint>

void kernel_main() {
    const uint32_t src0_dram = get_arg_val<uint32_t>(0);
    const uint32_t src1_dram = get_arg_val<uint32_t>(1);
    const uint32_t dst_dram = get_arg_val<uint32_t>(2);
    const uint32_t src0_l1 = get_arg_val<uint32_t>(3);
    const uint32_t src1_l1 = get_arg_val<uint32_t>(4);
    const uint32_t dst_l1 = get_arg_val<uint32_t>(5);

    noc_async_read(get_noc_addr_from_bank_id<true>(0, src0_dram), src0_l1, sizeof(uint32_t));
    noc_async_read(get_noc_addr_from_bank_id<true>(0, src1_dram), src1_l1, sizeof(uint32_t));
    noc_async_read_barrier();

    uint32_t* a = reinterpret_cast<uint32_t*>(src0_l1);
    uint32_t* b = reinterpret_cast<uint32_t*>(src1_l1);
    uint32_t* sum = reinterpret_cast<uint32_t*>(dst_l1);
    sum[0] = a[0] + b[0];
    DPRINT << "Adding integers: " << a[0] << " + " << b[0] << " = " << sum[0] << ENDL();

    noc_async_write(dst_l1, get_noc_addr_from_bank_id<true>(0, dst_dram), sizeof(uint32_t));
    noc_async_write_barrier();
}
