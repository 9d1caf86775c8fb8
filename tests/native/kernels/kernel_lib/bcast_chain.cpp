// compute_kernel_lib's broadcast form of BinaryFpu: out = a + bcast(b), b one tile held for
// the whole walk (HeldBulk, Scalar: waited for once, never popped), broadcast along
// BroadcastDim::CKL_BCAST (Row: b's first row to every row; Col: its first column to every
// column; Scalar: b[0][0] everywhere).  Compile-time arg 0: tiles per core.
#include <cstdint>

#include "ttnn/cpp/ttnn/kernel_lib/eltwise_helpers.hpp"

void kernel_main() {
    constexpr uint32_t num_tiles = get_compile_time_arg_val(0);
    using namespace compute_kernel_lib;

    binary_op_init_common(tt::CBIndex::c_0, tt::CBIndex::c_1, tt::CBIndex::c_16);
    eltwise_chain(EltwiseShape::tiles(num_tiles),
                  BinaryFpu<tt::CBIndex::c_0, tt::CBIndex::c_1, BinaryFpuOp::Add, BroadcastDim::CKL_BCAST,
                            input(InputLifecycle::Streaming), input(InputLifecycle::HeldBulk, OperandKind::Scalar)>{},
                  PackTile<tt::CBIndex::c_16>{});
}
