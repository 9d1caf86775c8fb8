// compute_kernel_api/eltwise_unary/log1p.h -- the older spelling of api/compute/eltwise_unary/log1p.h.
#pragma once
#include "api/compute/eltwise_unary/log1p.h"
