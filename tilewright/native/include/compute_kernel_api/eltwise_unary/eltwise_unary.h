// compute_kernel_api/eltwise_unary/eltwise_unary.h -- the older spelling of api/compute/eltwise_unary/eltwise_unary.h.
#pragma once
#include "api/compute/eltwise_unary/eltwise_unary.h"
