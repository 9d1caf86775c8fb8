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
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

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
from tilewright.kir.interp_ops import API_HANDLERS, OpFn, operand
from tilewright.kir.interp_scalar import (
    CONVERT,
    coerce,
    compile_expr,
    unsupported,
)
from tilewright.kir.ir import KIND_COMPUTE, CBDecl, Function, Kernel, Op, Var, seq

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
    stop, start = operand(op, 2, ct), operand(op, 1, ct)
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
    cond = operand(op, 0, "bool")
    body = _block(op.regions[0])

    def while_(env: Env) -> None:
        while cond(env):
            if body(env) == BREAK:
                break
        return None

    return while_


def _if(op: Op) -> OpFn:
    cond = operand(op, 0, "bool")
    then, other = _block(op.regions[0]), _block(op.regions[1])
    return lambda env: then(env) if cond(env) else other(env)


def _set(op: Op) -> OpFn:
    var = op.args[0]
    assert isinstance(var, Var)
    name, value = var.name, operand(op, 1, var.ty.value)

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
    "extern.call": _extern,
    "raw.call": _raw_call,
    **API_HANDLERS,
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
    if fn is None or op.code in ("break", "continue"):
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
