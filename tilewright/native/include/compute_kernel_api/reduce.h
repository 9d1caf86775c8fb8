// compute_kernel_api/reduce.h -- the older spelling of api/compute/reduce.h.
#pragma once
#include "api/compute/reduce.h"
