"""The builder ops of ``ttl.raw``: what a ``@ttl.raw.ir`` body calls to emit kernel IR.

Each function appends one op (or a structured region) to the active trace
(:mod:`.trace`); each is a tt-metal kernel-API call at the level of the kernel IR:

* control flow and scalars: ``for_``, ``if_`` / ``else_``, ``while_``, ``const``,
  ``local`` (``x.set(v)``), ``cast``, ``core_x`` / ``core_y``; Python operators on traced
  values;
* the DFB protocol: ``dfb_reserve`` / ``dfb_push`` / ``dfb_wait`` / ``dfb_pop`` with tile
  counts (``cb_reserve_back`` ...), ``read_ptr`` / ``write_ptr`` (L1 addresses);
* tile math on the DST registers (compute kernels): ``tile_regs_acquire`` / ``commit`` /
  ``wait`` / ``release``, ``copy_tile`` (DFB tile -> DST), ``add_tiles`` / ``sub_tiles`` /
  ``mul_tiles`` (two DFB tiles -> DST), ``sfpu(name, dst, *params)`` and its shorthands
  (``exp``, ``relu``, ``mul_scalar`` ...), ``sfpu_binary``, ``fill_tile``, ``pack_tile``
  (DST -> DFB tile);
* data movement: ``read_page`` / ``write_page`` through a TensorAccessor parameter,
  ``read_barrier`` / ``write_barrier``, semaphores (``semaphore``, ``sem_wait``,
  ``sem_set``, ``sem_inc``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tilewright.compiler.raw.function import RawIRError
from tilewright.compiler.raw.trace import (
    AccessorHandle,
    DFBHandle,
    Local,
    Val,
    _wrong_operand,
    active,
    expr_of,
    user_loc,
)
from tilewright.kir.ir import Cast, Const, Intrinsic, Ty
from tilewright.kir.optable import BINARY, SFPU, SFPU_BINARY
from tilewright.lang.raw_types import RawType, ir_type

__all__ = [
    "for_",
    "if_",
    "else_",
    "while_",
    "const",
    "local",
    "cast",
    "core_x",
    "core_y",
    "dfb_reserve",
    "dfb_push",
    "dfb_wait",
    "dfb_pop",
    "read_ptr",
    "write_ptr",
    "tile_regs_acquire",
    "tile_regs_commit",
    "tile_regs_wait",
    "tile_regs_release",
    "copy_tile",
    "add_tiles",
    "sub_tiles",
    "mul_tiles",
    "sfpu",
    "sfpu_binary",
    "fill_tile",
    "pack_tile",
    "exp",
    "relu",
    "mul_scalar",
    "add_scalar",
    "read_page",
    "write_page",
    "read_barrier",
    "write_barrier",
    "semaphore",
    "sem_wait",
    "sem_set",
    "sem_inc",
]


def _dfb(x: object) -> int:
    if not isinstance(x, DFBHandle):
        raise _wrong_operand(x, "a DFB parameter")
    return x.cb


def _tiles(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        what = "a traced value" if isinstance(n, Val) else repr(n)
        raise RawIRError(
            f"tile counts of DFB operations are static positive ints (they are the protocol the "
            f"compiler checks), got {what}",
            loc=user_loc(),
        )
    return n


def _u32(x: object) -> object:
    return expr_of(x, Ty.U32)


# -- control flow and scalars ----------------------------------------------------------------


@contextmanager
def for_(start: object, stop: object | None = None, step: int = 1) -> Iterator[Val]:
    """``for i in range(start, stop, step)`` (``for_(n)`` counts from 0); yields ``i``."""
    t = active("for_")
    if stop is None:
        start, stop = 0, start
    if isinstance(step, bool) or not isinstance(step, int) or step == 0:
        raise RawIRError(
            f"raw.for_ step must be a nonzero Python int, got {step!r}", loc=user_loc()
        )
    lo, hi = expr_of(start), expr_of(stop)
    for e in (lo, hi):
        if not e.ty.is_int:
            raise RawIRError(f"raw.for_ bounds are integers, got a {e.ty}", loc=user_loc())
    var = t.fresh("i", Ty.I64)
    lo = lo if lo.ty is Ty.I64 else Cast(lo, Ty.I64)
    hi = hi if hi.ty is Ty.I64 else Cast(hi, Ty.I64)
    with t.region("raw.for_") as body:
        yield Val(var)
    t.emit("for", var, lo, hi, step, regions=(tuple(body),))


def _cond(cond: object) -> object:
    e = expr_of(cond)
    if e.ty is not Ty.BOOL:
        raise RawIRError(
            f"a condition is a bool value (a comparison), got a {e.ty}", loc=user_loc()
        )
    return e


@contextmanager
def if_(cond: object) -> Iterator[None]:
    """``if cond:`` around the ops built in the block (``raw.else_()`` may follow)."""
    t = active("if_")
    c = _cond(cond)
    with t.region("raw.if_") as body:
        yield
    t.emit("if", c, regions=(tuple(body), ()))


@contextmanager
def else_() -> Iterator[None]:
    """The ``else`` branch of the ``raw.if_`` block just before it."""
    t = active("else_")
    ops = t.b._stack[-1]
    if not ops or ops[-1].code != "if" or ops[-1].regions[1]:
        raise RawIRError("raw.else_() must follow a raw.if_ block directly", loc=user_loc())
    first = ops.pop()
    with t.region("raw.else_") as body:
        yield
    t.b.loc = first.loc
    t.b.op("if", *first.args, regions=(first.regions[0], tuple(body)))


@contextmanager
def while_(cond: object) -> Iterator[None]:
    """``while cond:`` -- ``cond`` is re-evaluated each iteration (use ``raw.local``)."""
    t = active("while_")
    c = _cond(cond)
    with t.region("raw.while_") as body:
        yield
    t.emit("while", c, regions=(tuple(body),))


def const(value: int | float, type: RawType) -> Val:
    """A constant of scalar type ``type``."""
    active("const")
    ty = ir_type(type)
    return Val(Const(float(value) if ty.is_float else int(value), ty))


def local(init: object, type: RawType) -> Local:
    """A mutable local of scalar type ``type``, initialised to ``init`` (``x.set(v)``)."""
    t = active("local")
    var = t.fresh("v", ir_type(type))
    t.emit("set", var, expr_of(init, var.ty))
    return Local(var)


def cast(x: object, type: RawType) -> Val:
    """``static_cast`` of a scalar to ``type``."""
    active("cast")
    e = expr_of(x)
    ty = ir_type(type)
    return Val(e if e.ty is ty else Cast(e, ty))


def core_x() -> Val:
    """The node's logical x coordinate (``get_absolute_logical_x()``), u32."""
    active("core_x")
    return Val(Intrinsic("logical_x", (), Ty.U32))


