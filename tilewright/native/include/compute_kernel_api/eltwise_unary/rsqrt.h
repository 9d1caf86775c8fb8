// compute_kernel_api/eltwise_unary/rsqrt.h -- the older spelling of api/compute/eltwise_unary/rsqrt.h.
#pragma once
#include "api/compute/eltwise_unary/rsqrt.h"
