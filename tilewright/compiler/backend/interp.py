"""The kernel-IR interpreter: the Python engine runs IR ops on the running core.

A raw IR function (``@ttl.raw.ir``) is kernel IR; the native engine emits it as C++
(:mod:`.emit`), the Python engine runs it here.  :func:`run` executes ops on the core
whose kernel is running now, through :mod:`tilewright.device.kernel_api` -- the same
functions a Python tt-metal kernel calls -- with the meaning of the C++ the emitter
writes: every op code of :data:`.optable.OPS` is a row of :data:`HANDLERS` that calls the
kernel-API functions its C++ calls, in the same order with the same arguments (SFPU
parameters as IEEE bits, ``pack_tile<true>`` out of order, ...); scalar expressions follow
C++'s types and conversions (:mod:`.interp_scalar`).  The differential tests
(``tests/compiler/backend/test_interp*.py``) run each kernel through both engines and
compare the output bytes.

Ops compile once into closures (``fn(env) -> status``), cached per op tuple; a closure
returns ``None``, :data:`BREAK` or :data:`CONTINUE`, which the enclosing loop consumes.
``extern.call`` has no Python form (it calls C++): it is rejected with the op and rule
named, before anything runs.
"""

from __future__ import annotations

import re
import struct
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from tilewright.compiler.backend.interp_scalar import (
    CONVERT,
    CType,
    ExprFn,
    coerce,
    compile_expr,
    unsupported,
)
from tilewright.compiler.backend.ir import KIND_COMPUTE, CBDecl, Function, Kernel, Op, Var, seq
from tilewright.compiler.backend.optable import BINARY, SFPU, SFPU_BINARY
from tilewright.device import kernel_api as ka
from tilewright.device.engine import current_run
from tilewright.device.noc import chips_with_tag
from tilewright.errors import (
    BlockStateError,
    DeviceError,
    DFBContractError,
    KernelError,
    NocError,
    TilewrightError,
)

__all__ = [
    "Env",
    "run",
    "eval_expr",
    "HANDLERS",
    "kernel_env",
    "python_kernel",
    "BREAK",
    "CONTINUE",
]

BREAK, CONTINUE = 1, 2

_F32BITS = struct.Struct("<f")

OpFn = Callable[["Env"], int | None]


class Env:
    """What running ops needs besides the core: locals, parameters, runtime args, accessors.

    ``values`` holds locals and parameters by :class:`~.ir.Var` name (``set`` and ``for``
    update it); ``cbs`` the declared circular buffers by index (the index is the core's
    CB index); ``accessors`` the Python kernel-API accessor object of each
    :class:`~.ir.AccessorDecl` name; ``args`` the runtime arguments :class:`~.ir.Arg`
    reads (``get_arg_val<uint32_t>``); ``functions`` the kernel's static inline functions
    by name (``raw.call``).
    """

    __slots__ = (
        "values",
        "kind",
        "cbs",
        "accessors",
        "args",
        "dst_tiles",
        "fp32_dest_acc",
        "functions",
    )

    def __init__(
        self,
        *,
        values: dict[str, int | float | bool] | None = None,
        kind: str = KIND_COMPUTE,
        cbs: dict[int, CBDecl] | None = None,
        accessors: dict[str, object] | None = None,
        args: Sequence[int] = (),
        dst_tiles: int = 0,
        fp32_dest_acc: bool = True,
        functions: dict[str, Function] | None = None,
    ) -> None:
        self.values = values if values is not None else {}
        self.kind = kind
        self.cbs = cbs if cbs is not None else {}
        self.accessors = accessors if accessors is not None else {}
        self.args = args
        self.dst_tiles = dst_tiles
        self.fp32_dest_acc = fp32_dest_acc
        self.functions = functions if functions is not None else {}


# -- operands -----------------------------------------------------------------------------------


