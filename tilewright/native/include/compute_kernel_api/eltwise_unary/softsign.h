// compute_kernel_api/eltwise_unary/softsign.h -- the older spelling of api/compute/eltwise_unary/softsign.h.
#pragma once
#include "api/compute/eltwise_unary/softsign.h"
