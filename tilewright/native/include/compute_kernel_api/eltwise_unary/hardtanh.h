// compute_kernel_api/eltwise_unary/hardtanh.h -- the older spelling of api/compute/eltwise_unary/hardtanh.h.
#pragma once
#include "api/compute/eltwise_unary/hardtanh.h"
