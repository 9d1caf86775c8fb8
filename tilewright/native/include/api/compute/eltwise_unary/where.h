// api/compute/eltwise_unary/where.h -- where_tile(idst0, idst1, idst2, odst): DST[odst] =
// DST[idst1] where DST[idst0] is non-zero, else DST[idst2].  Run by the native runtime
// (twrt_where_tile); declared with the other SFPU ops (twrt_sfpu_api.h, generated from
// device/ops/tile_ops.py).
#pragma once

#include "api/compute/compute_kernel_api.h"
