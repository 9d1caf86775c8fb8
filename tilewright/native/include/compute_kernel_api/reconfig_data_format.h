// compute_kernel_api/reconfig_data_format.h -- the older spelling of api/compute/reconfig_data_format.h.
#pragma once
#include "api/compute/reconfig_data_format.h"
