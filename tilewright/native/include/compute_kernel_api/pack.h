// compute_kernel_api/pack.h -- the older spelling of api/compute/pack.h.
#pragma once
#include "api/compute/pack.h"
