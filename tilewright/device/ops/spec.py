"""The data model of the block-math op registry: op kinds, parameters, op specs.

One :class:`OpSpec` describes one block operation completely: its name and namespace,
how many block operands it takes (its :class:`OpKind`), its extra scalar parameters
(:class:`Param`), the formats it accepts, its numpy implementation, its torch golden,
whether the TT-Lang compiler supports it, and how tt-metal computes it on a DST tile
(:class:`SfpuForm`: the SFPU function of the compute kernel API, which is what the
compiler emits, the Python kernel API binds and the native runtime implements).  The
table of specs lives in ``registry.py``; the kernel API's tile ops derived from it in
``tile_ops.py``; shape rules in ``shapes.py``; parameter binding in ``params.py``.

Every op in the registry runs on the COMPUTE kernel (TT-Lang spec, "Thread
assignment": block expressions and their ``store`` run on a compute thread).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from tilewright.device.formats import TtnnDataType, data_type_name

__all__ = [
    "ALL_FORMATS",
    "BFLOAT4_B",
    "BFLOAT8_B",
    "BFLOAT16",
    "COMPUTE_FORMATS",
    "DEFAULT_TILE",
    "FLOAT32",
    "NAMESPACES",
    "REQUIRED",
    "SAME",
    "Namespace",
    "OpKind",
    "OpSpec",
    "Param",
    "ParamKind",
    "SfpuForm",
]

Namespace = Literal["math", "block", "operator"]
NAMESPACES: tuple[Namespace, ...] = ("math", "block", "operator")

# The float data types by their canonical (ttnn) names, from device.formats' one table.
FLOAT32 = data_type_name(TtnnDataType.FLOAT32)
BFLOAT16 = data_type_name(TtnnDataType.BFLOAT16)
BFLOAT8_B = data_type_name(TtnnDataType.BFLOAT8_B)
BFLOAT4_B = data_type_name(TtnnDataType.BFLOAT4_B)
ALL_FORMATS: frozenset[str] = frozenset({FLOAT32, BFLOAT16, BFLOAT8_B, BFLOAT4_B})
"""Every float format a TT-Lang block can have (reference E.1)."""
COMPUTE_FORMATS: frozenset[str] = frozenset({FLOAT32, BFLOAT16})
"""Formats generated compute accepts for operands (reference E.1: BF16 and FP32
"everywhere"; block-float only as a matmul rhs and a typecast target)."""

DEFAULT_TILE: tuple[int, int] = (32, 32)


class OpKind(enum.Enum):
    """What an op does to block shapes; decides its operand count and shape rule."""

    UNARY = "unary"  # one block -> same shape (scalar params allowed)
    BINARY = "binary"  # two blocks of one shape -> that shape
    TERNARY = "ternary"  # three blocks of one shape -> that shape
    REDUCE = "reduce"  # reduce_sum / reduce_max (tiled two-step semantics)
    BROADCAST = "broadcast"  # ttl.block.broadcast (tiled two-step semantics)
    TRANSPOSE = "transpose"  # 2-D block transpose
    FILL = "fill"  # no operand: a constant block of a given shape
    MATMUL = "matmul"  # [..., M, K] @ [..., K, N]
    SHAPE = "shape"  # squeeze / unsqueeze of tile-grid dims
    TYPECAST = "typecast"  # same shape, new format

    @property
    def arity(self) -> int:
        """Number of block operands."""
        return _ARITY[self]


_ARITY: dict[OpKind, int] = {
    OpKind.UNARY: 1,
    OpKind.BINARY: 2,
    OpKind.TERNARY: 3,
    OpKind.REDUCE: 1,
    OpKind.BROADCAST: 1,
    OpKind.TRANSPOSE: 1,
    OpKind.FILL: 0,
    OpKind.MATMUL: 2,
    OpKind.SHAPE: 1,
    OpKind.TYPECAST: 1,
}


class ParamKind(enum.Enum):
    """The type of a scalar parameter, as ``params.bind_params`` checks it."""

    NATURAL = "natural int"  # ttl.NaturalInt: int >= 0
    POSITIVE = "positive int"  # ttl.PositiveInt: int > 0
    FLOAT = "real number"  # int or float (the spec types many of these NaturalInt)
    OPTIONAL_FLOAT = "real number or None"
    BOOL = "bool"
    DIMS = "list of dimension indexes"  # non-empty sequence of ints
    SHAPE = "shape"  # tuple of positive ints (block shape in tiles)
    OPTIONAL_SHAPE = "shape or None"
    TILE = "tile shape"  # (height, width) in elements
    DTYPE = "float data format"  # one of ALL_FORMATS (name, alias or enum with .name)
    LAYOUT = "layout"  # "tile" or "row_major" (string, or ttnn Layout by .name)


class _Required:
    """Sentinel default of a required parameter."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


