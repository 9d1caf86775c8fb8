// api/compute/eltwise_binary_sfpu.h -- SFPU binary ops on two DST tiles (add/sub/mul/div),
// and api/compute/binary_max_min.h's binary_max_tile / binary_min_tile: odst = op(DST[idst0],
// DST[idst1]) elementwise in DST's precision.  Run by the native runtime (twrt_sfpu_binary);
// declared with the other SFPU ops (twrt_sfpu_api.h, generated from device/ops/tile_ops.py).
#pragma once

#include "api/compute/compute_kernel_api.h"
