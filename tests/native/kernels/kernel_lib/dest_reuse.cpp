// compute_kernel_lib's DestReuseBinary: DST 0 = a (CopyTile), then DST 0 = DST 0 - b with
// the DST tile as SrcA (DEST_TO_SRCA: a - b) or as SrcB (DEST_TO_SRCB: b - a), chosen by
// the CKL_REUSE define.  Compile-time arg 0: tiles per core.
#include <cstdint>

#include "ttnn/cpp/ttnn/kernel_lib/eltwise_helpers.hpp"

void kernel_main() {
    constexpr uint32_t num_tiles = get_compile_time_arg_val(0);
    using namespace compute_kernel_lib;

    binary_op_init_common(tt::CBIndex::c_0, tt::CBIndex::c_1, tt::CBIndex::c_16);
    eltwise_chain(EltwiseShape::tiles(num_tiles), CopyTile<tt::CBIndex::c_0>{},
                  DestReuseBinary<tt::CBIndex::c_1, BinaryFpuOp::Sub, DestReuseType::CKL_REUSE>{},
                  PackTile<tt::CBIndex::c_16>{});
}
