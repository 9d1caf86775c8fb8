"""The SFPU ops of tt-metal's compute kernel API for Python kernels: in place on DST.

One function pair per row of the op registry's SFPU table
(``tilewright.device.ops.tile_ops.SFPU_OPS``): ``<name>_tile(idst, *params)`` applies the
row's numpy implementation to ``DST[idst]`` and ``<init>()`` is the math thread's init.
Parameters arrive as tt-metal's host code passes them -- a float as its IEEE-754 bits
(``std::bit_cast<uint32_t>(x)``), an integer as itself -- and a Python kernel may pass
the float itself.  The names are bound from the table at import (the table is the one
list of SFPU ops: the native runtime's C++ declarations are generated from it too).

Also here: the SFPU binary ops on two DST tiles (``add_binary_tile`` ..., from
``tile_ops.SFPU_BINARY``) and ``fill_tile``.
"""

from __future__ import annotations

import inspect

import numpy as np

from tilewright.device import api_messages as M
from tilewright.device.kernel_api.compute import (
    _check_dst,
    _ctx,
    _dst,
    _run,
    _write_dst,
    math_of,
    sfpu_init,
)
from tilewright.device.ops import REGISTRY
from tilewright.device.ops.tile_ops import SFPU_BINARY, SFPU_OPS, SfpuOp, where_tile_values
from tilewright.device.perf import pipeline

__all__ = [
    "SFPU_FUNCTIONS",
    "fill_tile",
    "fill_tile_bitcast",
    "fill_tile_init",
]


def float_param(value) -> np.float32:
    """A float parameter: C++ passes the IEEE-754 bits as uint32 (``std::bit_cast<uint32_t>(x)``);
    Python kernels may pass the same bits (an int) or the float itself."""
    if isinstance(value, (float, np.floating)):
        return np.float32(value)
    return np.array([int(value) & 0xFFFFFFFF], dtype=np.uint32).view(np.float32)[0]


def int_param(value) -> int:
    """A signed 32-bit integer parameter (C++ ``int32_t`` / ``uint32_t`` count)."""
    v = int(value) & 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


_DECODE = {"f": float_param, "i": int_param}


_TEMPLATE_NAMES = {"typecast": ("in_dtype", "out_dtype")}
"""tt-metal's template parameters of the SFPU functions that take them (``SfpuOp.template``)."""


def _sfpu_function(op: SfpuOp):
    kinds = op.params
    low = op.required
    fn_name = op.function
    cost = fn_name.removesuffix("_tile")  # the cost table's key (the C++ stem)

    def fn(idst: int, *params) -> None:
        if not kinds:  # tt-metal's extra arguments (vector mode, ...) are accepted
            values: list = []
        else:
            if not low <= len(params) <= len(kinds):
                count = str(len(kinds)) if low == len(kinds) else f"{low}..{len(kinds)}"
                raise M.SFPU_PARAMS(fn=fn_name, count=count, got=len(params))
            padded = (*params, *(0,) * (len(kinds) - len(params)))
            values = [_DECODE[k](p) for k, p in zip(kinds, padded)]
        ctx = _ctx()
        _check_dst(ctx, idst)
        _write_dst(ctx, idst, op.apply(_dst(ctx)[idst], *values, config=math_of(ctx)))
        pipeline.tile_sfpu(_run(), cost)

    fn.__name__ = fn.__qualname__ = fn_name
    if op.template:  # typecast_tile<IN_DTYPE, OUT_DTYPE>(idst): the template values follow idst
        names = ("idst", *_TEMPLATE_NAMES[op.name])
        fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
        )
    fn.__doc__ = (
        f"``{fn_name}(idst{''.join(f', p{i}' for i in range(len(kinds)))})`` in place on "
        f"DST[idst]" + (f": the block op ``{op.op}``." if op.op else ".")
    )
    return fn


SFPU_FUNCTIONS: dict[str, object] = {}
"""Every SFPU function and init of the table, by its tt-metal name."""
for _op in SFPU_OPS.values():
    SFPU_FUNCTIONS[_op.function] = _sfpu_function(_op)
    SFPU_FUNCTIONS[f"{_op.function}_init"] = sfpu_init
    SFPU_FUNCTIONS[_op.init] = sfpu_init
globals().update(SFPU_FUNCTIONS)  # the names are the table's (see the module docstring)
__all__ += sorted(set(SFPU_FUNCTIONS))


# -- SFPU binary ops on two DST tiles (api/compute/eltwise_binary_sfpu.h, binary_max_min.h) ----


def _sfpu_binary(name: str, op: str):
    spec = REGISTRY[op]

    def fn(idst0: int, idst1: int, odst: int) -> None:
        ctx = _ctx()
        for i in (idst0, idst1, odst):
            _check_dst(ctx, i)
        dst = _dst(ctx)
        with np.errstate(all="ignore"):
            _write_dst(ctx, odst, spec.apply(dst[idst0], dst[idst1], config=math_of(ctx)))
        pipeline.tile_sfpu(_run(), "binary")

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``DST[odst] = {op}(DST[idst0], DST[idst1])``: the block op ``{op}``."
    return fn


for _binary in SFPU_BINARY.values():
    SFPU_FUNCTIONS[_binary.name] = _sfpu_binary(_binary.name, _binary.op)
    SFPU_FUNCTIONS[f"{_binary.name}_init"] = sfpu_init
    globals()[_binary.name] = SFPU_FUNCTIONS[_binary.name]
    globals()[f"{_binary.name}_init"] = sfpu_init
    __all__ += [_binary.name, f"{_binary.name}_init"]


def where_tile(idst0: int, idst1: int, idst2: int, odst: int) -> None:
    """``DST[odst] = DST[idst0] != 0 ? DST[idst1] : DST[idst2]`` (``where_tile``)."""
    ctx = _ctx()
    for i in (idst0, idst1, idst2, odst):
        _check_dst(ctx, i)
    dst = _dst(ctx)
    _write_dst(ctx, odst, where_tile_values(dst[idst0], dst[idst1], dst[idst2]))
    pipeline.tile_sfpu(_run(), "binary")


where_tile_init = sfpu_init
SFPU_FUNCTIONS["where_tile"] = where_tile
SFPU_FUNCTIONS["where_tile_init"] = sfpu_init
__all__ += ["where_tile", "where_tile_init"]


# -- fill -----------------------------------------------------------------------------------------

_FILL = REGISTRY["fill"]


def fill_tile_init() -> None:
    sfpu_init()


def fill_tile(idst: int, value: float) -> None:
    """Every element of DST[idst] = ``value`` (a float32): the block op ``fill``."""
    ctx = _ctx()
    tile = _FILL.apply(np.float32(value), shape=(1, 1), config=math_of(ctx))
    _write_dst(ctx, idst, tile)
    pipeline.tile_sfpu(_run(), "fill")


def fill_tile_bitcast(idst: int, bits: int) -> None:
    """fill_tile with the value given as its IEEE-754 bits."""
    fill_tile(idst, float(float_param(bits)))
