// compute_kernel_api/transpose_wh.h -- the older spelling of api/compute/transpose_wh.h.
#pragma once
#include "api/compute/transpose_wh.h"
