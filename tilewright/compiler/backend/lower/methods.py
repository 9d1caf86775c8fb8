"""The call tables: which callables and methods kernel code may use, and how each lowers.

``function_table()`` maps id(callable) to its lowering for the TT-Lang functions
(``ttl.copy``, ``ttl.node``, ``ttl.grid_size``, ``ttl.signpost``, every ``ttl.math`` /
``ttl.block`` op of the registry and the top-level ``ttl.matmul`` / ``ttl.add`` ...)
and the few Python builtins that have a meaning in kernel code.  ``METHODS`` maps
(kind of value, method name) for DFBs, blocks, transfer handles, semaphores and pipe
nets.  ``print`` lowers to a DPRINT (``lower/prints.py``).  Functions with a clear
reason not to compile (``ttl.GroupTransfer``,
raw element access, external calls for now) are listed with that reason.
"""

from __future__ import annotations

import ast
import builtins
import sys
import warnings
from collections.abc import Callable

from tilewright.compiler.backend.lower.calls import (
    grid_size,
    node_coords,
    not_compilable,
    scalar_builtin,
    signpost,
    static_value,
)
from tilewright.compiler.backend.lower.dataflow import copy, remote_sem_op, sem_op, wait_handle
from tilewright.compiler.backend.lower.extern import extern_call
from tilewright.compiler.backend.lower.pipes import net_method
from tilewright.compiler.backend.lower.prints import debug_print
from tilewright.compiler.backend.lower.protocol import (
    accumulate,
    acquire,
    block_of,
    block_op,
    legacy_release,
    release,
    store,
)
from tilewright.compiler.backend.lower.values import (
    BlockRef,
    DFBRef,
    ExprRef,
    FuncRef,
    HandleRef,
    HelperRef,
    MethodRef,
    NetRef,
    RemoteSemRef,
    Scalar,
    SemRef,
    Static,
    Value,
)
from tilewright.compiler.backend.lower.violations import holds, violated
from tilewright.device.formats import data_type_name
from tilewright.device.ops import REGISTRY, get_op
from tilewright.errors import TilewrightError
from tilewright.kir.ir import Const
from tilewright.lang import block as lblock
from tilewright.lang import copy as lcopy
from tilewright.lang import declare, misc
from tilewright.lang import math as lmath
from tilewright.lang import pipes as lpipes
from tilewright.lang import raw as lang_raw
from tilewright.lang.blockstate import State
from tilewright.lang.declare import parse_dtype
from tilewright.lang.extern import surface
from tilewright.lang.rules import dfb as dfb_rules
from tilewright.lang.rules import sync as sync_rules
from tilewright.lazy import lazy_import

# The raw lowering (and the raw front end and tracer it uses) loads at the first
# ttl.raw.call in compiled kernel code: most operations make none (issue 22).
raw_lower = lazy_import("tilewright.compiler.raw.lower")

__all__ = ["call", "function_table", "METHODS"]


def _math_op(name: str) -> Callable:
    """A registry op called as a function: block operands, then parameters."""
    spec = get_op(name)

    def lower(lw, node: ast.Call) -> Value:
        arity = spec.arity
        if len(node.args) < arity:
            raise lw.fail(f"{spec.qualified_name} takes {arity} block operand(s)", node)
        operands = [lw.expr(a) for a in node.args[:arity]]
        extra = [_param(lw, a) for a in node.args[arity:]]
        params = {k.arg: _param(lw, k.value) for k in node.keywords}
        return block_op(lw, name, operands, extra, params, node)

    return lower


def _param(lw, node: ast.expr) -> Value:
    value = static_value(lw, node)
    return Static(value) if not hasattr(value, "ty") else _expr_value(value)


def _expr_value(e) -> Value:
    return Scalar(e)


def _fill(lw, node: ast.Call) -> Value:
    """``ttl.block.fill(value, shape=...)``: no block operand."""
    extra = [_param(lw, a) for a in node.args]
    params = {k.arg: _param(lw, k.value) for k in node.keywords}
    return block_op(lw, "fill", [], extra, params, node)


