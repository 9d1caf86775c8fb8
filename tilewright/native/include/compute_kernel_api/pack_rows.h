// compute_kernel_api/pack_rows.h -- the older spelling of api/compute/pack_rows.h.
#pragma once
#include "api/compute/pack_rows.h"
