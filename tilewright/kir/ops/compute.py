"""Compute ops: the DST handshake, unpack / math / SFPU on DST tiles, and pack.

Each math op's C++ pairs the tt-metal call with its init (``add_tiles_init`` before
``add_tiles`` ...); its interpreter rule calls the same two functions of the Python kernel
API in the same order with the same arguments -- SFPU parameters as the float32's IEEE
bits (``ttlang::f32_bits``) or ``static_cast<uint32_t>``, ``pack_tile<true>`` (out of
order), ``fill_tile(static_cast<float>(v))``.  The DST handshake (``tile_regs_*``) is each
row's ``handshake``; math ops run in its ``math`` phase, packs in ``pack``.

The tile-op name tables (``BINARY``, ``SFPU_BINARY``, ``SFPU``) are data the ``binary_tiles``,
``sfpu_binary`` and ``sfpu`` rows read (and ``ttl.raw`` names its ops from).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from tilewright.device import kernel_api as ka
from tilewright.device.ops import tile_ops
from tilewright.kir.interp_scalar import ExprFn, coerce, compile_expr, operand, unsupported
from tilewright.kir.ir import Const, Op, seq
from tilewright.kir.opdef import CK, Checker, OpDef, OpFn, Runner, Writer, operands

__all__ = [
    "ROWS",
    "BINARY",
    "SFPU_BINARY",
    "SFPU",
    "BINARY_CALLS",
    "SFPU_BINARY_CALLS",
    "SFPU_CALLS",
]

# The op names below are the op registry's (device/ops/tile_ops.py), the one list of the
# compute API's math: this module only names them for the IR.

# Binary FPU ops on two CB tiles (add_tiles ...): IR name -> tt-metal stem.
BINARY = {name: op.name for name, op in tile_ops.FPU_BINARY.items()}

# SFPU binary ops on two DST tiles (api/compute/eltwise_binary_sfpu.h).
SFPU_BINARY = {name: op.name for name, op in tile_ops.SFPU_BINARY.items()}

# SFPU unary ops: IR name -> (tt-metal tile function, init function, parameter kinds).
# Parameter kinds: "f" a float passed as its IEEE bits (tt-metal's host convention),
# "i" an integer.
SFPU: dict[str, tuple[str, str, str]] = {
    op.ir: (op.function, op.init, op.params)
    for op in tile_ops.SFPU_OPS.values()
    if op.ir is not None
}


# SFPU ops whose parameters are C++ template arguments (compile-time constants).
SFPU_TEMPLATE = frozenset(
    op.ir for op in tile_ops.SFPU_OPS.values() if op.ir is not None and op.template
)

_F32BITS = struct.Struct("<f")


def _u32(op: Op, index: int) -> ExprFn:
    return operand(op, index, "u32")


def _static(fn: Callable[..., Any], *args: Any) -> Callable[[Op, Runner], OpFn]:
    return lambda op, rt: lambda env: fn(*args)


# -- DST handshake and hardware start-up --------------------------------------------------------


def _handshake(code: str, need: str, after: str) -> OpDef:
    name = code.replace(".", "_")
    return OpDef(
        code, (), _static(getattr(ka, name)), f"{name}();", CK, handshake=(need, after),
        header="api/compute/reg_api.h" if code == "tile_regs.acquire" else None,
    )  # fmt: skip


def _run_init(op: Op, rt: Runner) -> OpFn:
    cbs = tuple(int(str(a)) for a in op.args)  # static CB indices
    return lambda env: ka.compute_kernel_hw_startup(*cbs)


# -- unpack / math ------------------------------------------------------------------------------


def _run_copy(op: Op, rt: Runner) -> OpFn:
    args: Any = op.args
    cb, tile, dst, transpose = args[0], _u32(op, 1), args[2], args[3]

    def copy(env: Any) -> None:
        ka.copy_tile_to_dst_init_short(cb, transpose)
        ka.copy_tile(cb, tile(env), dst)

    return copy


def _cpp_copy(w: Writer, depth: int, op: Op) -> None:
    a = w.args(op)
    tr = ", 1" if op.args[3] else ""
    w.line(depth, f"copy_tile_to_dst_init_short({a['cb']}{tr});")
    w.line(depth, f"copy_tile({a['cb']}, {a['tile']}, {a['dst']});")


BINARY_CALLS: dict[tuple[str, str], tuple[Callable[..., None], Callable[..., None]]] = {
    ("add", "none"): (ka.add_tiles_init, ka.add_tiles),
    ("sub", "none"): (ka.sub_tiles_init, ka.sub_tiles),
    ("mul", "none"): (ka.mul_tiles_init, ka.mul_tiles),
    ("add", "rows"): (ka.add_bcast_rows_init_short, ka.add_tiles_bcast_rows),
    ("add", "cols"): (ka.add_bcast_cols_init_short, ka.add_tiles_bcast_cols),
    ("add", "scalar"): (ka.add_bcast_scalar_init_short, ka.add_tiles_bcast_scalar),
    ("sub", "rows"): (ka.sub_bcast_rows_init_short, ka.sub_tiles_bcast_rows),
    ("sub", "cols"): (ka.sub_bcast_cols_init_short, ka.sub_tiles_bcast_cols),
    ("sub", "scalar"): (ka.sub_bcast_scalar_init_short, ka.sub_tiles_bcast_scalar),
    ("mul", "rows"): (ka.mul_bcast_rows_init_short, ka.mul_tiles_bcast_rows),
    ("mul", "cols"): (ka.mul_bcast_cols_init_short, ka.mul_tiles_bcast_cols),
    ("mul", "scalar"): (ka.mul_bcast_scalar_init_short, ka.mul_tiles_bcast_scalar),
}
"""(BINARY op, broadcast) -> the init and call the C++ of ``binary_tiles`` writes."""


def _run_binary(op: Op, rt: Runner) -> OpFn:
    args: Any = op.args
    name, bcast, cb0, cb1, _, _, dst = args
    entry = BINARY_CALLS.get((str(name), str(bcast)))
    if entry is None:
        raise unsupported(f"binary op {name!r} with broadcast {bcast!r}", "raw-ir-binary", op)
    init, call = entry
    t0, t1 = _u32(op, 4), _u32(op, 5)

    def binary(env: Any) -> None:
        init(cb0, cb1)
        call(cb0, cb1, t0(env), t1(env), dst)

    return binary


def _cpp_binary(w: Writer, depth: int, op: Op) -> None:
    a = w.args(op)
    stem, bcast = BINARY[str(op.args[0])], str(op.args[1])
    if bcast == "none":
        w.line(depth, f"{stem}_tiles_init({a['cb0']}, {a['cb1']});")
        call = f"{stem}_tiles"
    else:
        w.line(depth, f"{stem}_bcast_{bcast}_init_short({a['cb0']}, {a['cb1']});")
        call = f"{stem}_tiles_bcast_{bcast}"
    w.line(depth, f"{call}({a['cb0']}, {a['cb1']}, {a['t0']}, {a['t1']}, {a['dst']});")


def _check_binary(v: Checker, op: Op) -> None:
    if (str(op.args[0]), str(op.args[1])) not in BINARY_CALLS:
        raise v.fail(f"binary_tiles {op.args[0]!r} with broadcast {op.args[1]!r} is not an FPU op")


_ELW = {"add": "ELWADD", "sub": "ELWSUB", "mul": "ELWMUL"}
_REUSE = {"srca": "DEST_TO_SRCA", "srcb": "DEST_TO_SRCB"}


def _run_reuse(op: Op, rt: Runner) -> OpFn:
    args: Any = op.args
    elw = getattr(ka.EltwiseBinaryType, _ELW[str(args[0])])
    reuse = getattr(ka.EltwiseBinaryReuseDestType, _REUSE[str(args[1])])
    cb, dst, tile = args[2], args[4], _u32(op, 3)

    def dest_reuse(env: Any) -> None:
        ka.binary_dest_reuse_tiles_init(cb, elw, reuse)
        ka.binary_dest_reuse_tiles(cb, tile(env), dst, elw, reuse)

    return dest_reuse


def _cpp_reuse(w: Writer, depth: int, op: Op) -> None:
    a = w.args(op)
    tmpl = f"<{_ELW[str(op.args[0])]}, EltwiseBinaryReuseDestType::{_REUSE[str(op.args[1])]}>"
    w.line(depth, f"binary_dest_reuse_tiles_init{tmpl}({a['cb']});")
    w.line(depth, f"binary_dest_reuse_tiles{tmpl}({a['cb']}, {a['tile']}, {a['dst']});")


SFPU_CALLS: dict[str, tuple[Callable[..., None], Callable[..., None]]] = {
    name: (getattr(ka, fn), getattr(ka, init)) for name, (fn, init, _) in SFPU.items()
}
"""SFPU op -> the kernel-API function and init of the same C++ names (resolved once: a
name the kernel API lacks fails at import)."""


def _sfpu_param_fn(op: Op, p: object) -> ExprFn:
    """A float-typed parameter as ``ttlang::f32_bits`` (the float32's IEEE bits), any other
    as ``static_cast<uint32_t>``; the kernel API takes the same uint32."""
    fn, ct = compile_expr(p, op)
    ty = getattr(p, "ty", None)
    if ty is not None and ty.is_float:
        f32 = coerce(fn, ct, "f32")
        return lambda env: int.from_bytes(_F32BITS.pack(f32(env)), "little")
    return coerce(fn, ct, "u32")


def _sfpu_param_cpp(w: Writer, e: object) -> str:
    """The same parameter as C++."""
    if isinstance(e, Const) and e.ty.is_float:
        return f"ttlang::f32_bits({w.expr(e)})"
    if not isinstance(e, (int, str)) and hasattr(e, "ty") and e.ty.is_float:
        return f"ttlang::f32_bits({w.expr(e)})"
    return f"static_cast<uint32_t>({w.expr(e)})"


def _run_sfpu(op: Op, rt: Runner) -> OpFn:
    args: Any = op.args
    name, dst, params = args
    entry = SFPU_CALLS.get(str(name))
    if entry is None:
        raise unsupported(f"SFPU op {name!r}", "raw-ir-unknown-sfpu", op)
    fn, init = entry
    ps = [_sfpu_param_fn(op, p) for p in seq(params)]

    def sfpu(env: Any) -> None:
        init()
        fn(dst, *(p(env) for p in ps))

    return sfpu


def _cpp_sfpu(w: Writer, depth: int, op: Op) -> None:
    name, dst, params = op.args
    fn, init, _kinds = SFPU[str(name)]
    if str(name) in SFPU_TEMPLATE:  # typecast_tile<IN, OUT>(idst): constants as template args
        args = ", ".join(f"{int(p.value)}u" for p in seq(params))
        w.line(depth, f"{init}<{args}>();")
        w.line(depth, f"{fn}<{args}>({dst});")
        return
    w.line(depth, f"{init}();")
    extra = "".join(f", {_sfpu_param_cpp(w, p)}" for p in seq(params))
    w.line(depth, f"{fn}({dst}{extra});")


def _check_sfpu(v: Checker, op: Op) -> None:
    if str(op.args[0]) not in SFPU:
        raise v.fail(f"unknown SFPU op {op.args[0]!r}")
    if str(op.args[0]) in SFPU_TEMPLATE and not all(
        isinstance(p, Const) and not p.ty.is_float for p in seq(op.args[2])
    ):
        raise v.fail(f"SFPU op {op.args[0]!r} takes integer constants (template arguments)")


SFPU_BINARY_CALLS: dict[str, tuple[Callable[[], None], Callable[[int, int, int], None]]] = {
    name: (getattr(ka, f"{fn}_init"), getattr(ka, fn)) for name, fn in SFPU_BINARY.items()
}
"""SFPU_BINARY op -> its init and call."""


def _run_sfpu_binary(op: Op, rt: Runner) -> OpFn:
    args: Any = op.args
    name, d0, d1, od = args
    entry = SFPU_BINARY_CALLS.get(str(name))
    if entry is None:
        raise unsupported(f"SFPU binary op {name!r}", "raw-ir-unknown-sfpu", op)
    init, fn = entry

    def sfpu_binary(env: Any) -> None:
        init()
        fn(d0, d1, od)

    return sfpu_binary


def _cpp_sfpu_binary(w: Writer, depth: int, op: Op) -> None:
    name, d0, d1, od = op.args
    fn = SFPU_BINARY[str(name)]
    w.line(depth, f"{fn}_init();")
    w.line(depth, f"{fn}({d0}, {d1}, {od});")


def _check_sfpu_binary(v: Checker, op: Op) -> None:
    if str(op.args[0]) not in SFPU_BINARY:
        raise v.fail(f"unknown SFPU binary op {op.args[0]!r}")


def _run_where(op: Op, rt: Runner) -> OpFn:
    args: Any = op.args
    d0, d1, d2, od = args

    def where(env: Any) -> None:
        ka.where_tile_init()
        ka.where_tile(d0, d1, d2, od)

    return where


def _cpp_where(w: Writer, depth: int, op: Op) -> None:
    a = w.args(op)
    w.line(depth, "where_tile_init();")
    w.line(depth, f"where_tile({a['dst0']}, {a['dst1']}, {a['dst2']}, {a['odst']});")


def _run_fill(op: Op, rt: Runner) -> OpFn:
    args: Any = op.args
    dst, value = args[0], operand(op, 1, "f32")  # fill_tile(dst, static_cast<float>(value))

    def fill(env: Any) -> None:
        ka.fill_tile_init()
        ka.fill_tile(dst, value(env))

    return fill


def _cpp_fill(w: Writer, depth: int, op: Op) -> None:
    a = w.args(op)
    w.line(depth, "fill_tile_init();")
    w.line(depth, f"fill_tile({a['dst']}, static_cast<float>({a['value']}));")


_BCAST = {"rows": "ROW", "cols": "COL", "scalar": "SCALAR"}


def _run_unary_bcast(op: Op, rt: Runner) -> OpFn:
    args: Any = op.args
    kind = getattr(ka.BroadcastType, _BCAST[str(args[0])])
    cb, dst, tile = args[1], args[3], _u32(op, 2)

    def unary_bcast(env: Any) -> None:
        ka.unary_bcast_init(cb, cb, kind)
        ka.unary_bcast(cb, tile(env), dst, kind)

    return unary_bcast


def _cpp_unary_bcast(w: Writer, depth: int, op: Op) -> None:
    a = w.args(op)
    t = f"<BroadcastType::{_BCAST[str(op.args[0])]}>"
    w.line(depth, f"unary_bcast_init{t}({a['cb']}, {a['cb']});")
    w.line(depth, f"unary_bcast{t}({a['cb']}, {a['tile']}, {a['dst']});")


def _run_matmul(op: Op, rt: Runner) -> OpFn:
    args: Any = op.args
    cb0, cb1, _, _, dst, transpose = args
    t0, t1 = _u32(op, 2), _u32(op, 3)

    def matmul(env: Any) -> None:
        ka.mm_init_short(cb0, cb1, transpose)
        ka.matmul_tiles(cb0, cb1, t0(env), t1(env), dst, transpose)

    return matmul


def _cpp_matmul(w: Writer, depth: int, op: Op) -> None:
    a = w.args(op)
    tr = int(op.args[5])  # type: ignore[call-overload]
    w.line(depth, f"mm_init_short({a['cb0']}, {a['cb1']}, {tr});")
    w.line(depth, f"matmul_tiles({a['cb0']}, {a['cb1']}, {a['t0']}, {a['t1']}, {a['dst']}, {tr});")


def _run_matmul_block(op: Op, rt: Runner) -> OpFn:
    args: Any = op.args
    cb0, cb1, _, _, dst, tr, ct, rt_, kt = args
    t0, t1 = _u32(op, 2), _u32(op, 3)

    def matmul_block(env: Any) -> None:
        ka.mm_block_init_short(cb0, cb1, tr, ct, rt_, kt)
        ka.matmul_block(cb0, cb1, t0(env), t1(env), dst, tr, ct, rt_, kt)

    return matmul_block


def _cpp_matmul_block(w: Writer, depth: int, op: Op) -> None:
    a = w.args(op)
    tr, ct, rt, kt = (int(x) for x in op.args[5:9])  # type: ignore[call-overload]
    w.line(depth, f"mm_block_init_short({a['cb0']}, {a['cb1']}, {tr}, {ct}, {rt}, {kt});")
    w.line(
        depth,
        f"matmul_block({a['cb0']}, {a['cb1']}, {a['t0']}, {a['t1']}, {a['dst']}, {tr}, {ct}, {rt}, {kt});",
    )


def _check_matmul_block(v: Checker, op: Op) -> None:
    dst, ct, rt = op.args[4], op.args[6], op.args[7]
    last = int(dst) + int(ct) * int(rt) - 1  # type: ignore[call-overload]
    if last >= v.kernel.dst_tiles:
        raise v.fail(
            f"matmul_block writes DST tiles up to {last}, beyond the {v.kernel.dst_tiles} of one "
            "acquire"
        )


_POOL = {"sum": "SUM", "max": "MAX"}
_RDIM = {"row": "REDUCE_ROW", "col": "REDUCE_COL", "scalar": "REDUCE_SCALAR"}


def _run_reduce(op: Op, rt: Runner) -> OpFn:
    args: Any = op.args
    pool, dim, cb, scaler, _, dst = args
    p = getattr(ka.PoolType, _POOL[str(pool)])
    d = getattr(ka.ReduceDim, _RDIM[str(dim)])
    tile = _u32(op, 4)

    def reduce(env: Any) -> None:
        ka.reduce_init(cb, scaler, cb)
        ka.reduce_tile(cb, scaler, tile(env), 0, dst, p, d)

    return reduce


def _cpp_reduce(w: Writer, depth: int, op: Op) -> None:
    a = w.args(op)
    t = f"<PoolType::{_POOL[str(op.args[0])]}, ReduceDim::{_RDIM[str(op.args[1])]}>"
    w.line(depth, f"reduce_init{t}({a['cb']}, {a['scaler']}, {a['cb']});")
    w.line(depth, f"reduce_tile{t}({a['cb']}, {a['scaler']}, {a['tile']}, 0, {a['dst']});")


def _run_transpose(op: Op, rt: Runner) -> OpFn:
    args: Any = op.args
    cb, dst, tile = args[0], args[2], _u32(op, 1)

    def transpose(env: Any) -> None:
        ka.transpose_wh_init_short(cb)
        ka.transpose_wh_tile(cb, tile(env), dst)

    return transpose


def _cpp_transpose(w: Writer, depth: int, op: Op) -> None:
    a = w.args(op)
    w.line(depth, f"transpose_wh_init_short({a['cb']});")
    w.line(depth, f"transpose_wh_tile({a['cb']}, {a['tile']}, {a['dst']});")


# -- pack ---------------------------------------------------------------------------------------


def _run_pack(op: Op, rt: Runner) -> OpFn:
    args: Any = op.args
    dst, cb, slot = args[0], args[1], _u32(op, 2)  # pack_tile<true>: out of order
    return lambda env: ka.pack_tile(dst, cb, slot(env), True)


def _run_l1_acc(op: Op, rt: Runner) -> OpFn:
    enable = op.args[0]
    return lambda env: ka.pack_reconfig_l1_acc(enable)  # type: ignore[arg-type]


_MATH = "math"
_H_BINARY = "api/compute/eltwise_binary.h"
_H_MATMUL = "api/compute/matmul.h"
_H_PACK = "api/compute/pack.h"

ROWS = (
    OpDef(
        "compute.init", operands("icb0:cb", "icb1:cb", "ocb:cb"), _run_init,
        "compute_kernel_hw_startup({icb0}, {icb1}, {ocb});", CK,
        header="api/compute/compute_kernel_hw_startup.h",
    ),
    _handshake("tile_regs.acquire", "idle", "math"),
    _handshake("tile_regs.commit", "math", "committed"),
    _handshake("tile_regs.wait", "committed", "pack"),
    _handshake("tile_regs.release", "pack", "idle"),
    OpDef(
        "copy_tile", operands("cb:cb", "tile:e:u32", "dst:dst", "transpose:int"), _run_copy,
        _cpp_copy, CK, phase=_MATH, header="api/compute/tile_move_copy.h",
        doc="copy_tile_to_dst_init_short(cb, transpose) + copy_tile(cb, tile, dst)",
    ),
    OpDef(
        "binary_tiles",
        operands("op:str", "bcast:str", "cb0:cb", "cb1:cb", "t0:e:u32", "t1:e:u32", "dst:dst"),
        _run_binary, _cpp_binary, CK, phase=_MATH, check=_check_binary, header=_H_BINARY,
        doc="DST[dst] = CB0[t0] <op> CB1[t1] on the FPU (op in BINARY; bcast none / rows / "
        "cols / scalar)",
    ),
    OpDef(
        "binary_dest_reuse", operands("op:str", "reuse:str", "cb:cb", "tile:e:u32", "dst:dst"),
        _run_reuse, _cpp_reuse, CK, phase=_MATH, header=_H_BINARY,
    ),
    OpDef(
        "sfpu", operands("op:str", "dst:dst", "params:ex*"), _run_sfpu, _cpp_sfpu, CK,
        phase=_MATH, check=_check_sfpu, header="api/compute/eltwise_unary/eltwise_unary.h",
        doc="SFPU op (a SFPU row) in place on DST[dst], with its parameters",
    ),
    OpDef(
        "sfpu_binary", operands("op:str", "dst0:dst", "dst1:dst", "odst:dst"), _run_sfpu_binary,
        _cpp_sfpu_binary, CK, phase=_MATH, check=_check_sfpu_binary,
        header="api/compute/eltwise_binary_sfpu.h",
    ),
    OpDef(
        "where_tile", operands("dst0:dst", "dst1:dst", "dst2:dst", "odst:dst"), _run_where,
        _cpp_where, CK, phase=_MATH, header="api/compute/eltwise_unary/where.h",
        doc="DST[odst] = DST[dst0] != 0 ? DST[dst1] : DST[dst2]",
    ),
    OpDef(
        "fill_tile", operands("dst:dst", "value:e:num"), _run_fill, _cpp_fill, CK, phase=_MATH,
        header="api/compute/eltwise_unary/fill.h",
    ),
    OpDef(
        "unary_bcast", operands("dim:str", "cb:cb", "tile:e:u32", "dst:dst"), _run_unary_bcast,
        _cpp_unary_bcast, CK, phase=_MATH, header="api/compute/bcast.h",
    ),
    OpDef(
        "matmul_tiles",
        operands("cb0:cb", "cb1:cb", "t0:e:u32", "t1:e:u32", "dst:dst", "transpose:int"),
        _run_matmul, _cpp_matmul, CK, phase=_MATH, header=_H_MATMUL,
    ),
    OpDef(
        "matmul_block",
        operands(
            "cb0:cb", "cb1:cb", "t0:e:u32", "t1:e:u32", "dst:dst", "transpose:int", "ct:int",
            "rt:int", "kt:int",
        ),
        _run_matmul_block, _cpp_matmul_block, CK, phase=_MATH, check=_check_matmul_block,
        header=_H_MATMUL, doc="DST[dst + r*ct + c] += A[t0 + r*kt] @ B[t1 + c] for r < rt, c < ct",
    ),
    OpDef(
        "reduce_tile",
        operands("pool:str", "dim:str", "cb:cb", "scaler:cb", "tile:e:u32", "dst:dst"),
        _run_reduce, _cpp_reduce, CK, phase=_MATH, header="api/compute/reduce.h",
    ),
    OpDef(
        "transpose_tile", operands("cb:cb", "tile:e:u32", "dst:dst"), _run_transpose,
        _cpp_transpose, CK, phase=_MATH, header="api/compute/transpose_wh.h",
    ),
    OpDef(
        "pack_tile", operands("dst:dst", "cb:cb", "slot:e:u32"), _run_pack,
        "pack_tile<true>({dst}, {cb}, {slot});", CK, phase="pack", header=_H_PACK,
    ),
    OpDef(
        "pack_l1_acc", operands("enable:int"), _run_l1_acc, "pack_reconfig_l1_acc({enable});",
        CK, header=_H_PACK,
    ),
)  # fmt: skip
