// compute_kernel_api/tile_move_copy.h -- the older spelling of api/compute/tile_move_copy.h.
#pragma once
#include "api/compute/tile_move_copy.h"
