// compute_kernel_api/eltwise_unary/rounding.h -- the older spelling of api/compute/eltwise_unary/rounding.h.
#pragma once
#include "api/compute/eltwise_unary/rounding.h"
