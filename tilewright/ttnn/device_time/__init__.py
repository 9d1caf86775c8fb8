"""Device time of ttnn operations, each modelled as the tt-metal program it runs.

* :mod:`.ops` -- elementwise, reductions, softmax, data movement, views, and
  :func:`record` (an operation call -> the op report's record);
* :mod:`.matmul` -- ``ttnn.matmul`` / ``ttnn.linear``: the program tt-metal selects or the
  one the ``program_config`` names.
"""

from tilewright.ttnn.device_time.ops import MODELS, check_matmul_config, record, tensor_info

__all__ = ["record", "tensor_info", "check_matmul_config", "MODELS"]
