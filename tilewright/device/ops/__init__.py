"""Block math for the virtual device: the op registry every layer reads.

One table (``REGISTRY``) of :class:`OpSpec` entries describes every TT-Lang block
operation -- ``ttl.math.*``, ``ttl.block.*`` and the Python operators on block
expressions -- with its numpy implementation, parameters, formats, torch golden and
compiler support.  The block-expression engine evaluates ``spec.impl``; ``ttl.math``
and ``ttl.block`` bind their names from it; the compiler reads its metadata (every op
is placed on the COMPUTE kernel); ttnn uses its goldens.

Value convention: a *block value* is a float32 numpy array whose last two axes are the
block's logical elements.  A block of shape ``(..., R, C)`` tiles with tile ``(th, tw)``
(default 32x32) is an array of shape ``(..., R*th, C*tw)``; tile ``(i, j)`` occupies rows
``[i*th, (i+1)*th)`` and columns ``[j*tw, (j+1)*tw)``; leading axes are batch (tile-grid)
dims.  Implementations are vectorised over whole blocks, compute in float32 and return
new float32 arrays; rounding to the destination format happens on store, elsewhere.
Integer-valued results (comparisons, sign, floor ...) stay float32.

Modules: ``spec`` (data model), ``registry`` (the table and lookups), ``params``
(argument binding), ``shapes`` (shape rules, tile views), ``elementwise`` and ``tiled``
(implementations), ``special`` (erf), ``goldens`` (torch references), ``legacy``
(old spellings), ``op_errors``.
"""

from .legacy import LEGACY_ALIASES, LegacyAlias
from .op_errors import OpError, OpFormatError, OpParamError, OpShapeError, UnknownOpError
from .params import bind_params, check_formats
from .registry import REGISTRY, get_op, ops_in, resolve, result_shape
from .spec import OpKind, OpSpec, Param, ParamKind

__all__ = [
    "LEGACY_ALIASES",
    "REGISTRY",
    "LegacyAlias",
    "OpError",
    "OpFormatError",
    "OpKind",
    "OpParamError",
    "OpShapeError",
    "OpSpec",
    "Param",
    "ParamKind",
    "UnknownOpError",
    "bind_params",
    "check_formats",
    "get_op",
    "ops_in",
    "resolve",
    "result_shape",
]
