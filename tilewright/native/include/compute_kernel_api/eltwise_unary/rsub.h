// compute_kernel_api/eltwise_unary/rsub.h -- the older spelling of api/compute/eltwise_unary/rsub.h.
#pragma once
#include "api/compute/eltwise_unary/rsub.h"
