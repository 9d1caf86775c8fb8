// api/compute/eltwise_unary/erf_erfc.h -- see sfpu.h.
#pragma once
#include "api/compute/eltwise_unary/sfpu.h"
