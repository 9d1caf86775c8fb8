// compute_kernel_api/eltwise_unary/erf_erfc.h -- the older spelling of api/compute/eltwise_unary/erf_erfc.h.
#pragma once
#include "api/compute/eltwise_unary/erf_erfc.h"