def _legacy_fill(lw, node: ast.Call) -> Value:
    """The 1.1.1 ``ttl.math.fill(out_blk, value)``: as the interpreter defines it,
    ``ttl.block.fill(value, shape=out_blk.shape, tile=out_blk.tile)``; ``out_blk`` gives
    only its shape and tile (no read of its data, so no block-state step)."""
    if len(node.args) != 2 or node.keywords:
        raise lw.fail("ttl.math.fill(out_blk, value) takes exactly a block and a value", node)
    ref = lw.expr(node.args[0])
    if not isinstance(ref, BlockRef):
        raise lw.fail("ttl.math.fill(out_blk, value) whose out_blk is not a block", node)
    _deprecated(lw, "ttl.math.fill(out_blk, value) is the 1.1.1 form; use ttl.block.fill", node)
    dfb = block_of(lw, ref).dfb
    params = {"shape": Static(tuple(dfb.shape)), "tile": Static(tuple(dfb.tile))}
    return block_op(lw, "fill", [], [_param(lw, node.args[1])], params, node)


def _typecast(lw, node: ast.Call) -> Value:
    """``ttl.math.typecast(x, dtype)``: to float32 its operand (the interpreter's
    ``typecast`` is a copy, and the compiled DST holds float32), as to bfloat16 a block read
    from a bfloat16 DFB (its values are bf16 already); to bfloat16 of anything else
    tt-metal's ``typecast_tile<Float32, Float16_b>``, which rounds to nearest even as the
    registry's ``typecast`` (``tile_ops.typecast_tile_values``, read by both engines).
    Block-float targets quantise as a store would, which the compiled expression does not
    carry -- refused."""
    dtypes = node.args[1:] + [k.value for k in node.keywords if k.arg == "dtype"]
    if len(node.args) < 1 or len(dtypes) != 1 or any(k.arg != "dtype" for k in node.keywords):
        raise lw.fail("ttl.math.typecast(x, dtype) takes exactly a block and a dtype", node)
    if not _compute_only(lw, dfb_rules.expression("typecast")):
        return ExprRef(None)
    value = lw.expr(node.args[0])
    try:
        name = data_type_name(parse_dtype(static_value(lw, dtypes[0]), "ttl.math.typecast: dtype"))
    except TilewrightError as exc:
        raise lw.fail(
            f"ttl.math.typecast with a dtype the interpreter rejects ({exc.message})", node
        ) from None
    if not isinstance(value, (BlockRef, ExprRef)):
        raise lw.fail("ttl.math.typecast of something that is not a block expression", node)
    if name == "float32":
        return value
    if name == "bfloat16" and isinstance(value, BlockRef):
        if block_of(lw, value).dfb.data_format == "Float16_b":
            return value
    if name == "bfloat16":
        return block_op(lw, "typecast", [value], [], {"dtype": Static(name)}, node)
    raise lw.fail(
        f"ttl.math.typecast to {name}: a block-float target quantises as a store would, "
        "which the compiled expression does not carry",
        node,
    )


def _compute_only(lw, what: str) -> bool:
    return holds(lw, dfb_rules.check_compute_only, what, lw.kin.name, lw.kin.kind == "compute")


def _deprecated(lw, message: str, node: ast.expr) -> None:
    """The interpreter's DeprecationWarning for a legacy spelling, at the user's line
    (attributed to ``__main__`` when the kernel is the program's, as the interpreter's is)."""
    main = sys.modules.get("__main__")
    module = "__main__" if getattr(main, "__file__", None) == lw.file else None
    warnings.warn_explicit(message, DeprecationWarning, lw.file, node.lineno, module=module)


def _slice(lw, node: ast.Call) -> Value:
    """``slice(a, b)`` with compile-time bounds (node ranges of pipes and semaphores)."""
    if node.keywords:
        raise lw.fail("keyword arguments to slice()", node)
    args = [static_value(lw, a) for a in node.args]
    if any(a is not None and not isinstance(a, int) for a in args):
        raise lw.fail("a slice with run-time bounds", node)
    return Static(slice(*args))


def _copy(lw, node: ast.Call) -> Value:
    return copy(lw, node)


def _raw_call(lw, node: ast.Call) -> Value:
    return raw_lower.raw_call(lw, node)


GROUP_TRANSFER = (
    "ttl.GroupTransfer (a group wait of transfers): tt-lang's compiler does not build it "
    "either -- a simulator-only feature (reference A.6); wait each transfer handle instead"
)
WAIT_ANY = (
    "ttl.wait_any: the request it completes is known only at run time, while the lowering "
    "follows each block's state at compile time (the other requests' blocks stay pending)"
)


