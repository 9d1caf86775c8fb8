// compute_kernel_api/eltwise_unary/sfpu_split_includes.h -- the older spelling of api/compute/eltwise_unary/sfpu_split_includes.h.
#pragma once
#include "api/compute/eltwise_unary/sfpu_split_includes.h"
