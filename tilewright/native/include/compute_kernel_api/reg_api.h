// compute_kernel_api/reg_api.h -- the older spelling of api/compute/reg_api.h.
#pragma once
#include "api/compute/reg_api.h"
