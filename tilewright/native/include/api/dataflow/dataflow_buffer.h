// api/dataflow/dataflow_buffer.h -- `DataflowBuffer dfb(id); dfb.reserve_back(1); ...`: on
// Wormhole / Blackhole a circular buffer (tilewright/cb_object.h), in data-movement and
// compute kernels alike.
#pragma once

#include "tilewright/cb_object.h"

using experimental::CircularBuffer;
using experimental::DataflowBuffer;
