// compute_kernel_api/eltwise_unary/negative.h -- the older spelling of api/compute/eltwise_unary/negative.h.
#pragma once
#include "api/compute/eltwise_unary/negative.h"
