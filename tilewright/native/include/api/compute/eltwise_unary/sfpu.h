// api/compute/eltwise_unary/sfpu.h -- the SFPU ops (in place on DST), run by the native runtime
// (twrt_sfpu, twrt_sfpu_binary).  The functions are generated from the op registry's SFPU table
// (tilewright/device/ops/tile_ops.py) into twrt_sfpu_api.h, as the Python kernel API binds them.
//
// Each op NAME has NAME_tile_init<flags...>() and NAME_tile<flags...>(idst, ...); template
// flags (approximation modes) are accepted.  Parameters are passed as tt-metal passes them:
// a float as its IEEE-754 bits in a uint32_t (std::bit_cast<uint32_t>(0.1f)), an integer as
// itself (power_iterative_tile's exponent, round_tile's decimals); a one-parameter function's
// parameter defaults to 0.  The SFPU binary ops (add_binary_tile ... binary_max/min_tile) are
// there too.  SFPU_OP_CHAIN_0 and the SFPU_OP_*_INCLUDE defines that ttnn generates work
// unchanged (eltwise_unary/eltwise_unary.h).
#pragma once

#include "api/compute/compute_kernel_api.h"
#include "twrt_sfpu_api.h"

