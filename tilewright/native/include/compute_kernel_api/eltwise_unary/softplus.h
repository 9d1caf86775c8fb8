// compute_kernel_api/eltwise_unary/softplus.h -- the older spelling of api/compute/eltwise_unary/softplus.h.
#pragma once
#include "api/compute/eltwise_unary/softplus.h"
