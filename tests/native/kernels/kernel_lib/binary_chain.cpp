// A binary eltwise compute kernel in compute_kernel_lib's style: out = (a OP b) then the
// SFPU element CKL_POST (a define: "Relu<>", or "Abs<>"), c_0 op c_1 into c_16, with a
// Bulk output (reserved up front, pushed at the end).  CKL_BINARY names the BinaryFpuOp.
// Compile-time arg 0: tiles per core.
#include <cstdint>

#include "ttnn/cpp/ttnn/kernel_lib/eltwise_helpers.hpp"

void kernel_main() {
    constexpr uint32_t num_tiles = get_compile_time_arg_val(0);
    using namespace compute_kernel_lib;

    binary_op_init_common(tt::CBIndex::c_0, tt::CBIndex::c_1, tt::CBIndex::c_16);
    eltwise_chain(EltwiseShape::tiles(num_tiles),
                  BinaryFpu<tt::CBIndex::c_0, tt::CBIndex::c_1, BinaryFpuOp::CKL_BINARY>{},
                  CKL_POST{},
                  PackTile<tt::CBIndex::c_16, output(OutputLifecycle::Bulk)>{});
}
