// compute_kernel_api/eltwise_unary/sigmoid.h -- the older spelling of api/compute/eltwise_unary/sigmoid.h.
#pragma once
#include "api/compute/eltwise_unary/sigmoid.h"
