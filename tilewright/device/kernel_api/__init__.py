"""tt-metal's kernel API for Python kernels, by its C++ names.

``from tilewright.device.kernel_api import *`` gives a Python kernel the data-movement
API (``dataflow``; the stateful and transaction-id NoC forms in ``noc_state``), the address
generators (``accessor``) and the compute API
(``compute``: DST, unpack, pack, inits; ``fpu``: copy, binary ops, matmul, reduce,
transpose; ``sfpu``: the SFPU ops of the op registry's table; ``layout``: tilize,
untilize, pack_rows).  Each call acts on the kernel that is
running now.  The C++ kernel API (``tilewright/native/include``) has the same functions
with the same arguments and checks (``tests/native/test_api_parity.py``).
"""

from typing import TYPE_CHECKING, Any

from tilewright.device.kernel_api.accessor import *  # noqa: F401,F403
from tilewright.device.kernel_api.accessor import __all__ as _accessor_all
from tilewright.device.kernel_api.compute import *  # noqa: F401,F403
from tilewright.device.kernel_api.compute import __all__ as _compute_all
from tilewright.device.kernel_api.dataflow import *  # noqa: F401,F403
from tilewright.device.kernel_api.dataflow import __all__ as _dataflow_all
from tilewright.device.kernel_api.fpu import *  # noqa: F401,F403
from tilewright.device.kernel_api.fpu import __all__ as _fpu_all
from tilewright.device.kernel_api.layout import *  # noqa: F401,F403
from tilewright.device.kernel_api.layout import __all__ as _layout_all
from tilewright.device.kernel_api.noc_state import *  # noqa: F401,F403
from tilewright.device.kernel_api.noc_state import __all__ as _noc_state_all
from tilewright.device.kernel_api.sfpu import *  # noqa: F401,F403
from tilewright.device.kernel_api.sfpu import __all__ as _sfpu_all

if TYPE_CHECKING:
    from collections.abc import Callable

    def __getattr__(name: str) -> Callable[..., Any]:
        """The SFPU functions (``exp_tile``, ``add_binary_tile`` ...) are bound from the op
        registry's table at import (``sfpu.py``); type checkers see them here."""
        ...


__all__ = [
    *_dataflow_all,
    *_noc_state_all,
    *_accessor_all,
    *_compute_all,
    *_fpu_all,
    *_sfpu_all,
    *_layout_all,
]
