// api/compute/binary_max_min.h -- binary_max_tile / binary_min_tile (see eltwise_binary_sfpu.h).
#pragma once
#include "api/compute/eltwise_binary_sfpu.h"
