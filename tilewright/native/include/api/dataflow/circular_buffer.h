// api/dataflow/circular_buffer.h -- tt-metal's object-style circular buffer under its plain
// name: `CircularBuffer cb(id); cb.reserve_back(1); cb.get_write_ptr(); cb.push_back(1);`
// (the class is experimental::CircularBuffer, tilewright/cb_object.h).
#pragma once

#include "tilewright/cb_object.h"

using experimental::CircularBuffer;
using experimental::DataflowBuffer;
