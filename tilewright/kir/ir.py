"""The kernel IR: one logical kernel at the tt-metal kernel-API level, as plain data.

A :class:`Kernel` is what one processor of a node runs: its circular buffers, tensor
accessors, runtime-argument names, locals and a body of :class:`Op` statements.  An op
is ``Op(code, args, regions, loc)``: ``code`` names a kernel-API call or a piece of
structured control flow (``for``, ``if``, ``while``), ``args`` are its operands --
scalar expressions (:data:`Expr`), static ints, floats and strings -- in the order
the op table (:mod:`.optable`) gives, and ``regions`` are nested op sequences (a
loop body, the two branches of an ``if``).  Everything is a frozen, slotted
dataclass: the IR is hashable (the build cache keys on it), printable
(:mod:`.printer`), checkable (:mod:`.verify`) and renders to C++ (:mod:`.emit`)
through the same table.  :class:`Builder` constructs it from Python (the lowering,
and raw IR functions built by hand); :mod:`.effects` computes a kernel's DFB
protocol actions from it.

Scalar semantics are Python's with C++'s fixed widths (:mod:`.scalar`, the one table):
integers are ``i64`` (C++ ``int64_t``) and wrap, ``//`` and ``%`` floor (emitted through
helpers), floats are ``f64``.  Addresses and tile indices handed to the kernel API are
``u32``; NoC addresses ``u64``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeAlias

from tilewright.errors import SourceLoc

__all__ = [
    "Ty",
    "ContractNote",
    "Const",
    "Var",
    "Arg",
    "BinOp",
    "UnOp",
    "Intrinsic",
    "Cast",
    "Expr",
    "Op",
    "Region",
    "CBDecl",
    "AccessorDecl",
    "Kernel",
    "Function",
    "WaitNote",
    "SemNote",
    "KIND_COMPUTE",
    "KIND_DM",
    "const",
    "u32",
    "i64",
    "expr_vars",
    "seq",
]

KIND_COMPUTE = "compute"
KIND_DM = "data_movement"


class Ty(StrEnum):
    """Scalar types of the IR (C++: int64_t, uint32_t, uint64_t, double, float, bool)."""

    I64 = "i64"
    U32 = "u32"
    U64 = "u64"
    F64 = "f64"
    F32 = "f32"
    BOOL = "bool"

    @property
    def is_int(self) -> bool:
        return self in (Ty.I64, Ty.U32, Ty.U64)

    @property
    def is_float(self) -> bool:
        return self in (Ty.F64, Ty.F32)


@dataclass(frozen=True, slots=True)
class Const:
    """A literal."""

    value: int | float | bool
    ty: Ty


@dataclass(frozen=True, slots=True)
class Var:
    """A local variable of the kernel (declared in ``Kernel.locals``)."""

    name: str
    ty: Ty


@dataclass(frozen=True, slots=True)
class Arg:
    """Runtime argument ``index`` of the running core (``get_arg_val<uint32_t>(index)``),
    read as ``ty``; ``name`` says what it is (the host description lists the values)."""

    index: int
    name: str
    ty: Ty = Ty.U32


@dataclass(frozen=True, slots=True)
class BinOp:
    """``a <op> b`` (an operator of :data:`.scalar.OPERATORS`: ``floordiv``/``mod`` floor,
    ``truediv`` is float, integers wrap)."""

    op: str
    a: Expr
    b: Expr
    ty: Ty


@dataclass(frozen=True, slots=True)
class UnOp:
    """``neg`` or ``not`` (:data:`.scalar.OPERATORS`)."""

    op: str
    a: Expr
    ty: Ty


@dataclass(frozen=True, slots=True)
class Intrinsic:
    """A kernel-API query returning a value (``logical_x``, ``write_ptr`` ...: see
    :data:`.scalar.INTRINSICS`)."""

    name: str
    args: tuple[Expr, ...]
    ty: Ty


@dataclass(frozen=True, slots=True)
class Cast:
    """``static_cast<ty>(a)``."""

    a: Expr
    ty: Ty


Expr: TypeAlias = Const | Var | Arg | BinOp | UnOp | Intrinsic | Cast
"""A scalar expression."""

Region: TypeAlias = "tuple[Op, ...]"


@dataclass(frozen=True, slots=True)
class Op:
    """One statement: a kernel-API call or structured control flow (see ``optable.OPS``)."""

    code: str
    args: tuple[object, ...] = ()
    regions: tuple[tuple[Op, ...], ...] = ()
    loc: SourceLoc | None = None


@dataclass(frozen=True, slots=True)
class CBDecl:
    """A circular buffer the kernel uses: a DFB (``role="dfb"``) or compiler scratch."""

    index: int
    name: str
    data_format: str  # tt::DataFormat member name ("Float16_b", "Float32", ...)
    page_size: int
    num_pages: int
    block_pages: int
    tile: tuple[int, int] = (32, 32)
    role: str = "dfb"


@dataclass(frozen=True, slots=True)
class AccessorDecl:
    """A tensor accessor: ``TensorAccessor(TensorAccessorArgs<cta>(), addr, page_size)``."""

    name: str  # C++ identifier
    tensor: str  # the operation parameter
    cta: int  # offset of its words in the compile-time args
    words: tuple[int, ...]  # its TensorAccessorArgs compile-time words
    addr_arg: int  # runtime argument holding the buffer address
    page_size: int
    pages: tuple[int, ...]  # page grid of the tensor (tiles for tiled tensors)


@dataclass(frozen=True, slots=True)
class WaitNote:
    """At ``cb_reserve_back`` / ``cb_wait_front(cb, pages)`` on ``line``: the DFB (declaration
    position) it acquires from and the blocks the kernel holds there, described as the
    interpreter's deadlock report describes them."""

    line: int
    cb: int
    pages: int
    dfb: int
    holds: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ContractNote:
    """An external call of the kernel (``extern.call``'s ``contract`` operand indexes the
    kernel's notes): what the run time needs to check the call's declared DFB contract as
    the interpreter checks it (``lang.extern.checks``) -- the call's source position (its
    call site in the operation's plan), the variant key chosen for the kernel and the
    declaration positions of its DFB dependency occurrences, in occurrence order; and, for
    a build failure in the call's header, the call's title, header and file."""

    position: tuple[int, int, int, int]  # (line, end line, column, end column)
    variant: str | None
    dfbs: tuple[int, ...]
    title: str  # ttl.call_extern_func('reader.hpp', 'read_tiles')
    header: str
    file: str


