// compute_kernel_api/eltwise_unary/elu.h -- the older spelling of api/compute/eltwise_unary/elu.h.
#pragma once
#include "api/compute/eltwise_unary/elu.h"
