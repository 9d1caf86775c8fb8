// ttnn/cpp/ttnn/kernel_lib/eltwise_helpers.hpp -- the eltwise helper family in one include
// (tt-metal's aggregator): the chain, its SFPU elements, and the compute_kernel_lib::eltwise
// namespace some kernels use.
#pragma once

#include "ttnn/cpp/ttnn/kernel_lib/dest_helpers.hpp"
#include "ttnn/cpp/ttnn/kernel_lib/eltwise_chain.hpp"
