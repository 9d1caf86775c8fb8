// api/compute/eltwise_unary/eltwise_unary.h -- part of the emulated compute kernel API (see sfpu.h).
#pragma once
#include "api/compute/compute_kernel_api.h"
