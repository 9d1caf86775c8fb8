// api/dataflow/endpoints.h -- UnicastEndpoint, MulticastEndpoint, AllocatorBank (api/dataflow/objects.h).
#pragma once
#include "api/dataflow/dataflow_api.h"
