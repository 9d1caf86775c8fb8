// compute_kernel_api/eltwise_unary/where.h -- the older spelling of api/compute/eltwise_unary/where.h.
#pragma once
#include "api/compute/eltwise_unary/where.h"
