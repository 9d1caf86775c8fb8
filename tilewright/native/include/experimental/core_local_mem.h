// experimental/core_local_mem.h -- CoreLocalMem<T> (api/core_local_mem.h).
#pragma once
#include "api/core_local_mem.h"
namespace experimental {
using ::CoreLocalMem;
}
