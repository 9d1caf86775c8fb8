// api/compute/eltwise_unary/hardtanh.h -- see sfpu.h.
#pragma once
#include "api/compute/eltwise_unary/sfpu.h"
