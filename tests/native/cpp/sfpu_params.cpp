// sfpu_params.cpp -- SFPU ops with parameters (float parameters as IEEE-754 bits, as
// tt-metal's host code passes them) and the newer parameterless ops, two DST rounds of 8.
#include <bit>
#include <cstdint>

#include "api/compute/eltwise_unary/activations.h"
#include "api/compute/eltwise_unary/binop_with_scalar.h"
#include "api/compute/eltwise_unary/elu.h"
#include "api/compute/eltwise_unary/eltwise_unary.h"
#include "api/compute/eltwise_unary/relu.h"
#include "api/compute/eltwise_unary/rounding.h"
#include "api/compute/eltwise_unary/rsub.h"
#include "api/compute/eltwise_unary/softplus.h"
#include "api/compute/eltwise_unary/trigonometry.h"
#include "api/compute/tile_move_copy.h"
#include "compute_kernel_api.h"

namespace {
constexpr uint32_t bits(float v) { return std::bit_cast<uint32_t>(v); }

void round_one(uint32_t first) {
    constexpr auto cb_in = tt::CBIndex::c_0;
    tile_regs_acquire();
    copy_tile_init(cb_in);
    for (uint32_t i = 0; i < 8; ++i) copy_tile(cb_in, 0, i);
    if (first) {
        leaky_relu_tile_init();
        leaky_relu_tile(0, bits(0.1f));
        elu_tile_init();
        elu_tile(1, bits(0.5f));
        relu_max_tile_init();
        relu_max_tile(2, bits(1.5f));
        relu_min_tile_init();
        relu_min_tile(3, bits(-0.5f));
        power_tile_init();
        power_tile(4, bits(2.5f));
        power_iterative_tile_init();
        power_iterative_tile(5, 3);
        rsub_tile_init();
        rsub_tile(6, bits(2.0f));
        softplus_tile_init();
        softplus_tile(7, bits(2.0f), bits(0.5f), bits(20.0f));
    } else {
        binop_with_scalar_tile_init();
        add_unary_tile(0, bits(0.75f));
        mul_unary_tile(1, bits(-3.0f));
        rounding_op_tile_init();
        round_tile(2, 1);
        trunc_tile(3);
        frac_tile(4);
        hardsigmoid_tile_init();
        hardsigmoid_tile(5);
        atan_tile_init();
        atan_tile(6);
        signbit_tile_init();
        signbit_tile(7);
    }
    tile_regs_commit();
    tile_regs_wait();
    pack_tile_block(0, tt::CBIndex::c_16, 8);
    tile_regs_release();
}
}  // namespace

namespace NAMESPACE {
void MAIN {
    init_sfpu(tt::CBIndex::c_0, tt::CBIndex::c_16);
    cb_wait_front(tt::CBIndex::c_0, 1);
    cb_reserve_back(tt::CBIndex::c_16, 16);
    round_one(1);
    round_one(0);
    cb_push_back(tt::CBIndex::c_16, 16);
    cb_pop_front(tt::CBIndex::c_0, 1);
}
}  // namespace NAMESPACE
