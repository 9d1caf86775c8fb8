// compute_kernel_api/pack_untilize.h -- the older spelling of api/compute/pack_untilize.h.
#pragma once
#include "api/compute/pack_untilize.h"
