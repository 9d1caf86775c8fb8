// compute_kernel_api/eltwise_unary/selu.h -- the older spelling of api/compute/eltwise_unary/selu.h.
#pragma once
#include "api/compute/eltwise_unary/selu.h"
