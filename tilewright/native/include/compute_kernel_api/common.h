// compute_kernel_api/common.h -- the older spelling of api/compute/common.h.
#pragma once
#include "api/compute/common.h"
