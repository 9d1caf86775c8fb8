// compute_kernel_api/eltwise_unary/hardsigmoid.h -- the older spelling of api/compute/eltwise_unary/hardsigmoid.h.
#pragma once
#include "api/compute/eltwise_unary/hardsigmoid.h"
