// api/compute/eltwise_unary/binop_with_scalar.h -- part of the emulated compute kernel API (see sfpu.h).
#pragma once
#include "api/compute/compute_kernel_api.h"
