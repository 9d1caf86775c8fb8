// compute_kernel_api/eltwise_unary/activations.h -- the older spelling of api/compute/eltwise_unary/activations.h.
#pragma once
#include "api/compute/eltwise_unary/activations.h"
