"""The math of the compute kernel API on tiles: every SFPU and FPU op, from the registry.

The compute kernel API (``api/compute/*.h``) computes on 32x32 tiles in DST.  Its ops
are the block ops of :mod:`.registry` applied to one tile -- ``add_tiles`` is ``add``,
``exp_tile`` is ``exp``, ``matmul_tiles`` adds ``matmul`` into DST -- plus a few
tt-metal functions with no block op of their own (``erf_tile``, the scalar
``add_unary_tile`` family, tt-llk's ``relu_min_tile``, torch's ``threshold_tile``, the
float-exponent ``power_tile``).  One table here says, for each:

* its tt-metal name and parameters (``<name>_tile(idst, params...)``, ``<init>()``);
* its numpy implementation -- the registry op's own ``impl`` wherever the function
  computes that op, so block math and the kernel API share one definition;
* its kernel-IR name, if the compiler or ``ttl.raw`` can emit it;
* how many float32 ulps the native runtime's C++ implementation may differ (0: bit
  for bit, checked by the differential test of both kernel APIs).

Read by: the Python kernel API (``kernel_api/sfpu.py`` binds one function per row), the
native runtime (``native/headers.py`` generates the op enum and the C++ declarations;
``runtime/compute.cpp`` has the C++ implementation of each row), and the compiler's name
tables (``kir/optable.py`` ``SFPU`` / ``SFPU_BINARY`` / ``BINARY``,
``compiler/backend/lower/compute.py`` ``UNARY``).  Each implementation takes the
kernel's :class:`~.numerics.MathConfig` through ``apply``; the FPU multiply (``FPU_BINARY['mul']``)
reads its math fidelity.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tilewright.device.formats.dataformat import DataFormat
from tilewright.errors import KernelError

from . import elementwise as ew
from .numerics import DEFAULT_MATH, MathConfig, fpu_product
from .registry import REGISTRY, TRANSCENDENTAL
from .sfpu_algorithms import ALGORITHMS, sfpu_value
from .spec import SAME, OpSpec, ParamKind
from .special import erf

__all__ = [
    "FPU_BINARY",
    "SFPU_BINARY",
    "SFPU_OPS",
    "SFPU_TERNARY",
    "where_tile_values",
    "BinaryTileOp",
    "SfpuOp",
    "sfpu_op",
]

F32 = np.float32


@dataclass(frozen=True, slots=True)
class SfpuOp:
    """One unary SFPU function of the compute API, in place on ``DST[idst]``.

    Attributes:
        name: tt-metal stem (``<name>_tile``).
        params: one letter per parameter: ``f`` a float (IEEE-754 bits from C++), ``i`` an
            int32.
        impl: ``impl(x, *params)`` on a float32 tile, float32 out.
        op: the registry op it computes (``impl`` is then that op's), or None.
        ir: the kernel IR's name (``optable.SFPU``), or None.
        ulps: float32 ulps the native runtime may differ by (0: bit for bit).
        init: its init function.
        required: parameters without a C++ default (tt-metal's one-parameter functions
            default theirs to 0).
        scalar: the registry's binary op this is with a scalar right operand (``x op p``;
            ``rsub``: ``p - x``), for the compiler's ``block op number``.
        template: the parameters are C++ template arguments (``typecast_tile<IN, OUT>``);
            the Python kernel API takes them after ``idst``.
    """

    name: str
    params: str
    impl: Callable[..., np.ndarray]
    op: str | None
    ir: str | None
    ulps: int
    init: str
    required: int
    scalar: str | None = None
    template: bool = False

    @property
    def function(self) -> str:
        return f"{self.name}_tile"

    @property
    def program(self) -> bool:
        """The SFPU runs its own program for this op (``sfpu_algorithms.ALGORITHMS``): the
        value depends on ``math_approx_mode`` and ``fp32_dest_acc_en``."""
        return self.name in ALGORITHMS

    def apply(self, x: np.ndarray, *params: Any, config: MathConfig = DEFAULT_MATH) -> np.ndarray:
        """The op on one DST tile (``config``: the kernel's numerics, see ``numerics``)."""
        if self.program:
            return sfpu_value(
                self.name, x, approx=config.math_approx_mode, fp32_dest=config.fp32_dest_acc_en
            )
        with np.errstate(all="ignore"):
            return np.asarray(self.impl(x, *params), dtype=F32)


@dataclass(frozen=True, slots=True)
class BinaryTileOp:
    """A binary op of the compute API: FPU (two CB tiles) or SFPU (two DST tiles)."""

    name: str  # tt-metal function (add_tiles stem "add", or "add_binary_tile")
    op: str  # the registry op (its impl computes it)
    code: int  # the native runtime's op code
    fidelity: bool = False  # an FPU multiply: SrcA = a, SrcB = b sliced by the math fidelity

    @property
    def impl(self) -> Callable[..., np.ndarray]:
        return REGISTRY[self.op].impl

    def apply(self, a: np.ndarray, b: np.ndarray, *, config: MathConfig = DEFAULT_MATH):
        spec = REGISTRY[self.op]
        if not self.fidelity:
            return spec.apply(a, b, config=config)
        # ELWMUL: in0 (``a``) is SrcA, in1 (``b``) SrcB (numerics.fpu_product).
        return fpu_product(
            lambda src_b, src_a: spec.apply(src_a, src_b, config=config),
            b,
            a,
            config.math_fidelity,
        )


_KIND = {ParamKind.FLOAT: "f", ParamKind.OPTIONAL_FLOAT: "f", ParamKind.NATURAL: "i"}


def _from_registry(spec: OpSpec) -> SfpuOp:
    form = spec.sfpu
    assert form is not None
    names = form.params
    kinds = "".join(_KIND[spec.param(p).kind] for p in names)

    def impl(x: np.ndarray, *values: Any) -> np.ndarray:
        return spec.impl(x, **dict(zip(names, values)))

    impl.__name__ = impl.__qualname__ = f"{form.stem}_tile"
    return SfpuOp(
        name=form.stem,
        params=kinds,
        impl=impl,
        op=spec.name,
        ir=spec.name if form.ir is SAME else form.ir,
        ulps=form.ulps,
        init=form.init or f"{form.stem}_tile_init",
        required=0 if len(kinds) == 1 else len(kinds),
    )


def _own(
    name: str,
    params: str,
    impl: Callable[..., np.ndarray],
    *,
    ir=None,
    ulps=0,
    init=None,
    scalar=None,
    template=False,
) -> SfpuOp:
    """A tt-metal SFPU function with no block op of its own."""
    return SfpuOp(
        name, params, impl, None, ir, ulps, init or f"{name}_tile_init",
        0 if len(params) == 1 else len(params), scalar, template,
    )  # fmt: skip


def typecast_tile_values(x: np.ndarray, in_format: int, out_format: int) -> np.ndarray:
    """``typecast_tile<IN, OUT>``: DST's float32 values as the registry's ``typecast`` to the
    output format gives them (bf16: round to nearest even) -- one definition, which the
    native runtime asks Python for (``native/requests.py``).  Float formats only."""
    names = {int(DataFormat.Float32): "float32", int(DataFormat.Float16_b): "bfloat16"}
    if int(in_format) not in names or int(out_format) not in names:
        raise KernelError(
            f"typecast_tile<{in_format}, {out_format}>: only Float32 and Float16_b "
            "(tt::DataFormat 0 and 5) are supported"
        )
    return ew.typecast(x, names[int(out_format)])


def _erf(x: np.ndarray) -> np.ndarray:
    return erf(x.astype(np.float64)).astype(F32)


def _erfc(x: np.ndarray) -> np.ndarray:
    return (1.0 - erf(x.astype(np.float64))).astype(F32)


def _threshold(x: np.ndarray, threshold: np.float32, value: np.float32) -> np.ndarray:
    """ttnn's threshold: ``x`` where ``x > threshold``, else ``value`` (``ttl.math.threshold``
    is the reverse, so it has no SFPU form)."""
    return np.where(x > threshold, x, value)


_SCALAR_INIT = "binop_with_scalar_tile_init"

_OWN: tuple[SfpuOp, ...] = (
    _own("erf", "", _erf),
    _own("erfc", "", _erfc),
    # tt-llk's _relu_min_ (2025+): values below the threshold become the threshold.
    _own("relu_min", "f", lambda x, t: np.maximum(x, t), ir="relu_min_raw"),
    _own("power", "f", lambda x, e: np.power(x, e), ulps=TRANSCENDENTAL),
    _own("threshold", "ff", _threshold, ir="threshold"),
    _own("typecast", "ii", typecast_tile_values, ir="typecast", template=True),
    # The scalar binops: the block ops with a scalar operand.  div_unary multiplies: the
    # host passes 1 / value, as tt-metal's does.
    _own("add_unary", "f", ew.add, ir="add_scalar", init=_SCALAR_INIT, scalar="add"),
    _own("sub_unary", "f", ew.sub, ir="sub_scalar", init=_SCALAR_INIT, scalar="sub"),
    _own("mul_unary", "f", ew.mul, ir="mul_scalar", init=_SCALAR_INIT, scalar="mul"),
    _own("div_unary", "f", ew.mul, init=_SCALAR_INIT),
    _own("rsub_unary", "f", ew.rsub, ir="rsub_scalar", init=_SCALAR_INIT, scalar="rsub"),
)


def _build() -> dict[str, SfpuOp]:
    table: dict[str, SfpuOp] = {}
    for op in (*(_from_registry(s) for s in REGISTRY.values() if s.sfpu), *_OWN):
        if op.name in table:
            raise AssertionError(f"two SFPU ops are called {op.name!r}")
        table[op.name] = op
    irs = [op.ir for op in table.values() if op.ir is not None]
    if len(irs) != len(set(irs)):
        raise AssertionError(f"an IR SFPU name is used twice: {sorted(irs)}")
    return table


SFPU_OPS: dict[str, SfpuOp] = _build()
"""tt-metal stem -> the unary SFPU op (every ``<stem>_tile`` of the compute API)."""

SFPU_BINARY: dict[str, BinaryTileOp] = {
    op: BinaryTileOp(fn, op, code)
    for code, (fn, op) in enumerate(
        [
            ("add_binary_tile", "add"),
            ("sub_binary_tile", "sub"),
            ("mul_binary_tile", "mul"),
            ("div_binary_tile", "div"),
            ("binary_max_tile", "max"),
            ("binary_min_tile", "min"),
            # Comparisons of two DST tiles as 1.0 / 0.0 (IEEE: NaN compares unequal), and
            # Python's floored % and // (numpy's float32 divmod).  tt-metal's float forms are
            # sub_binary_tile + gtz_tile ... (not IEEE at inf - inf) and fmod / div + floor;
            # these are the exact block ops, named in tt-metal's SFPU-binary style.
            ("gt_binary_tile", "gt"),
            ("lt_binary_tile", "lt"),
            ("ge_binary_tile", "ge"),
            ("le_binary_tile", "le"),
            ("eq_binary_tile", "eq"),
            ("ne_binary_tile", "ne"),
            ("remainder_binary_tile", "mod"),
            ("floor_div_binary_tile", "floordiv"),
        ]
    )
}
"""Registry op -> the SFPU binary op on two DST tiles (``api/compute/eltwise_binary_sfpu.h``,
``binary_max_min.h``): ``odst = op(DST[idst0], DST[idst1])``."""

SFPU_TERNARY: dict[str, str] = {"where": "where_tile"}
"""SFPU ternary ops on three DST tiles (``api/compute/eltwise_unary/where.h``):
``where_tile(idst0, idst1, idst2, odst)``, ``DST[odst] = DST[idst1]`` where ``DST[idst0]`` is
non-zero, else ``DST[idst2]`` (tt-metal's rule; the block op's ``condition == 1`` is an
``eq`` before it)."""


def where_tile_values(cond: np.ndarray, true: np.ndarray, false: np.ndarray) -> np.ndarray:
    """``where_tile`` on float32 tiles (a NaN condition is non-zero: true)."""
    return np.where(cond != 0, true, false).astype(F32)


FPU_BINARY: dict[str, BinaryTileOp] = {
    op: BinaryTileOp(op, op, code, fidelity=op == "mul")
    for code, op in enumerate(("add", "sub", "mul"))
}
"""Registry op -> the FPU binary op on two CB tiles (``<op>_tiles``, their broadcasts and
``binary_dest_reuse_tiles``).  ``mul`` is the one the math fidelity slices (tt-metal
``mul_tiles`` runs MATH_FIDELITY phases; add and sub run one pass of full operands)."""


def sfpu_op(name: str) -> SfpuOp:
    """The SFPU op of tt-metal stem ``name`` (KeyError naming the table if none)."""
    try:
        return SFPU_OPS[name]
    except KeyError:
        raise KeyError(
            f"no SFPU op {name!r}: SFPU ops are the sfpu= forms of device/ops/registry.py "
            "and the rows of device/ops/tile_ops.py"
        ) from None
