// compute_kernel_api/eltwise_unary/recip.h -- the older spelling of api/compute/eltwise_unary/recip.h.
#pragma once
#include "api/compute/eltwise_unary/recip.h"