@dataclass(frozen=True, slots=True)
class SemNote:
    """At a semaphore wait on ``line`` (L1 ``addr``, ``value``): what the interpreter's
    deadlock report says about the same wait (``{node}`` is the waiting node)."""

    line: int
    addr: int
    value: int
    text: str


@dataclass(frozen=True, slots=True)
class Function:
    """A ``static inline`` function of the kernel: a raw IR function (``ttl.raw``)
    specialised for one call site -- its DFBs are the kernel's CB indices, its
    ``accessors`` the kernel's accessors (passed by reference), ``params`` its run-time
    scalars; called by a ``raw.call`` op."""

    name: str
    params: tuple[Var, ...]
    accessors: tuple[str, ...]
    locals: tuple[Var, ...]
    body: tuple[Op, ...]
    result: Expr | None = None
    title: str = ""  # what it is, for the C++ comment (``raw IR function f at prog.py:12``)


@dataclass(frozen=True, slots=True)
class Kernel:
    """One logical kernel, ready to verify, print, emit and build."""

    name: str
    kind: str  # KIND_COMPUTE | KIND_DM
    slot: str
    source: str  # the user's file the kernel comes from
    cbs: tuple[CBDecl, ...] = ()
    accessors: tuple[AccessorDecl, ...] = ()
    args: tuple[str, ...] = ()  # runtime argument names, by index
    locals: tuple[Var, ...] = ()
    body: tuple[Op, ...] = ()
    headers: tuple[str, ...] = ()  # user headers of external calls, in first-use order
    include_paths: tuple[str, ...] = ()
    dst_tiles: int = 0  # DST tiles per acquire (compute)
    fp32_dest_acc: bool = True
    dst_full_sync: bool = False
    math_fidelity: int = 4
    noc: int = 0
    descriptors: tuple[tuple[int, int, int, int], ...] = field(default=())
    """``ttlang::DFBDescriptor<index, pages_per_block, block_count, page_size>`` types used."""
    waits: tuple[WaitNote, ...] = ()
    """What the kernel holds at each DFB acquisition (deadlock reports, in the user's words)."""
    sem_waits: tuple[SemNote, ...] = ()
    """The language's words for the kernel's semaphore waits (pipe transfers)."""
    contracts: tuple[ContractNote, ...] = ()
    """The kernel's external calls, checked at run time against their declared contracts."""
    functions: tuple[Function, ...] = ()
    """``static inline`` functions the body calls (``raw.call``), emitted before the kernel."""

    def function(self, name: str) -> Function | None:
        return next((f for f in self.functions if f.name == name), None)

    @property
    def compile_args(self) -> tuple[int, ...]:
        out: list[int] = []
        for acc in sorted(self.accessors, key=lambda a: a.cta):
            out.extend(acc.words)
        return tuple(out)

    def cb(self, index: int) -> CBDecl | None:
        return next((c for c in self.cbs if c.index == index), None)


def const(value: int | float | bool, ty: Ty | None = None) -> Const:
    """A literal of the natural type (bool, i64, f64) unless ``ty`` says otherwise."""
    if ty is None:
        ty = Ty.BOOL if isinstance(value, bool) else Ty.I64 if isinstance(value, int) else Ty.F64
    return Const(value, ty)


def u32(value: int) -> Const:
    return Const(int(value), Ty.U32)


def i64(value: int) -> Const:
    return Const(int(value), Ty.I64)


def seq(x: object) -> tuple:
    """An op operand that is a tuple (``ex*`` / ``str*`` kinds)."""
    assert isinstance(x, tuple), x
    return x


def expr_vars(e: object) -> set[Var]:
    """The variables an expression reads."""
    out: set[Var] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Var):
            out.add(x)
        elif isinstance(x, BinOp):
            stack += [x.a, x.b]
        elif isinstance(x, (UnOp, Cast)):
            stack.append(x.a)
        elif isinstance(x, Intrinsic):
            stack += list(x.args)
    return out
