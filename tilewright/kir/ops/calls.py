"""Calls: of external C++ (``extern.call``, reference C.8) and of the kernel's ``static inline``
functions (``raw.call``: raw IR functions of ``ttl.raw``, one per call-site specialisation).

``extern.call`` has no Python form -- it calls C++ -- so its interpreter rule rejects it,
naming the op and the rule, before anything runs.  Its C++ announces the call to the run
time before and after it (``TTLANG_EXTERN_BEGIN`` / ``_CATCH`` / ``_END``, with the index
of the kernel's contract note), which checks the call's declared DFB contract as the
interpreter does.  ``raw.call`` runs the function's body
with an environment of its own (parameters and locals) on the caller's circular buffers,
accessors and runtime arguments, as the C++ function does; its DFB actions are the
function's, in place.
"""

from __future__ import annotations

from typing import Any

from tilewright.kir.interp_scalar import CONVERT, coerce, compile_expr, unsupported
from tilewright.kir.ir import Op, seq
from tilewright.kir.opdef import Checker, EffectWalker, OpDef, OpFn, Runner, Writer, operands
from tilewright.kir.scalar import CPP_TYPE

__all__ = ["ROWS"]


# -- extern.call --------------------------------------------------------------------------------


def _run_extern(op: Op, rt: Runner) -> OpFn:
    raise unsupported(
        f"a call of the C++ function {op.args[0]!r}: the Python engine has no C++ to run",
        "raw-ir-extern",
        op,
    )


def _cpp_extern(w: Writer, depth: int, op: Op) -> None:
    callee, template, args, types, result, rtype, contract = op.args
    targs = f"<{', '.join(seq(template))}>" if template else ""
    values = [
        str(x) if t == "accessor" else f"static_cast<{t}>({w.expr(x)})"
        for x, t in zip(seq(args), seq(types))
    ]
    call = f"{callee}{targs}({', '.join(values)})"
    w.line(depth, f"TTLANG_EXTERN_BEGIN({contract});")
    w.line(depth, "try {")
    if result:
        w.line(depth + 1, f"{result} = static_cast<int64_t>(static_cast<{rtype}>({call}));")
    else:
        w.line(depth + 1, f"{call};")
    w.line(depth, f"}} TTLANG_EXTERN_CATCH({contract})")
    w.line(depth, f"TTLANG_EXTERN_END({contract}, {result or 0});")


def _check_extern(v: Checker, op: Op) -> None:
    result = op.args[4]
    if result and v.local(str(result)) is None:
        raise v.fail(f"result local %{result} is not declared")
    if len(seq(op.args[2])) != len(seq(op.args[3])):
        raise v.fail("extern.call has one C++ type per argument")
    contract = op.args[6]
    if not isinstance(contract, int) or not 0 <= contract < len(v.kernel.contracts):
        raise v.fail(f"contract {op.args[6]} is not one of the kernel's contract notes")


# -- raw.call -----------------------------------------------------------------------------------


def _run_raw_call(op: Op, rt: Runner) -> OpFn:
    name, args, _accessors, result = op.args
    compiled = [compile_expr(a, op) for a in seq(args)]

    def call(env: Any) -> None:
        f = env.functions.get(str(name))
        if f is None:
            raise unsupported(f"function {name!r} is not declared by the kernel", "raw-ir-call", op)
        values: dict[str, Any] = {v.name: CONVERT[v.ty.value](0) for v in f.locals}
        for p, (fn, have) in zip(f.params, compiled):
            values[p.name] = coerce(fn, have, p.ty.value)(env)
        value = rt.call(f, values, env)
        if result and f.result is not None:
            env.values[str(result)] = value

    return call


def _cpp_raw_call(w: Writer, depth: int, op: Op) -> None:
    name, args, accessors, result = op.args
    fn = w.kernel.function(str(name))
    assert fn is not None
    values = [f"static_cast<{CPP_TYPE[p.ty]}>({w.expr(a)})" for a, p in zip(seq(args), fn.params)]
    call = f"{name}({', '.join(values + [str(a) for a in seq(accessors)])})"
    w.line(depth, f"{result} = {call};" if result else f"{call};")


def _check_raw_call(v: Checker, op: Op) -> None:
    """Declared, scalar arguments of the parameters' types, one declared accessor per accessor
    parameter, a result local of its type."""
    name, args, accessors, result = op.args
    fn = v.kernel.function(str(name))
    if fn is None:
        raise v.fail(f"function {name!r} is not declared by the kernel")
    if len(seq(args)) != len(fn.params):
        raise v.fail(f"{name} takes {len(fn.params)} scalar argument(s), got {len(seq(args))}")
    for a, p in zip(seq(args), fn.params):
        got = v.expr_type(a)
        if got is not p.ty:
            raise v.fail(f"argument for %{p.name} of {name} is {got}, expected {p.ty}")
    if len(seq(accessors)) != len(fn.accessors):
        raise v.fail(f"{name} takes {len(fn.accessors)} accessor(s)")
    for acc in seq(accessors):
        if all(a.name != acc for a in v.kernel.accessors):
            raise v.fail(f"accessor {acc!r} is not declared")
    if result:
        ty = v.local(str(result))
        if ty is None:
            raise v.fail(f"result local %{result} is not declared")
        if fn.result is None or fn.result.ty is not ty:
            raise v.fail(f"result local %{result} is {ty}; {name} returns {fn.result}")


def _effects_raw_call(op: Op, w: EffectWalker) -> None:
    w.walk(w.function(str(op.args[0])))  # the function's actions, in place


ROWS = (
    OpDef(
        "extern.call",
        operands(
            "callee:str", "template:str*", "args:arg*", "types:str*", "result:str",
            "result_type:str", "contract:int",
        ),
        _run_extern, _cpp_extern, check=_check_extern,
        doc="callee<template...>(args...): each argument an expression cast to its C++ type, or "
        "an accessor (type 'accessor'); the result ('' or a local) keeps result_type's value; "
        "contract: the kernel's note of the call, whose declared DFB contract the run time checks",
    ),
    OpDef(
        "raw.call", operands("function:str", "args:ex*", "accessors:str*", "result:str"),
        _run_raw_call, _cpp_raw_call, check=_check_raw_call, effects=_effects_raw_call,
        doc="call the kernel's static inline function (a raw IR function, ttl.raw) with its "
        "run-time scalar arguments and accessors; the result ('' or a local) keeps its value",
    ),
)  # fmt: skip