class _Same:
    """Sentinel: the kernel-IR name of an SFPU form is the op's own name."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SAME"


SAME: Any = _Same()


@dataclass(frozen=True, slots=True)
class SfpuForm:
    """How tt-metal computes an op on one DST tile: ``<stem>_tile(idst, params...)``.

    The SFPU function computes the op *exactly* (the same values for the same inputs);
    its parameters are the op's own, in ``params`` order, passed as tt-metal's host code
    passes them (a float as its IEEE-754 bits, an integer as itself).

    Attributes:
        stem: the tt-metal function stem (``"negative"`` -> ``negative_tile`` and
            ``negative_tile_init``).
        params: the op's parameters the function takes, in order.
        ir: the kernel IR's name of the SFPU op (``optable.SFPU``; ``raw.sfpu(name)``);
            ``SAME`` is the op's name, None: not in the IR (kernel API only).
        ulps: the most float32 ulps the native runtime's C++ may differ from the numpy
            implementation (0: bit for bit, as for the ops with an SFPU program of their
            own, ``sfpu_algorithms``; the other transcendental functions are evaluated in
            double there and rounded once, numpy's float32 loops are within ~2.5 ulps).
        init: the init function, when it is not ``<stem>_tile_init``.
    """

    stem: str
    params: tuple[str, ...] = ()
    ir: str | None = SAME
    ulps: int = 0
    init: str | None = None


@dataclass(frozen=True, slots=True)
class Param:
    """One extra parameter of an op (beyond its block operands).

    Attributes:
        name: the spec's parameter name (used as the keyword to ``impl``).
        kind: its type (checked by ``params.bind_params``).
        default: default value, or ``REQUIRED``.
        keyword_only: True where the spec signature puts it after ``*``.
        aliases: other keyword spellings accepted (older spec / simulator names).
        doc: one line for docs and error messages.
    """

    name: str
    kind: ParamKind
    default: Any = REQUIRED
    keyword_only: bool = False
    aliases: tuple[str, ...] = ()
    doc: str = ""

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True, slots=True)
class OpSpec:
    """Everything Tilewright knows about one block operation.

    Attributes:
        name: registry key and spelling in its namespace (``"exp"`` -> ``ttl.math.exp``;
            operators use a name such as ``"add"`` plus ``dunder``).
        kind: shape behaviour and operand count.
        impl: vectorised numpy function ``impl(*operands, **params) -> np.ndarray``
            on float32 block values (see ``tilewright.device.ops`` for the value
            convention); computes in float32, never rounds to a narrower format.
        params: extra scalar parameters, in the spec's positional order.
        namespace: ``"math"`` (``ttl.math.*``), ``"block"`` (``ttl.block.*``) or
            ``"operator"`` (Python operators on block expressions only).
        formats: operand formats the op accepts.
        torch_golden: independent torch reference with ``impl``'s calling convention
            (torch float32 tensors in and out); None only where ``golden_note`` says why.
        compiler_supported: the TT-Lang compiler implements it (spec Appendix D and
            reference A.5 status table); the rest are simulator-only.
        doc: one line.
        aliases: legacy qualified spellings (``"math.where"``) that resolve here;
            filled from ``legacy.LEGACY_ALIASES`` when the registry is built.
        dunder: the Python operator method (``"__add__"``) that spells this op, if any.
            Reflected forms (``__radd__`` ...) swap operands; ``+=`` is ``add``.
        accepts_scalar: an operand may be a Python number (``2.0 * a``); its block
            shape is written ``()`` for ``shapes.result_shape``.
        golden_note: why ``torch_golden`` is missing or differs from the obvious torch
            function.
        placement: the kernel kind the op runs on (always compute).
        sfpu: the SFPU function computing the op on a DST tile, if tt-metal has one
            (``tile_ops`` derives the kernel API's SFPU table from these).
        lowering: the SFPU steps the compiler emits for the op when they are not just
            ``sfpu`` (kernel-IR SFPU names with the parameter names or constants they
            take, applied in order); None: ``sfpu`` itself, if it has an IR name.
    """

    name: str
    kind: OpKind
    impl: Callable[..., np.ndarray]
    params: tuple[Param, ...] = ()
    namespace: Namespace = "math"
    formats: frozenset[str] = COMPUTE_FORMATS
    torch_golden: Callable[..., Any] | None = None
    compiler_supported: bool = False
    doc: str = ""
    aliases: tuple[str, ...] = ()
    dunder: str | None = None
    accepts_scalar: bool = False
    golden_note: str = ""
    placement: Literal["compute"] = "compute"
    sfpu: SfpuForm | None = None
    lowering: tuple[tuple[str, tuple[str | float, ...]], ...] | None = None

    @property
    def arity(self) -> int:
        """Number of block operands (``kind.arity``)."""
        return self.kind.arity

    @property
    def qualified_name(self) -> str:
        """``"math.exp"``, ``"block.broadcast"``, ``"operator.add"``."""
        return f"{self.namespace}.{self.name}"

    def apply(self, *operands: Any, config: Any = None, **params: Any) -> np.ndarray:
        """The op on block values: the one call every engine makes.

        ``config`` is the compute configuration of the kernel that runs the op
        (``numerics.MathConfig``; None: the default).  The numpy implementations do not
        read it: the math fidelity slices the operands of the FPU's multiplies, which the
        callers that are FPU ops apply (``numerics.fpu_product``: ``tile_ops.FPU_BINARY``,
        the kernel API's matmul and reduce) -- the same op on the SFPU (``mul_binary_tile``)
        is unsliced; DST precision is the kernel API's rounding on DST writes.
        """
        return self.impl(*operands, **params)

    @property
    def compiled_steps(self) -> tuple[tuple[str, tuple[str | float, ...]], ...] | None:
        """The SFPU steps the compiler lowers a unary op to (None: not compiled)."""
        if self.lowering is not None:
            return self.lowering
        form = self.sfpu
        if form is None or form.ir is None:
            return None
        return ((self.name if form.ir is SAME else form.ir, form.params),)

    def param(self, name: str) -> Param:
        """The parameter called ``name`` (KeyError if none)."""
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def signature(self) -> str:
        """Spec-style signature text, e.g. ``clamp(x, min, max)``; for docs and errors."""
        operands = ["x", "y", "z"][: self.arity] if self.kind is not OpKind.FILL else []
        parts = list(operands)
        star = False
        for p in self.params:
            if p.keyword_only and not star:
                parts.append("*")
                star = True
            parts.append(p.name if p.required else f"{p.name}={p.default!r}")
        return f"{self.name}({', '.join(parts)})"
