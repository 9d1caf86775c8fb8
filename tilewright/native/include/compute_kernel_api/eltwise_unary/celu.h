// compute_kernel_api/eltwise_unary/celu.h -- the older spelling of api/compute/eltwise_unary/celu.h.
#pragma once
#include "api/compute/eltwise_unary/celu.h"
