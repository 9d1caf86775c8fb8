// compute_kernel_api/eltwise_unary/sqrt.h -- the older spelling of api/compute/eltwise_unary/sqrt.h.
#pragma once
#include "api/compute/eltwise_unary/sqrt.h"
