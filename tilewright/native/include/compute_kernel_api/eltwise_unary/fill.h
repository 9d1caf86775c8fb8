// compute_kernel_api/eltwise_unary/fill.h -- the older spelling of api/compute/eltwise_unary/fill.h.
#pragma once
#include "api/compute/eltwise_unary/fill.h"
