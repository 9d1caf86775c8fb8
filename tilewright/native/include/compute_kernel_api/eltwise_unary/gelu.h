// compute_kernel_api/eltwise_unary/gelu.h -- the older spelling of api/compute/eltwise_unary/gelu.h.
#pragma once
#include "api/compute/eltwise_unary/gelu.h"
