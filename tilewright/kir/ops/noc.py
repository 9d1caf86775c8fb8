"""Data movement: tensor pages through accessors, NoC reads, writes and multicasts, semaphores.

Operands are ``uint32_t`` expressions (addresses, coordinates, sizes) converted as C++
converts them at the call; NoC addresses are built with ``get_noc_addr`` /
``get_noc_multicast_addr`` in the C++ and by the same kernel-API functions here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilewright.device import kernel_api as ka
from tilewright.kir.interp_scalar import ExprFn, operand, unsupported
from tilewright.kir.ir import Op
from tilewright.kir.opdef import DM, Checker, OpDef, OpFn, Runner, Writer, operands

__all__ = ["ROWS"]


def _u32(op: Op, index: int) -> ExprFn:
    return operand(op, index, "u32")


def _static(fn: Callable[..., Any]) -> Callable[[Op, Runner], OpFn]:
    """An op without operands: the call."""
    return lambda op, rt: lambda env: fn()


# -- pages through tensor accessors ------------------------------------------------------------


def _page(fn: Callable[..., None]) -> Callable[[Op, Runner], OpFn]:
    """noc_async_{read,write}_page(page, accessor, l1)."""

    def make(op: Op, rt: Runner) -> OpFn:
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


def _check_accessor(v: Checker, op: Op) -> None:
    if all(a.name != op.args[0] for a in v.kernel.accessors):
        raise v.fail(f"accessor {op.args[0]!r} is not declared")


# -- writes and multicasts ---------------------------------------------------------------------


def _noc_addr(op: Op, first: int) -> ExprFn:
    x, y, addr = (_u32(op, first + i) for i in range(3))
    return lambda env: ka.get_noc_addr(x(env), y(env), addr(env))


def _mcast_addr(op: Op, first: int) -> ExprFn:
    x0, y0, x1, y1, addr = (_u32(op, first + i) for i in range(5))
    return lambda env: ka.get_noc_multicast_addr(x0(env), y0(env), x1(env), y1(env), addr(env))


def _run_read(op: Op, rt: Runner) -> OpFn:
    at, dst, size = _noc_addr(op, 0), _u32(op, 3), _u32(op, 4)
    return lambda env: ka.noc_async_read(at(env), dst(env), size(env))


def _run_write(op: Op, rt: Runner) -> OpFn:
    src, at, size = _u32(op, 0), _noc_addr(op, 1), _u32(op, 4)
    return lambda env: ka.noc_async_write(src(env), at(env), size(env))


def _run_write_mcast(op: Op, rt: Runner) -> OpFn:
    args: Any = op.args
    src, mcast, size, dests = _u32(op, 0), _mcast_addr(op, 1), _u32(op, 6), args[7]
    return lambda env: ka.noc_async_write_multicast(src(env), mcast(env), size(env), dests)


def _run_inline_write(op: Op, rt: Runner) -> OpFn:
    at, value = _noc_addr(op, 0), _u32(op, 3)
    return lambda env: ka.noc_inline_dw_write(at(env), value(env))


# -- semaphores --------------------------------------------------------------------------------

_SEM_WAIT = {"eq": "noc_semaphore_wait", "ge": "noc_semaphore_wait_min"}


def _run_sem_wait(op: Op, rt: Runner) -> OpFn:
    fn = getattr(ka, _SEM_WAIT[str(op.args[2])])
    addr, value = _u32(op, 0), _u32(op, 1)
    return lambda env: fn(addr(env), value(env))


def _cpp_sem_wait(w: Writer, depth: int, op: Op) -> None:
    a = w.args(op)
    fn = _SEM_WAIT[str(op.args[2])]
    w.line(
        depth,
        f"{fn}(reinterpret_cast<volatile tt_l1_ptr uint32_t*>({a['addr']}), {a['value']});",
    )


def _check_sem_wait(v: Checker, op: Op) -> None:
    if op.args[2] not in _SEM_WAIT:
        raise v.fail(f"sem.wait mode {op.args[2]!r}: 'eq' or 'ge'")


def _run_sem_set(op: Op, rt: Runner) -> OpFn:
    addr, value = _u32(op, 0), _u32(op, 1)
    return lambda env: ka.noc_semaphore_set(addr(env), value(env))


def _run_sem_inc(op: Op, rt: Runner) -> OpFn:
    at, value = _noc_addr(op, 0), _u32(op, 3)
    return lambda env: ka.noc_semaphore_inc(at(env), value(env))


def _run_sem_set_remote(op: Op, rt: Runner) -> OpFn:
    src, at = _u32(op, 0), _noc_addr(op, 1)
    return lambda env: ka.noc_semaphore_set_remote(src(env), at(env))


def _run_sem_set_mcast(op: Op, rt: Runner) -> OpFn:
    args: Any = op.args
    src, mcast, dests = _u32(op, 0), _mcast_addr(op, 1), args[6]
    return lambda env: ka.noc_semaphore_set_multicast(src(env), mcast(env), dests)


_XY = ("x:e:u32", "y:e:u32")
_RECT = ("x0:e:u32", "y0:e:u32", "x1:e:u32", "y1:e:u32")
_MCAST = "get_noc_multicast_addr({x0}, {y0}, {x1}, {y1}, {%s})"

ROWS = (
    OpDef(
        "noc.read_page", operands("accessor:str", "page:e:u32", "l1:e:u32"),
        _page(ka.noc_async_read_page), "noc_async_read_page({page}, {accessor}, {l1});",
        DM, check=_check_accessor,
    ),
    OpDef(
        "noc.write_page", operands("accessor:str", "page:e:u32", "l1:e:u32"),
        _page(ka.noc_async_write_page), "noc_async_write_page({page}, {accessor}, {l1});",
        DM, check=_check_accessor,
    ),
    OpDef(
        "noc.read_barrier", (), _static(ka.noc_async_read_barrier),
        "noc_async_read_barrier();", DM,
    ),
    OpDef(
        "noc.write_barrier", (), _static(ka.noc_async_write_barrier),
        "noc_async_write_barrier();", DM,
    ),
    OpDef(
        "noc.read", operands(*_XY, "src:e:u32", "dst:e:u32", "size:e:u32"), _run_read,
        "noc_async_read(get_noc_addr({x}, {y}, {src}), {dst}, {size});", DM,
        doc="size bytes from L1 address src of node (x, y) to local L1 address dst",
    ),
    OpDef(
        "noc.write", operands("src:e:u32", *_XY, "dst:e:u32", "size:e:u32"), _run_write,
        "noc_async_write({src}, get_noc_addr({x}, {y}, {dst}), {size});", DM,
    ),
    OpDef(
        "noc.write_mcast", operands("src:e:u32", *_RECT, "dst:e:u32", "size:e:u32", "dests:int"),
        _run_write_mcast,
        "noc_async_write_multicast({src}, " + _MCAST % "dst" + ", {size}, {dests});", DM,
    ),
    OpDef(
        "noc.inline_write", operands(*_XY, "addr:e:u32", "value:e:u32"), _run_inline_write,
        "noc_inline_dw_write(get_noc_addr({x}, {y}, {addr}), {value});", DM,
    ),
    OpDef(
        "sem.wait", operands("addr:e:u32", "value:e:u32", "mode:str"), _run_sem_wait,
        _cpp_sem_wait, DM, check=_check_sem_wait,
        doc="noc_semaphore_wait (mode eq) / noc_semaphore_wait_min (mode ge)",
    ),
    OpDef(
        "sem.set", operands("addr:e:u32", "value:e:u32"), _run_sem_set,
        "noc_semaphore_set(reinterpret_cast<volatile tt_l1_ptr uint32_t*>({addr}), {value});",
        DM,
    ),
    OpDef(
        "sem.inc", operands(*_XY, "addr:e:u32", "value:e:u32"), _run_sem_inc,
        "noc_semaphore_inc(get_noc_addr({x}, {y}, {addr}), {value});", DM,
    ),
    OpDef(
        "sem.set_remote", operands("src:e:u32", *_XY, "addr:e:u32"), _run_sem_set_remote,
        "noc_semaphore_set_remote({src}, get_noc_addr({x}, {y}, {addr}));", DM,
    ),
    OpDef(
        "sem.set_mcast", operands("src:e:u32", *_RECT, "addr:e:u32", "dests:int"),
        _run_sem_set_mcast,
        "noc_semaphore_set_multicast({src}, " + _MCAST % "addr" + ", {dests});", DM,
    ),
)  # fmt: skip
