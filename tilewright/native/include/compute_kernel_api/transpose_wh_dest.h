// compute_kernel_api/transpose_wh_dest.h -- the older spelling of api/compute/transpose_wh_dest.h.
#pragma once
#include "api/compute/transpose_wh_dest.h"
