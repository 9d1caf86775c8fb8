"""The kernel-IR interpreter: the Python engine runs IR ops on the running core.

A raw IR function (``@ttl.raw.ir``) is kernel IR; the native engine emits it as C++,
the Python engine runs it here.  :func:`run` executes ops on the core whose kernel is
running now, through :mod:`tilewright.device.kernel_api` -- the same functions a Python
tt-metal kernel calls -- with the meaning of the C++ the emitter writes: every op code's
row in :data:`.optable.OPS` has its interpreter rule (``run``) beside its C++ form, and
the rule calls the kernel-API functions that C++ calls, in the same order with the same
arguments; scalar expressions follow the one scalar table (:mod:`.scalar`, compiled by
:mod:`.interp_scalar`).  The differential tests (``tests/kir/test_interp*.py``) run each
kernel through both engines and compare the output bytes.

Ops compile once into closures (``fn(env) -> status``), cached per op tuple; a closure
returns ``None``, :data:`BREAK` or :data:`CONTINUE`, which the enclosing loop consumes.
An op with no Python form (``extern.call``) is rejected with the op and rule named,
before anything runs.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from tilewright.device import kernel_api as ka
from tilewright.errors import KernelError, TilewrightError
from tilewright.kir.interp_scalar import CONVERT, compile_expr, unsupported
from tilewright.kir.ir import KIND_COMPUTE, CBDecl, Function, Kernel, Op, Var
from tilewright.kir.opdef import BREAK, CONTINUE, OpFn
from tilewright.kir.optable import OPS

__all__ = [
    "Env",
    "run",
    "eval_expr",
    "kernel_env",
    "python_kernel",
    "BREAK",
    "CONTINUE",
]


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

    def bind(self, var: Var, value: int | float | bool) -> None:
        """Set ``var`` as C++ passes a value to a parameter of its type (ints wrap, ``float``
        rounds to float32): the interpreter reads values already in their type."""
        self.values[var.name] = CONVERT[var.ty.value](value)


# -- compiling ops: each row's interpreter rule ------------------------------------------------


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


class _Runner:
    """What the rows' interpreter rules may ask of the interpreter (``opdef.Runner``)."""

    @staticmethod
    def block(ops: tuple[Op, ...]) -> OpFn:
        return _block(ops)

    @staticmethod
    def call(fn: Function, values: dict[str, Any], env: Env) -> Any:
        """A static inline function's body on ``env``'s CBs, accessors and runtime args,
        with an environment of its own (``values``: its parameters and locals)."""
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
        run(fn.body, sub)
        return eval_expr(fn.result, sub) if fn.result is not None else None


_RUNNER = _Runner()


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
    row = OPS.get(op.code)
    if row is None:
        raise unsupported("this op code: it is not in the op table", "raw-ir-unknown-op", op)
    fn = row.run(op, _RUNNER)
    if fn is None or row.jump:
        return fn
    return _located(fn, op)


# -- entry points -------------------------------------------------------------------------------

_CACHE: OrderedDict[int, tuple[object, Any]] = OrderedDict()
_CACHE_SIZE = 512


_CACHE_LOCK = threading.Lock()


def _cached(key: object, make: Callable[[], Any]) -> Any:
    """``make()`` cached by the identity of ``key`` (frozen IR: hashing a whole op tree on
    every call would cost as much as running it); the entry keeps ``key`` alive, so an id
    is never reused while cached.  Engines of several devices may run in threads."""
    entry = _CACHE.get(id(key))
    if entry is not None and entry[0] is key:
        return entry[1]
    value = make()
    with _CACHE_LOCK:
        _CACHE[id(key)] = (key, value)
        while len(_CACHE) > _CACHE_SIZE:
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
