"""``ttl.block``: block-shaping functions (spec §Block functions), from ``tilewright.lang.block``.

A façade: every public name of ``lang.block`` (its ``__all__``).
"""

from tilewright.lang.block import *  # noqa: F403 - the façade is lang.block's public names
from tilewright.lang.block import __all__  # noqa: F401
