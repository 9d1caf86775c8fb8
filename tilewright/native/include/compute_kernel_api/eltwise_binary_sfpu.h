// compute_kernel_api/eltwise_binary_sfpu.h -- the older spelling of api/compute/eltwise_binary_sfpu.h.
#pragma once
#include "api/compute/eltwise_binary_sfpu.h"
