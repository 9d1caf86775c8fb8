// A unary eltwise compute kernel in the eltwise_pipeline style: y = x * sigmoid(x) built
// from a fan-out chain -- c_0 is copied to DST 0 and DST 1 (one wait, one pop), DST 1 goes
// through Sigmoid, then MulBinary multiplies the two; the pipeline packs DST 0 into c_16.
// Compile-time arg 0: tiles per core.
#include <cstdint>

#include "ttnn/cpp/ttnn/kernel_lib/eltwise_helpers.hpp"

namespace NAMESPACE {
void MAIN {
    constexpr uint32_t num_tiles = get_compile_time_arg_val(0);
    constexpr auto cb_in = tt::CBIndex::c_0;
    constexpr auto cb_out = tt::CBIndex::c_16;
    namespace ckl = compute_kernel_lib;

    init_sfpu(cb_in, cb_out);
    ckl::eltwise_pipeline<cb_out>(
        num_tiles,
        ckl::eltwise_chain(ckl::CopyTile<cb_in, ckl::Dst::D0>{}, ckl::CopyTile<cb_in, ckl::Dst::D1>{},
                           ckl::Sigmoid<ckl::Approx::Exact, ckl::Dst::D1>{},
                           ckl::MulBinary<ckl::Dst::D0, ckl::Dst::D1, ckl::Dst::D0>{}));
}
}  // namespace NAMESPACE