def function_table() -> dict[int, Callable]:
    table: dict[int, Callable] = {
        id(lcopy.copy): _copy,
        id(declare.node): node_coords,
        id(declare.grid_size): grid_size,
        id(misc.signpost): signpost,
        id(builtins.print): debug_print,
        id(builtins.range): not_compilable("range() outside a for statement"),
        id(misc.static_range): not_compilable("ttl.static_range() outside a for statement"),
        id(lcopy.GroupTransfer): not_compilable(GROUP_TRANSFER),
        id(lpipes.wait_any): not_compilable(WAIT_ANY),
        id(misc.raw_element_read): not_compilable("ttl.raw_element_read"),
        id(misc.raw_element_write): not_compilable("ttl.raw_element_write"),
        id(misc.read_index): not_compilable("ttl.read_index"),
        id(surface.call_extern_func): extern_call,
        id(lang_raw.call): _raw_call,
        id(lmath.typecast): _typecast,
        id(lmath.broadcast): not_compilable("the legacy ttl.math.broadcast(x, out_blk, dims=)"),
        id(lmath.fill): _legacy_fill,
        id(lblock.fill): _fill,
        id(builtins.slice): _slice,
    }
    for name in ("min", "max", "abs", "int", "float", "bool", "len"):
        table[id(getattr(builtins, name))] = scalar_builtin(name)
    for module in (lmath, lblock):
        for name in module.__all__:
            obj = getattr(module, name)
            if id(obj) in table:
                continue
            if name in REGISTRY and getattr(obj, "__name__", "") == name:
                table[id(obj)] = _math_op(name)
    for name in ("matmul", "add", "sub", "mul", "div"):
        table.setdefault(id(getattr(lmath, name)), _math_op(name))
    for moved in ("transpose", "where", "mask", "mask_posinf", "squeeze", "unsqueeze"):
        table[id(getattr(lmath, moved))] = not_compilable(f"the legacy ttl.math.{moved}")
    for name in ("reduce_sum", "reduce_max"):
        table[id(getattr(lmath, name))] = _math_op(name)
    return table


def call(lw, node: ast.Call) -> Value:
    if any(isinstance(a, ast.Starred) for a in node.args) or any(
        k.arg is None for k in node.keywords
    ):
        raise lw.fail("a call with * / ** unpacking", node)
    fn = lw.expr(node.func)
    if isinstance(fn, (FuncRef, HelperRef)):
        if node.keywords:
            raise lw.fail(f"keyword arguments to '{fn.node.name}'", node)
        return lw.inline(fn, [lw.expr(a) for a in node.args], node)
    if isinstance(fn, MethodRef):
        handler = METHODS.get((type(fn.owner), fn.name))
        if handler is None:
            raise lw.fail(f"the method '{fn.name}' in compiled kernel code", node)
        return handler(lw, fn.owner, node)
    if isinstance(fn, Static):
        handler = _functions().get(id(fn.obj))
        if handler is not None:
            return handler(lw, node)
        what = getattr(fn.obj, "__qualname__", None) or getattr(fn.obj, "__name__", repr(fn.obj))
        raise lw.fail(f"a call to '{what}' in compiled kernel code", node)
    raise lw.fail("calling this value", node)


_FUNCTIONS: dict[int, Callable] = {}


def _functions() -> dict[int, Callable]:
    """id(callable) -> the function lowering a call to it (built on first use)."""
    if not _FUNCTIONS:
        _FUNCTIONS.update(function_table())
    return _FUNCTIONS


# -- methods -----------------------------------------------------------------------------------


def _acquire(reserve: bool) -> Callable:
    def lower(lw, dfb: DFBRef, node: ast.Call) -> Value:
        side = dfb_rules.RESERVE if reserve else dfb_rules.WAIT
        keywords = [str(k.arg) for k in node.keywords]
        if not holds(lw, dfb_rules.check_acquire_args, side, len(node.args), keywords):
            return Static(None)
        return acquire(lw, dfb.dfb, reserve, node)

    return lower


def _legacy_release(push: bool) -> Callable:
    def lower(lw, dfb: DFBRef, node: ast.Call) -> Value:
        if node.args or node.keywords:
            raise lw.fail("the legacy DFB push() / pop() take no arguments", node)
        legacy_release(lw, dfb.dfb, push)
        return Static(None)

    return lower


def _release(push: bool) -> Callable:
    def lower(lw, blk: BlockRef, node: ast.Call) -> Value:
        if node.args or any(k.arg != "kernel" for k in node.keywords):
            raise lw.fail(f"{'push' if push else 'pop'}() takes only kernel=", node)
        release(lw, blk, push, declared_unused=bool(node.keywords))
        return Static(None)

    return lower


