// ttnn/cpp/ttnn/kernel_lib/eltwise_misc.hpp -- a category header of tt-metal's eltwise family: every
// SFPU element of the op table is declared by the chain header (twrt_kernel_lib_ops.h).
#pragma once

#include "ttnn/cpp/ttnn/kernel_lib/eltwise_chain.hpp"
