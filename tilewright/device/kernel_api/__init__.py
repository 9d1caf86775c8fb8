"""tt-metal's kernel API for Python kernels, by its C++ names.

``from tilewright.device.kernel_api import *`` gives a Python kernel the data-movement
API (``dataflow``), the address generators (``accessor``) and the compute API
(``compute``).  Each call acts on the kernel that is running now.
"""

from tilewright.device.kernel_api.accessor import *  # noqa: F401,F403
from tilewright.device.kernel_api.accessor import __all__ as _accessor_all
from tilewright.device.kernel_api.compute import *  # noqa: F401,F403
from tilewright.device.kernel_api.compute import __all__ as _compute_all
from tilewright.device.kernel_api.dataflow import *  # noqa: F401,F403
from tilewright.device.kernel_api.dataflow import __all__ as _dataflow_all

__all__ = [*_dataflow_all, *_accessor_all, *_compute_all]
