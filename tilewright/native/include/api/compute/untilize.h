// api/compute/untilize.h -- part of the emulated compute kernel API (see tilewright/compute_layout.h).
#pragma once
#include "api/compute/compute_kernel_api.h"