def _e(op: Op, index: int, want: CType) -> ExprFn:
    """Operand ``index`` of ``op`` converted to the C++ parameter type ``want``."""
    fn, have = compile_expr(op.args[index], op)
    return coerce(fn, have, want)


def _u32(op: Op, index: int) -> ExprFn:
    return _e(op, index, "u32")


# -- control flow -------------------------------------------------------------------------------


def _block(ops: tuple[Op, ...]) -> OpFn:
    """One closure running ``ops`` in order, stopping at a break / continue status."""
    fns = [fn for fn in (_compile_op(op) for op in ops) if fn is not None]
    if not fns:
        return lambda env: None
    if len(fns) == 1:
        return fns[0]

    def block(env: Env) -> int | None:
        for fn in fns:
            status = fn(env)
            if status:
                return status
        return None

    return block


_LIMITS = {"i64": (-(1 << 63), (1 << 63) - 1), "u32": (0, (1 << 32) - 1), "u64": (0, (1 << 64) - 1)}


def _for(op: Op) -> OpFn:
    """``{ const T end = stop; for (T it = start; it < end; it += step) { var = it; body } }``."""
    var, _, _, step = op.args
    assert isinstance(var, Var) and isinstance(step, int)
    ct = var.ty.value
    stop, start = _e(op, 2, ct), _e(op, 1, ct)
    body = _block(op.regions[0])
    name = var.name
    conv = CONVERT[ct]
    lo, hi = _LIMITS.get(ct, (None, None))

    def loop_c(env: Env, it: Any, end: Any) -> None:
        """The C++ loop literally (floats, or an ``it += step`` that wraps)."""
        values = env.values
        while (it < end) if step > 0 else (it > end):
            values[name] = it
            if body(env) == BREAK:
                return
            it = conv(it + step)

    def for_(env: Env) -> None:
        end = stop(env)
        it = start(env)
        if lo is None or not (end - 1 + step <= hi if step > 0 else end + 1 + step >= lo):
            loop_c(env, it, end)
            return None
        values = env.values
        for i in range(it, end, step):
            values[name] = i
            if body(env) == BREAK:
                break
        return None

    return for_


def _while(op: Op) -> OpFn:
    cond = _e(op, 0, "bool")
    body = _block(op.regions[0])

    def while_(env: Env) -> None:
        while cond(env):
            if body(env) == BREAK:
                break
        return None

    return while_


def _if(op: Op) -> OpFn:
    cond = _e(op, 0, "bool")
    then, other = _block(op.regions[0]), _block(op.regions[1])
    return lambda env: then(env) if cond(env) else other(env)


def _set(op: Op) -> OpFn:
    var = op.args[0]
    assert isinstance(var, Var)
    name, value = var.name, _e(op, 1, var.ty.value)

    def set_(env: Env) -> None:
        env.values[name] = value(env)

    return set_


# -- fail / failf: the error the compiled kernel raises ---------------------------------------

_ERROR_CLASSES: dict[str, type[TilewrightError]] = {
    "KernelError": KernelError,
    "DFBContractError": DFBContractError,
    "NocError": NocError,
    "BlockStateError": BlockStateError,
    "DeviceError": DeviceError,
}
"""ttlang::ErrorClass (ttlang/support.h) -> the class native/driver.py raises for it."""

_PRINTF = re.compile(r"%([-+ #0]*\d*(?:\.\d+)?)(hh|h|ll|l|j|z|t)?([diouxXc%])|%")
# A long long argument read by a conversion without ll / l / j / z / t is its low 32 bits.
_PRINTF_VALUE = {
    "d": (True, "i32", "i64"),
    "i": (True, "i32", "i64"),
    "u": (True, "u32", "u64"),
    "o": (True, "u32", "u64"),
    "x": (True, "u32", "u64"),
    "X": (True, "u32", "u64"),
    "c": (True, "u32", "u32"),
}


