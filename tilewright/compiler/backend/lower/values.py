"""What a name in kernel code stands for at compile time, and the operation it lowers in.

Kernel functions are closures of the operation body, evaluated once per node.  The
lowering looks at every node's closure at once: a captured Python int, float or bool
that is equal on every node becomes a constant; an int that differs between nodes
(``node_id = ttl.node(dims=1)`` in the body) becomes a runtime argument of each core,
so one build serves every node; DFBs, tensors, semaphores and pipe nets become their
physical resources (CB index, tensor accessor, semaphore id, pipe routes).  Anything
else -- lists, dicts, user objects, functions of the user's -- is not compilable.

``Value`` subclasses are the lowering's static view of a Python value:

* :class:`Scalar` -- an int / float / bool, as an IR expression (a ``Const`` when static);
* :class:`Static` -- a compile-time Python object (modules, ttl functions, enums, strings);
* :class:`TupleV` -- a tuple of values (``ttl.node(dims=2)``, captured tuples);
* :class:`DFBRef`, :class:`TensorRef`, :class:`SliceRef` -- data;
* :class:`BlockRef`, :class:`HandleRef`, :class:`ExprRef` -- kernel-time objects (acquired
  blocks, transfer handles, block expressions), tracked by the lowering;
* :class:`FuncRef` -- a function defined inside the kernel (a pipe callback), inlined;
* :class:`HelperRef` -- a Python function of the operation body or a module (a helper
  computing tile coordinates, a generator of blocks), inlined (:mod:`.helpers`);
* :class:`SemRef`, :class:`RemoteSemRef`, :class:`NetRef`, :class:`PipeRef` -- sync objects.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tilewright.kir.ir import Const, Expr, Ty
from tilewright.lang.rules.registry import RUNTIME_INT

if TYPE_CHECKING:
    from tilewright.device.device import Device
    from tilewright.lang.node import NodeSetup
    from tilewright.ttnn.tensor import Tensor
    from tilewright.ttnn.types import DataType

__all__ = [
    "Value",
    "Scalar",
    "Static",
    "TupleV",
    "DFBInfo",
    "DFBRef",
    "TensorInfo",
    "TensorRef",
    "SliceRef",
    "BlockRef",
    "HandleRef",
    "ExprRef",
    "FuncRef",
    "HelperRef",
    "SemRef",
    "RemoteSemRef",
    "NetRef",
    "PipeRef",
    "MethodRef",
    "World",
]


class Value:
    """A Python value as the lowering sees it."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Scalar(Value):
    expr: Expr

    @property
    def static(self) -> bool:
        return isinstance(self.expr, Const)


@dataclass(frozen=True, slots=True, eq=False)
class Static(Value):
    obj: object

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Static) and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)


@dataclass(frozen=True, slots=True)
class TupleV(Value):
    items: tuple[Value, ...]


@dataclass(frozen=True, slots=True)
class DFBInfo:
    """A DFB of the operation (the same on every node): its physical circular buffer."""

    position: int  # declaration order
    name: str
    index: int
    shape: tuple[int, ...]
    block_count: int
    block_pages: int
    page_size: int
    data_format: str  # tt::DataFormat name
    tile: tuple[int, int]
    tiled: bool
    dtype: DataType
    address: int

    @property
    def block_bytes(self) -> int:
        return self.block_pages * self.page_size

    @property
    def num_pages(self) -> int:
        return self.block_pages * self.block_count


@dataclass(frozen=True, slots=True)
class DFBRef(Value):
    dfb: DFBInfo


@dataclass(frozen=True, slots=True, eq=False)
class TensorInfo:
    """An operation tensor argument."""

    param: str
    tensor: Tensor

    @property
    def pages(self) -> tuple[int, ...]:
        return tuple(self.tensor.page_grid())


@dataclass(frozen=True, slots=True)
class TensorRef(Value):
    tensor: TensorInfo


@dataclass(frozen=True, slots=True)
class SliceRef(Value):
    """``tensor[i0:j0, i1:j1, ...]`` with runtime bounds (page units); ``squeezed`` marks
    scalar indices."""

    tensor: TensorInfo
    starts: tuple[Expr, ...]
    stops: tuple[Expr, ...]
    squeezed: tuple[bool, ...]


@dataclass(frozen=True, slots=True)
class BlockRef(Value):
    site: int  # the acquisition (see blocks.BlockTracker)


@dataclass(frozen=True, slots=True)
class HandleRef(Value):
    handle: int


@dataclass(frozen=True, slots=True, eq=False)
class ExprRef(Value):
    node: object  # compute.Node

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExprRef) and other.node is self.node

    def __hash__(self) -> int:
        return id(self.node)


@dataclass(frozen=True, slots=True, eq=False)
class FuncRef(Value):
    node: ast.FunctionDef

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FuncRef) and other.node is self.node

    def __hash__(self) -> int:
        return id(self.node)


