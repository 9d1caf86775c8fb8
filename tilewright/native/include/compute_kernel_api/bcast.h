// compute_kernel_api/bcast.h -- the older spelling of api/compute/bcast.h.
#pragma once
#include "api/compute/bcast.h"
