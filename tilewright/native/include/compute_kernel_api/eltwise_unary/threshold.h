// compute_kernel_api/eltwise_unary/threshold.h -- the older spelling of api/compute/eltwise_unary/threshold.h.
#pragma once
#include "api/compute/eltwise_unary/threshold.h"