@dataclass(frozen=True, slots=True, eq=False)
class HelperRef(Value):
    """A Python function defined outside the kernel (in the operation body or a module):
    its source, the function object on every node (one code object; each node's own
    closure, which its free names resolve in) and its file."""

    node: ast.FunctionDef
    fns: tuple
    file: str

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, HelperRef)
            and other.node is self.node
            and len(other.fns) == len(self.fns)
            and all(a is b for a, b in zip(other.fns, self.fns))
        )

    def __hash__(self) -> int:
        return id(self.node)


@dataclass(frozen=True, slots=True)
class SemRef(Value):
    position: int  # index in the setups' semaphore lists
    sem_id: int
    address: int


@dataclass(frozen=True, slots=True)
class RemoteSemRef(Value):
    sem: SemRef
    lo: tuple[int, int]
    hi: tuple[int, int]
    multicast: bool


@dataclass(frozen=True, slots=True, eq=False)
class NetRef(Value):
    position: int
    net: object  # node (0, 0)'s PipeNet

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NetRef) and other.position == self.position

    def __hash__(self) -> int:
        return self.position


@dataclass(frozen=True, slots=True)
class PipeRef(Value):
    """One pipe record of a net, in a callback: this node is its ``role`` end."""

    net: int
    index: int
    role: str  # "src" | "dst"
    src: tuple[int, int]
    dst_lo: tuple[int, int]
    dst_hi: tuple[int, int]
    multicast: bool


@dataclass(frozen=True, slots=True)
class MethodRef(Value):
    """``value.name`` for a method of a kernel-time object (``blk.push``, ``dfb.reserve``)."""

    owner: Value
    name: str


@dataclass(slots=True)
class World:
    """The operation being compiled: its nodes, DFBs, tensors, semaphores and pipe nets."""

    name: str
    device: Device
    grid: tuple[int, int]
    setups: list[NodeSetup]  # one per node, row-major
    tensors: dict[int, TensorInfo] = field(default_factory=dict)  # id(tensor) -> info
    dfbs: list[DFBInfo] = field(default_factory=list)
    dfb_ids: dict[int, DFBInfo] = field(default_factory=dict)  # id(DFB object, any node)
    sems: dict[int, SemRef] = field(default_factory=dict)  # id(Semaphore, any node)
    nets: dict[int, NetRef] = field(default_factory=dict)  # id(PipeNet, any node)
    remote: dict[int, RemoteSemRef] = field(default_factory=dict)
    options: dict = field(default_factory=dict)

    @property
    def nodes(self) -> list[tuple[int, int]]:
        return [s.node for s in self.setups]


def describe_dfb(dfb) -> DFBInfo:
    """The DFBInfo of a node's DataflowBuffer (after the program builder placed it)."""
    return DFBInfo(
        position=0,
        name=dfb.name,
        index=int(dfb.index),
        shape=tuple(dfb.shape),
        block_count=int(dfb.block_count),
        block_pages=int(dfb.block_pages),
        page_size=int(dfb.page_size),
        data_format=dfb.data_format.name,
        tile=(dfb.tile.height, dfb.tile.width),
        tiled=bool(dfb.tiled),
        dtype=dfb.dtype,
        address=int(dfb.address or 0),
    )


def python_type_name(value: Value) -> str | None:
    """``type(x).__name__`` of the Python value ``value`` stands for, as the interpreter's
    messages name it (None: a kernel-time object the interpreter names otherwise)."""
    if isinstance(value, Scalar):
        return {Ty.BOOL: "bool", Ty.F64: "float", Ty.F32: "float"}.get(value.expr.ty, "int")
    if isinstance(value, Static):
        return type(value.obj).__name__
    names = {
        TupleV: "tuple",
        SliceRef: "TensorSlice",
        TensorRef: "Tensor",
        DFBRef: "DataflowBuffer",
    }
    return names.get(type(value))


def slice_text(sl: SliceRef) -> tuple[str, tuple[Expr, ...]]:
    """The interpreter's ``repr(TensorSlice)`` of ``sl``: the text, with a ``RUNTIME_INT``
    slot for each bound known only at run time, and those bounds in slot order."""
    parts, values = [], []

    def bound(e: Expr) -> str:
        if isinstance(e, Const):
            return str(e.value)
        values.append(e)
        return RUNTIME_INT

    for a, b, q in zip(sl.starts, sl.stops, sl.squeezed):
        parts.append(bound(a) if q else f"{bound(a)}:{bound(b)}")
    return f"TensorSlice[{', '.join(parts)}]", tuple(values)


def is_scalar_py(v: object) -> bool:
    return isinstance(v, (bool, int, float)) and not (isinstance(v, float) and math.isnan(v))


def py_const(v: bool | int | float) -> Const:
    if isinstance(v, bool):
        return Const(v, Ty.BOOL)
    if isinstance(v, int):
        if not -(1 << 63) <= v < 1 << 63:  # the lowering reports it at the expression
            raise OverflowError(
                f"the integer {v} does not fit in int64, the integer type of compiled kernels"
            )
        return Const(v, Ty.I64)
    return Const(float(v), Ty.F64)
