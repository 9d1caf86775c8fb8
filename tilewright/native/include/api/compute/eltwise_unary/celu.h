// api/compute/eltwise_unary/celu.h -- see sfpu.h.
#pragma once
#include "api/compute/eltwise_unary/sfpu.h"
