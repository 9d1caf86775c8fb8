"""``ttl.math``: math functions on blocks (spec Appendix B), from ``tilewright.lang.math``.

A façade: every public name of ``lang.math`` (its ``__all__``), each bound there from
the op registry (``tilewright.device.ops``), which holds the numerics, parameters and
shape rules.
"""

from tilewright.lang.math import *  # noqa: F403 - the façade is lang.math's public names
from tilewright.lang.math import __all__  # noqa: F401
