// compute_kernel_api/eltwise_unary/prelu.h -- the older spelling of api/compute/eltwise_unary/prelu.h.
#pragma once
#include "api/compute/eltwise_unary/prelu.h"
