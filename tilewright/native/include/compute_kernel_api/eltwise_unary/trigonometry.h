// compute_kernel_api/eltwise_unary/trigonometry.h -- the older spelling of api/compute/eltwise_unary/trigonometry.h.
#pragma once
#include "api/compute/eltwise_unary/trigonometry.h"
