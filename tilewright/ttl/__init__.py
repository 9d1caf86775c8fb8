"""TT-Lang: the kernel language, on Tilewright's virtual device.

``import ttl`` under ``tilewright run`` (or ``from tilewright import ttl``).  This
package holds no semantics: each name forwards to the compiler (decoration and
setup) or to the running node's runtime (``tilewright.lang``).  Newest
spellings are primary; legacy ones (reference A.12) are aliases.

Start-up (issue 22): importing ``ttl`` loads the language runtime only.  The compiler
(``operation`` / ``kernel`` / ``Operation``, read through the module ``__getattr__``
below) loads at the first ``@ttl.operation``, and ``ttl.raw`` (the raw IR builder, the
kernel IR) at its first use; ``tests/test_startup.py`` checks what ``import ttl`` loads.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from tilewright.lang.copy import CopyTransferHandler, GroupTransfer, copy
from tilewright.lang.declare import (
    TILE_SHAPE,
    CircularBuffer,
    compute,
    datamovement,
    grid_size,
    make_circular_buffer_like,
    make_dataflow_buffer_like,
    make_dfb,
    node,
)
from tilewright.lang.dfb import DFB, DataflowBuffer, TensorBlock
from tilewright.lang.expr import BlockExpr
from tilewright.lang.extern.surface import (
    DFBAccess,
    DFBEffect,
    call_extern_func,
    dfb_descriptor,
    get_dfb_id,
    raw_addr,
    uint32,
)
from tilewright.lang.extern.types import DispatchCondition, ScalarType
from tilewright.lang.math import add, div, matmul, mul, sub
from tilewright.lang.misc import (
    raw_element_read,
    raw_element_write,
    read_index,
    signpost,
    static_range,
)
from tilewright.lang.pipes import (
    DstPipeIdentity,
    Pipe,
    PipeNet,
    ReadyReceive,
    ReceiveRequest,
    SrcPipeIdentity,
    wait_any,
)
from tilewright.lang.resets import (
    DFBAllocationGroup,
    DFBReconfiguration,
    DFBReset,
    make_dfb_allocation_group,
    reconfigure_dfbs,
    reset_all_dfbs,
    reset_dfbs,
)
from tilewright.lang.resources import (
    CoreRuntimeArgs,
    KernelDefine,
    KernelRuntimeResources,
    ProgramRuntimeResources,
)
from tilewright.lang.selectors import PIPE_SOURCE_KERNEL, Kernel, KernelKind
from tilewright.lang.semaphore import (
    MulticastRemoteSemaphore,
    Semaphore,
    UnicastRemoteSemaphore,
)
from tilewright.lang.types import (
    Count,
    DstT,
    Index,
    NaturalInt,
    NodeCoord,
    NodeRange,
    PositiveInt,
    Shape,
    Size,
)
from tilewright.lang.unsupported import Program
from tilewright.lang.unsupported import unsupported as _unsupported
from tilewright.lazy import lazy_import, loaded
from tilewright.ttl import block, math, utils

if TYPE_CHECKING:
    from tilewright.compiler.operation import Operation, operation
    from tilewright.ttl import raw

# The compiler loads at the first decoration, not on import (issue 22: start-up).
_compiler_operation = lazy_import("tilewright.compiler.operation")
# ttl.raw (the raw IR flavour's builder, on the kernel IR) loads at its first use.
_raw = lazy_import("tilewright.ttl.raw")

ttl = sys.modules[__name__]
"""``from ttl import ttl``: the package itself (programs written against the simulator)."""

__version__ = "0.20"
"""The TT-Lang spec version this implementation follows."""

# Spec names and implementation names.
Block = TensorBlock
Transfer = CopyTransferHandler

# Legacy spellings (reference A.12); ``kernel`` (of ``operation``) is in ``__getattr__``.
core = node

_FROM_COMPILER = {"operation": "operation", "kernel": "operation", "Operation": "Operation"}
"""Names read from ``tilewright.compiler.operation`` on first use (the compiler loads then)."""


def __getattr__(name: str) -> Any:
    if name == "raw":
        return loaded(_raw)  # importing it binds ttl.raw: later reads do not come here
    if name in _FROM_COMPILER:
        value = getattr(_compiler_operation, _FROM_COMPILER[name])
        globals()[name] = value  # later reads are plain module attributes
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


typecast = math.typecast


# Elementwise ops at the top level (ttl.exp, ttl.add, ...), as the generated API has them.
exp = math.exp
log = math.log
sqrt = math.sqrt
rsqrt = math.rsqrt
recip = math.recip
relu = math.relu
sigmoid = math.sigmoid
tanh = math.tanh
gelu = math.gelu
abs = math.abs  # noqa: A001
neg = math.neg
sign = math.sign
sin = math.sin
cos = math.cos
max = math.max  # noqa: A001
min = math.min  # noqa: A001
reduce_sum = math.reduce_sum
reduce_max = math.reduce_max
fill = block.fill
broadcast = block.broadcast
transpose = block.transpose


make_tensor_backed_dfb = _unsupported("make_tensor_backed_dfb")
copy_tensor_page = _unsupported("copy_tensor_page")
FabricManagerClaim = _unsupported("FabricManagerClaim")
FabricConnectionBinding = _unsupported("FabricConnectionBinding")
FabricConnectionRequirement = _unsupported("FabricConnectionRequirement")
DeviceDomain = _unsupported("DeviceDomain")
DeviceRange = _unsupported("DeviceRange")
DeviceRef = _unsupported("DeviceRef")
DomainComponent = _unsupported("DomainComponent")
TransferGraph = _unsupported("TransferGraph")
TransferEdge = _unsupported("TransferEdge")
AxisNeighborTransfer = _unsupported("AxisNeighborTransfer")
StencilTransfer = _unsupported("StencilTransfer")
GatherTransfer = _unsupported("GatherTransfer")
ScatterTransfer = _unsupported("ScatterTransfer")
AllToAllTransfer = _unsupported("AllToAllTransfer")
MeshProgramPlacement = _unsupported("MeshProgramPlacement")
SRAMStorage = _unsupported("SRAMStorage")


__all__ = [
    "operation",
    "kernel",
    "compute",
    "datamovement",
    "node",
    "core",
    "grid_size",
    "make_dataflow_buffer_like",
    "make_circular_buffer_like",
    "make_dfb",
    "DataflowBuffer",
    "CircularBuffer",
    "TILE_SHAPE",
    "PositiveInt",
    "NaturalInt",
    "Size",
    "Shape",
    "Index",
    "Count",
    "NodeCoord",
    "NodeRange",
    "DstT",
    "utils",
    "TensorBlock",
    "Block",
    "BlockExpr",
    "DFB",
    "copy",
    "CopyTransferHandler",
    "Transfer",
    "GroupTransfer",
    "math",
    "block",
    "raw",
    "matmul",
    "typecast",
    "signpost",
    "static_range",
    "raw_element_read",
    "raw_element_write",
    "read_index",
    "Kernel",
    "KernelKind",
    "PIPE_SOURCE_KERNEL",
    "Operation",
    "Program",
    "DFBReset",
    "DFBReconfiguration",
    "DFBAllocationGroup",
    "make_dfb_allocation_group",
    "reset_dfbs",
    "reset_all_dfbs",
    "reconfigure_dfbs",
    "call_extern_func",
    "dfb_descriptor",
    "get_dfb_id",
    "raw_addr",
    "uint32",
    "DFBEffect",
    "DFBAccess",
    "ScalarType",
    "DispatchCondition",
    "Pipe",
    "PipeNet",
    "SrcPipeIdentity",
    "DstPipeIdentity",
    "ReceiveRequest",
    "ReadyReceive",
    "wait_any",
    "ProgramRuntimeResources",
    "KernelRuntimeResources",
    "CoreRuntimeArgs",
    "KernelDefine",
    "Semaphore",
    "UnicastRemoteSemaphore",
    "MulticastRemoteSemaphore",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "recip",
    "relu",
    "sigmoid",
    "tanh",
    "gelu",
    "abs",
    "neg",
    "sign",
    "sin",
    "cos",
    "max",
    "min",
    "reduce_sum",
    "reduce_max",
    "fill",
    "broadcast",
    "transpose",
    "add",
    "sub",
    "mul",
    "div",
]
