"""ttnn operations on the virtual device, and the registry that records them.

Every operation is a registered :class:`~.registry.Operation` (``ttnn.add`` ...) with a
torch golden function.  Operations compute on decoded tensor values -- float32
through the device op registry's numpy implementations where it has the operation,
int64 for integer tensors -- and store the result in the output dtype, layout and
placement, so results are rounded to the tensor's format on store.

Modules: ``registry`` (Operation, registration, goldens), ``io`` (operand checks,
reading, storing), ``eltwise_rules`` (the ttnn elementwise table: ttnn name -> device
op + golden), ``eltwise`` (unary, binary, where, clamp, isclose), ``matmul`` (matmul,
linear), ``reduction`` (sum, mean, max, min, softmax), ``data_movement`` (reshape,
squeeze, unsqueeze, repeat, transpose, permute, concat), ``methods`` (the Tensor
methods that are ttnn functions, one table).
"""

from tilewright.ttnn.operations import methods as _methods
from tilewright.ttnn.operations.data_movement import (
    concat,
    permute,
    repeat,
    reshape,
    squeeze,
    transpose,
    unsqueeze,
)
from tilewright.ttnn.operations.eltwise import (
    abs_ as abs,
)
from tilewright.ttnn.operations.eltwise import (
    add,
    ceil,
    clamp,
    cos,
    divide,
    eq,
    exp,
    floor,
    ge,
    gelu,
    gt,
    isclose,
    le,
    log,
    logical_and,
    logical_not,
    logical_or,
    lt,
    maximum,
    minimum,
    multiply,
    ne,
    neg,
    reciprocal,
    relu,
    relu6,
    rsqrt,
    sigmoid,
    sign,
    silu,
    sin,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    where,
)
from tilewright.ttnn.operations.matmul import linear, matmul
from tilewright.ttnn.operations.reduction import (
    max_ as max,
)
from tilewright.ttnn.operations.reduction import (
    mean,
    softmax,
)
from tilewright.ttnn.operations.reduction import (
    min_ as min,
)
from tilewright.ttnn.operations.reduction import (
    sum_ as sum,
)
from tilewright.ttnn.operations.registry import (
    REGISTERED_OPERATIONS,
    MissingGoldenError,
    Operation,
    RegistrationError,
    attach_golden_function,
    get_fallback_function,
    get_golden_function,
    query_registered_operations,
    register_python_operation,
)

_methods.install()

__all__ = [
    "REGISTERED_OPERATIONS",
    "MissingGoldenError",
    "Operation",
    "RegistrationError",
    "abs",
    "add",
    "attach_golden_function",
    "ceil",
    "clamp",
    "concat",
    "cos",
    "divide",
    "eq",
    "exp",
    "floor",
    "ge",
    "gelu",
    "get_fallback_function",
    "get_golden_function",
    "gt",
    "isclose",
    "le",
    "linear",
    "log",
    "logical_and",
    "logical_not",
    "logical_or",
    "lt",
    "matmul",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "multiply",
    "ne",
    "neg",
    "permute",
    "query_registered_operations",
    "reciprocal",
    "register_python_operation",
    "relu",
    "relu6",
    "repeat",
    "reshape",
    "rsqrt",
    "sigmoid",
    "sign",
    "silu",
    "sin",
    "softmax",
    "sqrt",
    "square",
    "squeeze",
    "subtract",
    "sum",
    "tan",
    "tanh",
    "transpose",
    "unsqueeze",
    "where",
]
