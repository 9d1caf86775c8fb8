// experimental/endpoints.h -- see api/dataflow/objects.h.
#pragma once
#include "api/dataflow/dataflow_api.h"
