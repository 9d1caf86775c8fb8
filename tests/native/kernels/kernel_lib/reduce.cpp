// A reduction compute kernel written with compute_kernel_lib::reduce: REDUCE_OP / REDUCE_DIM
// are defines (as ttnn's reduce factories set them), c_0 the input tiles, c_2 the scaler
// tile, c_16 the output.  Compile-time args: Ht, Wt, NC.
#include <cstdint>

#include "ttnn/cpp/ttnn/kernel_lib/reduce_helpers_compute.hpp"

void kernel_main() {
    constexpr uint32_t Ht = get_compile_time_arg_val(0);
    constexpr uint32_t Wt = get_compile_time_arg_val(1);
    constexpr uint32_t NC = get_compile_time_arg_val(2);
    compute_kernel_hw_startup(tt::CBIndex::c_0, tt::CBIndex::c_2, tt::CBIndex::c_16);
    compute_kernel_lib::reduce<REDUCE_OP, REDUCE_DIM, tt::CBIndex::c_0, tt::CBIndex::c_2, tt::CBIndex::c_16,
                               compute_kernel_lib::ReduceInputPolicy::REDUCE_POLICY>(
        compute_kernel_lib::ReduceInputBlockShape::of(Ht, Wt, NC));
}
