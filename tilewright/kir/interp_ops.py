"""Kernel-API ops of the IR interpreter: each op code as the kernel-API calls its C++ makes.

One compiler per op code of :data:`.optable.OPS` that calls :mod:`tilewright.device.kernel_api`
(CB protocol, NoC transfers through accessors, semaphores, the DST handshake, unpack / math /
SFPU / pack), turning the op into a closure ``fn(env)``.  Each compiler mirrors the op's C++
form in :mod:`.emit`: the same calls in the same order with the same arguments -- the init
the emitter pairs with a call, SFPU parameters as IEEE bits, ``pack_tile<true>`` (out of
order), operands converted to the ``uint32_t`` parameters as C++ converts them.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from tilewright.device import kernel_api as ka
from tilewright.kir.interp_scalar import (
    CType,
    ExprFn,
    coerce,
    compile_expr,
    unsupported,
)
from tilewright.kir.ir import Op, seq
from tilewright.kir.optable import SFPU

__all__ = [
    "API_HANDLERS",
    "OpFn",
    "operand",
    "SFPU_CALLS",
    "SFPU_BINARY_CALLS",
    "BINARY_CALLS",
]

OpFn = Callable[[Any], "int | None"]
"""A compiled op: runs on an :class:`~.interp.Env`; returns None, BREAK or CONTINUE."""


_F32BITS = struct.Struct("<f")

# -- operands -----------------------------------------------------------------------------------


def operand(op: Op, index: int, want: CType) -> ExprFn:
    """Operand ``index`` of ``op`` converted to the C++ parameter type ``want``."""
    fn, have = compile_expr(op.args[index], op)
    return coerce(fn, have, want)


def _u32(op: Op, index: int) -> ExprFn:
    return operand(op, index, "u32")


# -- kernel-API calls ---------------------------------------------------------------------------


def _call(fn: Callable[..., Any], *static: Any) -> OpFn:
    """An op with static operands only."""
    return lambda env: fn(*static)


def _cb_op(fn: Callable[[int, int], None]) -> Callable[[Op], OpFn]:
    return lambda op: _call(fn, op.args[0], op.args[1])


def _page(fn: Callable[..., None]) -> Callable[[Op], OpFn]:
    """noc_async_{read,write}_page(page, accessor, l1)."""

    def make(op: Op) -> OpFn:
        name, page, l1 = str(op.args[0]), _u32(op, 1), _u32(op, 2)

        def transfer(env: Any) -> None:
            acc = env.accessors.get(name)
            if acc is None:
                raise unsupported(
                    f"accessor {name!r}: the environment binds no tensor accessor of that name "
                    f"(it has {sorted(env.accessors)})",
                    "raw-ir-accessor",
                    op,
                )
            fn(page(env), acc, l1(env))

        return transfer

    return make


def _noc_write(op: Op) -> OpFn:
    src, x, y, dst, size = (_u32(op, i) for i in range(5))
    return lambda env: ka.noc_async_write(
        src(env), ka.get_noc_addr(x(env), y(env), dst(env)), size(env)
    )


def _mcast_addr(op: Op, first: int) -> ExprFn:
    x0, y0, x1, y1, addr = (_u32(op, first + i) for i in range(5))
    return lambda env: ka.get_noc_multicast_addr(x0(env), y0(env), x1(env), y1(env), addr(env))


def _noc_write_mcast(op: Op) -> OpFn:
    args: Any = op.args
    src, mcast, size, dests = _u32(op, 0), _mcast_addr(op, 1), _u32(op, 6), args[7]
    return lambda env: ka.noc_async_write_multicast(src(env), mcast(env), size(env), dests)


def _noc_addr(op: Op, first: int) -> ExprFn:
    x, y, addr = (_u32(op, first + i) for i in range(3))
    return lambda env: ka.get_noc_addr(x(env), y(env), addr(env))


def _inline_write(op: Op) -> OpFn:
    at, value = _noc_addr(op, 0), _u32(op, 3)
    return lambda env: ka.noc_inline_dw_write(at(env), value(env))


def _sem_wait(op: Op) -> OpFn:
    args: Any = op.args
    fn = ka.noc_semaphore_wait if args[2] == "eq" else ka.noc_semaphore_wait_min
    addr, value = _u32(op, 0), _u32(op, 1)
    return lambda env: fn(addr(env), value(env))


def _sem_set(op: Op) -> OpFn:
    addr, value = _u32(op, 0), _u32(op, 1)
    return lambda env: ka.noc_semaphore_set(addr(env), value(env))


def _sem_inc(op: Op) -> OpFn:
    at, value = _noc_addr(op, 0), _u32(op, 3)
    return lambda env: ka.noc_semaphore_inc(at(env), value(env))


def _sem_set_remote(op: Op) -> OpFn:
    src, at = _u32(op, 0), _noc_addr(op, 1)
    return lambda env: ka.noc_semaphore_set_remote(src(env), at(env))


def _sem_set_mcast(op: Op) -> OpFn:
    args: Any = op.args
    src, mcast, dests = _u32(op, 0), _mcast_addr(op, 1), args[6]
    return lambda env: ka.noc_semaphore_set_multicast(src(env), mcast(env), dests)


def _copy(op: Op) -> OpFn:
    args: Any = op.args
    cb, tile, dst, transpose = args[0], _u32(op, 1), args[2], args[3]

    def copy(env: Any) -> None:
        ka.copy_tile_to_dst_init_short(cb, transpose)
        ka.copy_tile(cb, tile(env), dst)

    return copy


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
"""(optable.BINARY op, broadcast) -> the init and call emit._emit_binary writes."""

SFPU_BINARY_CALLS: dict[str, tuple[Callable[[], None], Callable[[int, int, int], None]]] = {
    "add": (ka.add_binary_tile_init, ka.add_binary_tile),
    "sub": (ka.sub_binary_tile_init, ka.sub_binary_tile),
    "mul": (ka.mul_binary_tile_init, ka.mul_binary_tile),
    "div": (ka.div_binary_tile_init, ka.div_binary_tile),
    "max": (ka.binary_max_tile_init, ka.binary_max_tile),
    "min": (ka.binary_min_tile_init, ka.binary_min_tile),
}
"""optable.SFPU_BINARY op -> its init and call."""

SFPU_CALLS: dict[str, tuple[Callable[..., None], Callable[..., None]]] = {
    name: (getattr(ka, fn), getattr(ka, init)) for name, (fn, init, _) in SFPU.items()
}
"""optable.SFPU op -> the kernel-API function and init of the same C++ names (resolved once:
a name the kernel API lacks fails at import)."""


def _binary(op: Op) -> OpFn:
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


_ELW = {"add": ka.EltwiseBinaryType.ELWADD, "sub": ka.EltwiseBinaryType.ELWSUB}
_ELW["mul"] = ka.EltwiseBinaryType.ELWMUL
_REUSE = {
    "srca": ka.EltwiseBinaryReuseDestType.DEST_TO_SRCA,
    "srcb": ka.EltwiseBinaryReuseDestType.DEST_TO_SRCB,
}


def _reuse(op: Op) -> OpFn:
    args: Any = op.args
    elw, reuse, cb, dst = _ELW[str(args[0])], _REUSE[str(args[1])], args[2], args[4]
    tile = _u32(op, 3)

    def dest_reuse(env: Any) -> None:
        ka.binary_dest_reuse_tiles_init(cb, elw, reuse)
        ka.binary_dest_reuse_tiles(cb, tile(env), dst, elw, reuse)

    return dest_reuse


def _sfpu_param(op: Op, p: object) -> ExprFn:
    """emit._param: a float-typed parameter as ``ttlang::f32_bits`` (the float32's IEEE
    bits), any other as ``static_cast<uint32_t>``; kernel_api takes the same uint32."""
    fn, ct = compile_expr(p, op)
    ty = getattr(p, "ty", None)
    if ty is not None and ty.is_float:
        f32 = coerce(fn, ct, "f32")
        return lambda env: int.from_bytes(_F32BITS.pack(f32(env)), "little")
    return coerce(fn, ct, "u32")


def _sfpu(op: Op) -> OpFn:
    args: Any = op.args
    name, dst, params = args
    entry = SFPU_CALLS.get(str(name))
    if entry is None:
        raise unsupported(f"SFPU op {name!r}", "raw-ir-unknown-sfpu", op)
    fn, init = entry
    ps = [_sfpu_param(op, p) for p in seq(params)]

    def sfpu(env: Any) -> None:
        init()
        fn(dst, *(p(env) for p in ps))

    return sfpu


def _sfpu_binary(op: Op) -> OpFn:
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


def _fill(op: Op) -> OpFn:
    args: Any = op.args
    dst, value = args[0], operand(op, 1, "f32")  # fill_tile(dst, static_cast<float>(value))

    def fill(env: Any) -> None:
        ka.fill_tile_init()
        ka.fill_tile(dst, value(env))

    return fill


_BCAST = {"rows": ka.BroadcastType.ROW, "cols": ka.BroadcastType.COL}
_BCAST["scalar"] = ka.BroadcastType.SCALAR


def _unary_bcast(op: Op) -> OpFn:
    args: Any = op.args
    kind, cb, dst, tile = _BCAST[str(args[0])], args[1], args[3], _u32(op, 2)

    def unary_bcast(env: Any) -> None:
        ka.unary_bcast_init(cb, cb, kind)
        ka.unary_bcast(cb, tile(env), dst, kind)

    return unary_bcast


def _matmul(op: Op) -> OpFn:
    args: Any = op.args
    cb0, cb1, _, _, dst, transpose = args
    t0, t1 = _u32(op, 2), _u32(op, 3)

    def matmul(env: Any) -> None:
        ka.mm_init_short(cb0, cb1, transpose)
        ka.matmul_tiles(cb0, cb1, t0(env), t1(env), dst, transpose)

    return matmul


def _matmul_block(op: Op) -> OpFn:
    args: Any = op.args
    cb0, cb1, _, _, dst, tr, ct, rt, kt = args
    t0, t1 = _u32(op, 2), _u32(op, 3)

    def matmul_block(env: Any) -> None:
        ka.mm_block_init_short(cb0, cb1, tr, ct, rt, kt)
        ka.matmul_block(cb0, cb1, t0(env), t1(env), dst, tr, ct, rt, kt)

    return matmul_block


_POOL = {"sum": ka.PoolType.SUM, "max": ka.PoolType.MAX}
_RDIM = {"row": ka.ReduceDim.REDUCE_ROW, "col": ka.ReduceDim.REDUCE_COL}
_RDIM["scalar"] = ka.ReduceDim.REDUCE_SCALAR


def _reduce(op: Op) -> OpFn:
    args: Any = op.args
    pool, dim, cb, scaler, _, dst = args
    p, d, tile = _POOL[str(pool)], _RDIM[str(dim)], _u32(op, 4)

    def reduce(env: Any) -> None:
        ka.reduce_init(cb, scaler, cb)
        ka.reduce_tile(cb, scaler, tile(env), 0, dst, p, d)

    return reduce


def _transpose(op: Op) -> OpFn:
    args: Any = op.args
    cb, dst, tile = args[0], args[2], _u32(op, 1)

    def transpose(env: Any) -> None:
        ka.transpose_wh_init_short(cb)
        ka.transpose_wh_tile(cb, tile(env), dst)

    return transpose


def _pack(op: Op) -> OpFn:
    args: Any = op.args
    dst, cb, slot = args[0], args[1], _u32(op, 2)  # pack_tile<true>: out of order
    return lambda env: ka.pack_tile(dst, cb, slot(env), True)


API_HANDLERS: dict[str, Callable[[Op], OpFn]] = {
    "cb.reserve_back": _cb_op(ka.cb_reserve_back),
    "cb.push_back": _cb_op(ka.cb_push_back),
    "cb.wait_front": _cb_op(ka.cb_wait_front),
    "cb.pop_front": _cb_op(ka.cb_pop_front),
    "noc.read_page": _page(ka.noc_async_read_page),
    "noc.write_page": _page(ka.noc_async_write_page),
    "noc.read_barrier": lambda op: _call(ka.noc_async_read_barrier),
    "noc.write_barrier": lambda op: _call(ka.noc_async_write_barrier),
    "noc.write": _noc_write,
    "noc.write_mcast": _noc_write_mcast,
    "noc.inline_write": _inline_write,
    "sem.wait": _sem_wait,
    "sem.set": _sem_set,
    "sem.inc": _sem_inc,
    "sem.set_remote": _sem_set_remote,
    "sem.set_mcast": _sem_set_mcast,
    "compute.init": lambda op: _call(ka.compute_kernel_hw_startup, *op.args),
    "tile_regs.acquire": lambda op: _call(ka.tile_regs_acquire),
    "tile_regs.commit": lambda op: _call(ka.tile_regs_commit),
    "tile_regs.wait": lambda op: _call(ka.tile_regs_wait),
    "tile_regs.release": lambda op: _call(ka.tile_regs_release),
    "copy_tile": _copy,
    "binary_tiles": _binary,
    "binary_dest_reuse": _reuse,
    "sfpu": _sfpu,
    "sfpu_binary": _sfpu_binary,
    "fill_tile": _fill,
    "unary_bcast": _unary_bcast,
    "matmul_tiles": _matmul,
    "matmul_block": _matmul_block,
    "reduce_tile": _reduce,
    "transpose_tile": _transpose,
    "pack_tile": _pack,
    "pack_l1_acc": lambda op: _call(ka.pack_reconfig_l1_acc, op.args[0]),
}
"""Kernel-API op code -> compiler of one op into a closure."""
