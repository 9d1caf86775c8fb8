// experimental/circular_buffer.h -- see tilewright/cb_object.h.
#pragma once
#include "tilewright/cb_object.h"
