// compute_kernel_api/tilize.h -- the older spelling of api/compute/tilize.h.
#pragma once
#include "api/compute/tilize.h"