def _store(lw, blk: BlockRef, node: ast.Call) -> Value:
    if len(node.args) != 1:
        raise lw.fail("store() takes one block expression", node)
    value = lw.expr(node.args[0])
    acc = False
    for k in node.keywords:
        if k.arg != "acc":
            raise lw.fail(f"store() got the keyword '{k.arg}'", node)
        flag = lw.scalar(k.value)

        if not isinstance(flag, Const):
            raise lw.fail("store(acc=...) with a run-time flag", node)
        acc = bool(flag.value)
    if acc and _accumulates(lw, blk, node):
        accumulate(lw, blk, value, node)
    else:
        store(lw, blk, value, node)
    return Static(None)


def _accumulates(lw, blk: BlockRef, node: ast.Call) -> bool:
    """The legacy ``store(expr, acc=True)`` (spec < 0.12) accumulates into what earlier stores
    wrote; the first store into a fresh reserve (MW) assigns, as the interpreter does."""
    held = block_of(lw, blk)
    fresh = {
        state == State.MW
        for on, states in zip(lw.tracker.active, held.states)
        if on
        for state, _ in states
    }
    if len(fresh) > 1:
        raise lw.fail(
            f"store(acc=True) into {held.describe()} assigns or accumulates depending on the "
            "path taken (the first store into a fresh reserve assigns)",
            node,
        )
    return fresh != {True}


def _wait(lw, h: HandleRef, node: ast.Call) -> Value:
    if node.args or node.keywords:
        raise lw.fail("wait() takes no arguments", node)
    wait_handle(lw, h.handle, node)
    return Static(None)


def _sem(name: str) -> Callable:
    def lower(lw, sem: SemRef, node: ast.Call) -> Value:
        return sem_op(lw, sem, name, node)

    return lower


def _remote(lw, sem: SemRef, node: ast.Call, multicast: bool) -> Value:
    """``sem.get_remote(node)`` / ``sem.get_remote_multicast(range)`` with static arguments
    (the interpreter's own checks, ``lang.rules.sync``: a bad node is an ``InterfaceError``,
    which makes the kernel not compilable; ``--engine auto`` interprets it)."""
    grid = lw.world.grid
    args = [static_value(lw, a) for a in node.args]
    kwargs = {k.arg: static_value(lw, k.value) for k in node.keywords}
    try:
        if multicast:
            rng = args[0] if args else kwargs.get("range")
            lo, hi = sync_rules.remote_range(rng, grid, "Semaphore.get_remote_multicast")
            return RemoteSemRef(sem, lo, hi, True)
        where = args[0] if args else kwargs.get("node")
        xy = sync_rules.remote_node(where, grid, "Semaphore.get_remote")
        return RemoteSemRef(sem, xy, xy, False)
    except TilewrightError as exc:
        violated(lw, exc)  # an InterfaceError: not compilable (raises)
        return Static(None)


def _remote_op(name: str) -> Callable:
    def lower(lw, rs: RemoteSemRef, node: ast.Call) -> Value:
        return remote_sem_op(lw, rs, name, node)

    return lower


def _net(name: str) -> Callable:
    def lower(lw, net: NetRef, node: ast.Call) -> Value:
        return net_method(lw, net, name, node)

    return lower


METHODS: dict[tuple[type, str], Callable] = {
    (DFBRef, "reserve"): _acquire(True),
    (DFBRef, "wait"): _acquire(False),
    (DFBRef, "push"): _legacy_release(True),
    (DFBRef, "pop"): _legacy_release(False),
    (BlockRef, "push"): _release(True),
    (BlockRef, "pop"): _release(False),
    (BlockRef, "store"): _store,
    (HandleRef, "wait"): _wait,
    (SemRef, "set"): _sem("set"),
    (SemRef, "wait_eq"): _sem("wait_eq"),
    (SemRef, "wait_ge"): _sem("wait_ge"),
    (SemRef, "get_remote"): lambda lw, s, n: _remote(lw, s, n, False),
    (SemRef, "get_remote_multicast"): lambda lw, s, n: _remote(lw, s, n, True),
    (RemoteSemRef, "set"): _remote_op("set"),
    (RemoteSemRef, "inc"): _remote_op("inc"),
    (NetRef, "if_src"): _net("if_src"),
    (NetRef, "if_dst"): _net("if_dst"),
    (NetRef, "is_src"): _net("is_src"),
    (NetRef, "is_dst"): _net("is_dst"),
    (NetRef, "is_active"): _net("is_active"),
    (NetRef, "destination_count"): _net("destination_count"),
}