def _names(text: str) -> str:
    """``{cb:N}`` and ``{chip:N}`` in a failure message, as the native driver names them."""
    if "{" not in text:
        return text
    run = current_run()
    cbs = getattr(run.core, "cbs", None) or []

    def cb_name(m: re.Match) -> str:
        i = int(m.group(1))
        cb = cbs[i] if 0 <= i < len(cbs) else None
        return cb.name if cb is not None else f"cb {i}"

    text = re.sub(r"\{cb:(\d+)\}", cb_name, text)
    num_chips = len(run.core.device.system_desc.chip_desc_indices)
    return re.sub(r"\{chip:(\d+)\}", lambda m: chips_with_tag(int(m.group(1)), num_chips), text)


def _error_class(op: Op) -> type[TilewrightError]:
    cls = _ERROR_CLASSES.get(str(op.args[0]))
    if cls is None:
        raise unsupported(
            f"error class {op.args[0]!r} (ttlang/support.h has {', '.join(_ERROR_CLASSES)})",
            "raw-ir-error-class",
            op,
        )
    return cls


def _fail(op: Op) -> OpFn:
    cls, message, loc = _error_class(op), str(op.args[1]), op.loc

    def fail(env: Env) -> None:
        raise cls(_names(message), loc=loc)

    return fail


def _failf(op: Op) -> OpFn:
    """``snprintf`` of the format into 512 bytes, each value a ``long long``."""
    cls, fmt, loc = _error_class(op), str(op.args[1]), op.loc
    values = [coerce(*compile_expr(v, op), "i64") for v in seq(op.args[2])]
    convs: list[Callable[[Any], Any]] = []

    def spec(m: re.Match) -> str:
        if m.group(0) == "%" or m.group(3) is None:
            raise unsupported(
                f"failf format {fmt!r}: only integer conversions (%lld, %llu, %llx, ...) "
                "print its long long values",
                "raw-ir-failf-format",
                op,
            )
        if m.group(3) == "%":
            return "%%"
        _, short, long = _PRINTF_VALUE[m.group(3)]
        convs.append(CONVERT[long if m.group(2) in ("ll", "l", "j", "z", "t") else short])
        return f"%{m.group(1)}{m.group(3)}"

    pyfmt = _PRINTF.sub(spec, fmt)
    if len(convs) != len(values):
        raise unsupported(
            f"failf format {fmt!r} with {len(values)} value(s): it converts {len(convs)}",
            "raw-ir-failf-format",
            op,
        )

    def failf(env: Env) -> None:
        text = pyfmt % tuple(c(v(env)) for c, v in zip(convs, values))
        raise cls(_names(text.encode()[:511].decode("utf-8", "replace")), loc=loc)

    return failf


def _raw_call(op: Op) -> OpFn:
    """A call of one of the kernel's static inline functions (a raw IR function): its body
    runs with an environment of its own -- parameters and locals -- on the caller's CBs,
    accessors and runtime arguments, as the C++ function does."""
    name, args, _accessors, result = op.args
    compiled = [compile_expr(a, op) for a in seq(args)]

    def call(env: Env) -> None:
        f = env.functions.get(str(name))
        if f is None:
            raise unsupported(f"function {name!r} is not declared by the kernel", "raw-ir-call", op)
        values: dict[str, int | float | bool] = {v.name: CONVERT[v.ty.value](0) for v in f.locals}
        for p, (fn, have) in zip(f.params, compiled):
            values[p.name] = coerce(fn, have, p.ty.value)(env)
        sub = Env(
            values=values,
            kind=env.kind,
            cbs=env.cbs,
            accessors=env.accessors,
            args=env.args,
            dst_tiles=env.dst_tiles,
            fp32_dest_acc=env.fp32_dest_acc,
            functions=env.functions,
        )
        run(f.body, sub)
        if result and f.result is not None:
            env.values[str(result)] = eval_expr(f.result, sub)

    return call


