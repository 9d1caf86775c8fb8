// api/compute/eltwise_unary/rsub.h -- part of the emulated compute kernel API (see sfpu.h).
#pragma once
#include "api/compute/compute_kernel_api.h"
