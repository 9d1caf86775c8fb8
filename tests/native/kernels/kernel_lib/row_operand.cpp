// compute_kernel_lib over a tile grid: out[r][c] = a[r][c] + b[c] (b's row of Wt tiles is
// waited for once, read per column -- OperandKind::Row -- and popped at the end), the
// tile-level row reuse of a bias add.  Compile-time args: Ht, Wt.
#include <cstdint>

#include "ttnn/cpp/ttnn/kernel_lib/eltwise_helpers.hpp"

void kernel_main() {
    constexpr uint32_t Ht = get_compile_time_arg_val(0);
    constexpr uint32_t Wt = get_compile_time_arg_val(1);
    using namespace compute_kernel_lib;

    binary_op_init_common(tt::CBIndex::c_0, tt::CBIndex::c_1, tt::CBIndex::c_16);
    eltwise_chain(EltwiseShape::grid(Ht, Wt),
                  BinaryFpu<tt::CBIndex::c_0, tt::CBIndex::c_1, BinaryFpuOp::Add, BroadcastDim::None,
                            input(InputLifecycle::Streaming), input(InputLifecycle::Bulk, OperandKind::Row)>{},
                  PackTile<tt::CBIndex::c_16>{});
}
