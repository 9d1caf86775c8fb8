// compute_kernel_api/eltwise_unary/exp.h -- the older spelling of api/compute/eltwise_unary/exp.h.
#pragma once
#include "api/compute/eltwise_unary/exp.h"