def core_y() -> Val:
    active("core_y")
    return Val(Intrinsic("logical_y", (), Ty.U32))


# -- the DFB protocol ------------------------------------------------------------------------


def dfb_reserve(dfb: DFBHandle, tiles: int) -> None:
    """``cb_reserve_back(dfb, tiles)``: block until ``tiles`` tiles are free at the back."""
    active("dfb_reserve").emit("cb.reserve_back", _dfb(dfb), _tiles(tiles))


def dfb_push(dfb: DFBHandle, tiles: int) -> None:
    """``cb_push_back(dfb, tiles)``: publish ``tiles`` written tiles."""
    active("dfb_push").emit("cb.push_back", _dfb(dfb), _tiles(tiles))


def dfb_wait(dfb: DFBHandle, tiles: int) -> None:
    """``cb_wait_front(dfb, tiles)``: block until ``tiles`` tiles are filled at the front."""
    active("dfb_wait").emit("cb.wait_front", _dfb(dfb), _tiles(tiles))


def dfb_pop(dfb: DFBHandle, tiles: int) -> None:
    """``cb_pop_front(dfb, tiles)``: free ``tiles`` consumed tiles."""
    active("dfb_pop").emit("cb.pop_front", _dfb(dfb), _tiles(tiles))


def read_ptr(dfb: DFBHandle) -> Val:
    """``get_read_ptr(dfb)``: L1 address of the front tile (u32)."""
    active("read_ptr")
    return Val(Intrinsic("read_ptr", (Const(_dfb(dfb), Ty.U32),), Ty.U32))


def write_ptr(dfb: DFBHandle) -> Val:
    """``get_write_ptr(dfb)``: L1 address of the back tile (u32)."""
    active("write_ptr")
    return Val(Intrinsic("write_ptr", (Const(_dfb(dfb), Ty.U32),), Ty.U32))


# -- tile math on DST (compute) --------------------------------------------------------------


def tile_regs_acquire() -> None:
    active("tile_regs_acquire").emit("tile_regs.acquire")


def tile_regs_commit() -> None:
    active("tile_regs_commit").emit("tile_regs.commit")


def tile_regs_wait() -> None:
    active("tile_regs_wait").emit("tile_regs.wait")


def tile_regs_release() -> None:
    active("tile_regs_release").emit("tile_regs.release")


def copy_tile(dfb: DFBHandle, tile: object, dst: int) -> None:
    """DST[dst] = tile ``tile`` of ``dfb``'s front (``copy_tile``)."""
    t = active("copy_tile")
    t.emit("copy_tile", _dfb(dfb), _u32(tile), t.dst(dst), 0)


def _binary(op: str):
    def fn(a: DFBHandle, b: DFBHandle, tile_a: object, tile_b: object, dst: int) -> None:
        t = active(f"{op}_tiles")
        t.emit("binary_tiles", op, "none", _dfb(a), _dfb(b), _u32(tile_a), _u32(tile_b), t.dst(dst))

    fn.__name__ = fn.__qualname__ = f"{op}_tiles"
    fn.__doc__ = f"DST[dst] = a[tile_a] {op} b[tile_b] (``{op}_tiles``, FPU)."
    return fn


