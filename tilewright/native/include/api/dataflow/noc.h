// api/dataflow/noc.h -- the Noc object of current tt-metal (api/dataflow/objects.h).
#pragma once
#include "api/dataflow/dataflow_api.h"
