// compute_kernel_api/eltwise_unary/relu.h -- the older spelling of api/compute/eltwise_unary/relu.h.
#pragma once
#include "api/compute/eltwise_unary/relu.h"