def _extern(op: Op) -> OpFn:
    raise unsupported(
        f"a call of the C++ function {op.args[0]!r}: the Python engine has no C++ to run",
        "raw-ir-extern",
        op,
    )


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
        return lambda env: fn(page(env), env.accessors[name], l1(env))

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

    def copy(env: Env) -> None:
        ka.copy_tile_to_dst_init_short(cb, transpose)
        ka.copy_tile(cb, tile(env), dst)

    return copy


def _binary(op: Op) -> OpFn:
    args: Any = op.args
    name, bcast, cb0, cb1, _, _, dst = args
    stem = BINARY[str(name)]
    if bcast == "none":
        init, call = getattr(ka, f"{stem}_tiles_init"), getattr(ka, f"{stem}_tiles")
    else:
        init = getattr(ka, f"{stem}_bcast_{bcast}_init_short")
        call = getattr(ka, f"{stem}_tiles_bcast_{bcast}")
    t0, t1 = _u32(op, 4), _u32(op, 5)

    def binary(env: Env) -> None:
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

    def dest_reuse(env: Env) -> None:
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
    entry = SFPU.get(str(name))
    if entry is None:
        raise unsupported(f"SFPU op {name!r}", "raw-ir-unknown-sfpu", op)
    fn, init = getattr(ka, entry[0]), getattr(ka, entry[1])
    ps = [_sfpu_param(op, p) for p in seq(params)]

    def sfpu(env: Env) -> None:
        init()
        fn(dst, *(p(env) for p in ps))

    return sfpu


def _sfpu_binary(op: Op) -> OpFn:
    args: Any = op.args
    name, d0, d1, od = args
    stem = SFPU_BINARY[str(name)]
    fn, init = getattr(ka, stem), getattr(ka, stem + "_init")

    def sfpu_binary(env: Env) -> None:
        init()
        fn(d0, d1, od)

    return sfpu_binary


def _fill(op: Op) -> OpFn:
    args: Any = op.args
    dst, value = args[0], _e(op, 1, "f32")  # fill_tile(dst, static_cast<float>(value))

    def fill(env: Env) -> None:
        ka.fill_tile_init()
        ka.fill_tile(dst, value(env))

    return fill


_BCAST = {"rows": ka.BroadcastType.ROW, "cols": ka.BroadcastType.COL}
_BCAST["scalar"] = ka.BroadcastType.SCALAR


def _unary_bcast(op: Op) -> OpFn:
    args: Any = op.args
    kind, cb, dst, tile = _BCAST[str(args[0])], args[1], args[3], _u32(op, 2)

    def unary_bcast(env: Env) -> None:
        ka.unary_bcast_init(cb, cb, kind)
        ka.unary_bcast(cb, tile(env), dst, kind)

    return unary_bcast


def _matmul(op: Op) -> OpFn:
    args: Any = op.args
    cb0, cb1, _, _, dst, transpose = args
    t0, t1 = _u32(op, 2), _u32(op, 3)

    def matmul(env: Env) -> None:
        ka.mm_init_short(cb0, cb1, transpose)
        ka.matmul_tiles(cb0, cb1, t0(env), t1(env), dst, transpose)

    return matmul


def _matmul_block(op: Op) -> OpFn:
    args: Any = op.args
    cb0, cb1, _, _, dst, tr, ct, rt, kt = args
    t0, t1 = _u32(op, 2), _u32(op, 3)

    def matmul_block(env: Env) -> None:
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

    def reduce(env: Env) -> None:
        ka.reduce_init(cb, scaler, cb)
        ka.reduce_tile(cb, scaler, tile(env), 0, dst, p, d)

    return reduce


def _transpose(op: Op) -> OpFn:
    args: Any = op.args
    cb, dst, tile = args[0], args[2], _u32(op, 1)

    def transpose(env: Env) -> None:
        ka.transpose_wh_init_short(cb)
        ka.transpose_wh_tile(cb, tile(env), dst)

    return transpose


def _pack(op: Op) -> OpFn:
    args: Any = op.args
    dst, cb, slot = args[0], args[1], _u32(op, 2)  # pack_tile<true>: out of order
    return lambda env: ka.pack_tile(dst, cb, slot(env), True)


