// compute_kernel_api/untilize.h -- the older spelling of api/compute/untilize.h.
#pragma once
#include "api/compute/untilize.h"
