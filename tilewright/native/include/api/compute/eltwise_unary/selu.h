// api/compute/eltwise_unary/selu.h -- see sfpu.h.
#pragma once
#include "api/compute/eltwise_unary/sfpu.h"
