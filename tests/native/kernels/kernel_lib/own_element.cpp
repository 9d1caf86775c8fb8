// A chain element of the kernel's own, as ttnn's unary kernels inject the host's op chain:
// OpChain runs the SFPU_OP_CHAIN_0 define on DST 0 (a UnaryOp, tt-metal's CRTP base).
// Compile-time arg 0: tiles per core.
#include <cstdint>

#include "ttnn/cpp/ttnn/kernel_lib/eltwise_helpers.hpp"

using namespace compute_kernel_lib;

struct OpChain : UnaryOp<OpChain, Dst::D0> {
    ALWI void init() const {}
    ALWI void call(uint32_t) const { SFPU_OP_CHAIN_0 }
};

void kernel_main() {
    constexpr uint32_t num_tiles = get_compile_time_arg_val(0);
    init_sfpu(tt::CBIndex::c_0, tt::CBIndex::c_16);
    eltwise_chain(EltwiseShape::tiles(num_tiles), CopyTile<tt::CBIndex::c_0>{}, OpChain{},
                  PackTile<tt::CBIndex::c_16>{});
}
