// compute_kernel_api/eltwise_unary/clamp.h -- the older spelling of api/compute/eltwise_unary/clamp.h.
#pragma once
#include "api/compute/eltwise_unary/clamp.h"
