// compute_kernel_api.h -- the older spelling of api/compute/compute_kernel_api.h.
#pragma once
#include "api/compute/compute_kernel_api.h"
