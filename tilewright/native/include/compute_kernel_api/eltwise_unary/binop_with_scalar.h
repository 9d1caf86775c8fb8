// compute_kernel_api/eltwise_unary/binop_with_scalar.h -- the older spelling of api/compute/eltwise_unary/binop_with_scalar.h.
#pragma once
#include "api/compute/eltwise_unary/binop_with_scalar.h"