add_tiles = _binary(BINARY["add"])
sub_tiles = _binary(BINARY["sub"])
mul_tiles = _binary(BINARY["mul"])


def sfpu(name: str, dst: int, *params: object) -> None:
    """SFPU op ``name`` in place on DST[dst] (``<name>_tile_init(); <name>_tile(dst, ...)``)."""
    t = active("sfpu")
    row = SFPU.get(name)
    if row is None:
        raise RawIRError(
            f"raw.sfpu: unknown SFPU op '{name}' (known: {', '.join(sorted(SFPU))})",
            loc=user_loc(),
        )
    kinds = row[2]
    if len(params) != len(kinds):
        raise RawIRError(
            f"raw.sfpu('{name}') takes {len(kinds)} parameter(s), got {len(params)}", loc=user_loc()
        )
    exprs = tuple(expr_of(p, Ty.F32 if k == "f" else Ty.I64) for p, k in zip(params, kinds))
    t.emit("sfpu", name, t.dst(dst), exprs)


def exp(dst: int) -> None:
    """DST[dst] = exp(DST[dst])."""
    sfpu("exp", dst)


def relu(dst: int) -> None:
    """DST[dst] = max(DST[dst], 0)."""
    sfpu("relu", dst)


def mul_scalar(dst: int, factor: object) -> None:
    """DST[dst] = DST[dst] * factor (scalar times tile)."""
    sfpu("mul_scalar", dst, factor)


def add_scalar(dst: int, value: object) -> None:
    """DST[dst] = DST[dst] + value."""
    sfpu("add_scalar", dst, value)


def sfpu_binary(name: str, dst0: int, dst1: int, out: int) -> None:
    """DST[out] = DST[dst0] <name> DST[dst1] (SFPU binary: add, sub, mul, div, max, min)."""
    t = active("sfpu_binary")
    if name not in SFPU_BINARY:
        raise RawIRError(
            f"raw.sfpu_binary: unknown op '{name}' (known: {', '.join(sorted(SFPU_BINARY))})",
            loc=user_loc(),
        )
    t.emit("sfpu_binary", name, t.dst(dst0), t.dst(dst1), t.dst(out))


def fill_tile(dst: int, value: object) -> None:
    """DST[dst] = value everywhere."""
    t = active("fill_tile")
    t.emit("fill_tile", t.dst(dst), expr_of(value, Ty.F32))


def pack_tile(dst: int, dfb: DFBHandle, slot: object = 0) -> None:
    """Tile ``slot`` of ``dfb``'s back = DST[dst] (``pack_tile``)."""
    t = active("pack_tile")
    t.emit("pack_tile", t.dst(dst), _dfb(dfb), _u32(slot))


# -- data movement ---------------------------------------------------------------------------


def _accessor(x: object) -> str:
    if not isinstance(x, AccessorHandle):
        raise _wrong_operand(x, "a TensorAccessor parameter")
    return x.accessor


def read_page(tensor: AccessorHandle, page: object, l1: object) -> None:
    """``noc_async_read_page(page, tensor, l1)``: page ``page`` of the tensor into L1."""
    active("read_page").emit("noc.read_page", _accessor(tensor), _u32(page), _u32(l1))


def write_page(tensor: AccessorHandle, page: object, l1: object) -> None:
    """``noc_async_write_page(page, tensor, l1)``: L1 into page ``page`` of the tensor."""
    active("write_page").emit("noc.write_page", _accessor(tensor), _u32(page), _u32(l1))


def read_barrier() -> None:
    active("read_barrier").emit("noc.read_barrier")


def write_barrier() -> None:
    active("write_barrier").emit("noc.write_barrier")


def semaphore(sem_id: object) -> Val:
    """``get_semaphore(id)``: the L1 address of program semaphore ``id``."""
    active("semaphore")
    return Val(Intrinsic("semaphore", (_u32(sem_id),), Ty.U32))  # type: ignore[arg-type]


def sem_wait(addr: object, value: object, *, at_least: bool = False) -> None:
    """``noc_semaphore_wait`` (``noc_semaphore_wait_min`` with ``at_least``)."""
    active("sem_wait").emit("sem.wait", _u32(addr), _u32(value), "ge" if at_least else "eq")


def sem_set(addr: object, value: object) -> None:
    active("sem_set").emit("sem.set", _u32(addr), _u32(value))


def sem_inc(x: object, y: object, addr: object, value: object) -> None:
    """``noc_semaphore_inc(get_noc_addr(x, y, addr), value)``."""
    active("sem_inc").emit("sem.inc", _u32(x), _u32(y), _u32(addr), _u32(value))
