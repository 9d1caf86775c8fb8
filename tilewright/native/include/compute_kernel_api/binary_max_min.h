// compute_kernel_api/binary_max_min.h -- the older spelling of api/compute/binary_max_min.h.
#pragma once
#include "api/compute/binary_max_min.h"
