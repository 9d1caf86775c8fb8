// api/compute/reconfig_data_format.h -- part of the emulated compute kernel API (see compute_kernel_api.h).
#pragma once
#include "api/compute/compute_kernel_api.h"
