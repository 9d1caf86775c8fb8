// compute_kernel_api/matmul.h -- the older spelling of api/compute/matmul.h.
#pragma once
#include "api/compute/matmul.h"
