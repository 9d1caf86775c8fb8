// api/compute/eltwise_unary/clamp.h -- see sfpu.h.
#pragma once
#include "api/compute/eltwise_unary/sfpu.h"
