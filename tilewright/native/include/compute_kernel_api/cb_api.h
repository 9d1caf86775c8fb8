// compute_kernel_api/cb_api.h -- the older spelling of api/compute/cb_api.h.
#pragma once
#include "api/compute/cb_api.h"
