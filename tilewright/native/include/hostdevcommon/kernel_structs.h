// hostdevcommon/kernel_structs.h -- tt::CBIndex and friends.
#pragma once
#include "tilewright/common.h"
