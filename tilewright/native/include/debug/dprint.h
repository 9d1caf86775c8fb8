// debug/dprint.h -- the older spelling of api/debug/dprint.h.
#pragma once
#include "api/debug/dprint.h"
