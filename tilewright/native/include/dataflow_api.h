// dataflow_api.h -- the older spelling of api/dataflow/dataflow_api.h.
#pragma once
#include "api/dataflow/dataflow_api.h"
