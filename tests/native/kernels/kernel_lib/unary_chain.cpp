// A unary eltwise compute kernel in compute_kernel_lib's current style: one eltwise_chain
// call streams c_0 through the SFPU element CKL_OP (a define, e.g. "Exp<>") into c_16.
// Compile-time arg 0: tiles per core.
#include <cstdint>

#include "ttnn/cpp/ttnn/kernel_lib/eltwise_helpers.hpp"

void kernel_main() {
    constexpr uint32_t num_tiles = get_compile_time_arg_val(0);
    constexpr uint32_t cb_in = tt::CBIndex::c_0;
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    using namespace compute_kernel_lib;

    compute_kernel_hw_startup(cb_in, cb_out);
    eltwise_chain(EltwiseShape::tiles(num_tiles),
                  CopyTile<cb_in, Dst::D0, input(InputLifecycle::Streaming)>{},
                  CKL_OP{},
                  PackTile<cb_out, output(OutputLifecycle::Streaming)>{});
}
