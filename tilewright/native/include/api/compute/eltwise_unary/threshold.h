// api/compute/eltwise_unary/threshold.h -- see sfpu.h.
#pragma once
#include "api/compute/eltwise_unary/sfpu.h"