HANDLERS: dict[str, Callable[[Op], OpFn | None]] = {
    "set": _set,
    "for": _for,
    "while": _while,
    "if": _if,
    "break": lambda op: lambda env: BREAK,
    "continue": lambda op: lambda env: CONTINUE,
    "fail": _fail,
    "failf": _failf,
    "comment": lambda op: None,
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
    "extern.call": _extern,
    "raw.call": _raw_call,
}
"""Op code -> compiler of one op into a closure (None: the op does nothing at run time)."""


def _located(fn: OpFn, op: Op) -> OpFn:
    """``fn`` whose kernel-API errors point at the op's user line (as the C++'s #line does)."""
    loc = op.loc
    if loc is None:
        return fn

    def at_line(env: Env) -> int | None:
        try:
            return fn(env)
        except TilewrightError as err:
            if err.loc is None:
                err.loc = loc
            raise

    return at_line


def _compile_op(op: Op) -> OpFn | None:
    make = HANDLERS.get(op.code)
    if make is None:
        raise unsupported("this op code: it has no interpreter handler", "raw-ir-unknown-op", op)
    fn = make(op)
    if fn is None or op.code in ("for", "while", "if", "break", "continue"):
        return fn
    return _located(fn, op)


# -- entry points -------------------------------------------------------------------------------

_CACHE: OrderedDict[int, tuple[object, Any]] = OrderedDict()
_CACHE_SIZE = 512


def _cached(key: object, make: Callable[[], Any]) -> Any:
    """``make()`` cached by the identity of ``key`` (frozen IR: hashing a whole op tree on
    every call would cost as much as running it)."""
    entry = _CACHE.get(id(key))
    if entry is not None and entry[0] is key:
        _CACHE.move_to_end(id(key))
        return entry[1]
    value = make()
    _CACHE[id(key)] = (key, value)
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return value


def run(ops: tuple[Op, ...], env: Env) -> None:
    """Execute ``ops`` on the running core (an error names the op's line)."""
    block = _cached(ops, lambda: _block(ops))
    status = block(env)
    if status:  # the verifier keeps break / continue inside loops
        raise KernelError("break / continue outside a loop in kernel IR", rule="raw-ir-break")


def eval_expr(e: Any, env: Env) -> int | float | bool:
    """The value of expression ``e`` (normalised to its C++ type)."""
    fn = _cached(e, lambda: compile_expr(e)[0])
    return fn(env)


def kernel_env(kernel: Kernel) -> Env:
    """The environment of ``kernel`` on the running core: locals zeroed (``T x = {}``),
    runtime arguments, and each accessor built as the emitted C++ builds it."""
    accessors: dict[str, object] = {}
    for acc in kernel.accessors:
        addr = ka.get_arg_val(acc.addr_arg)
        accessors[acc.name] = ka.TensorAccessor(ka.TensorAccessorArgs(acc.cta), addr, acc.page_size)
    return Env(
        values={v.name: CONVERT[v.ty.value](0) for v in kernel.locals},
        kind=kernel.kind,
        cbs={cb.index: cb for cb in kernel.cbs},
        accessors=accessors,
        args=[ka.get_arg_val(i) for i in range(len(kernel.args))],
        dst_tiles=kernel.dst_tiles,
        fp32_dest_acc=kernel.fp32_dest_acc,
        functions={f.name: f for f in kernel.functions},
    )


def python_kernel(kernel: Kernel) -> Callable[[], None]:
    """``kernel`` as a Python kernel function for a device ``Program`` (compiled at once, so
    an unsupported op is an error before the program runs)."""
    block = _cached(kernel.body, lambda: _block(kernel.body))

    def body() -> None:
        env = kernel_env(kernel)
        if block(env):
            raise KernelError("break / continue outside a loop in kernel IR", rule="raw-ir-break")

    body.__name__ = kernel.name
    return body
