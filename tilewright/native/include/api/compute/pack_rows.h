// api/compute/pack_rows.h -- see tilewright/compute_layout.h.
#pragma once
#include "api/compute/compute_kernel_api.h"
