// compute_kernel_api/eltwise_binary.h -- the older spelling of api/compute/eltwise_binary.h.
#pragma once
#include "api/compute/eltwise_binary.h"
