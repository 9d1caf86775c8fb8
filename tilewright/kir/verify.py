"""The kernel IR verifier: every rule a kernel must keep before it is emitted.

Rules (each failure is an :class:`~tilewright.errors.IRVerifyError` whose message is
the whole kernel printed with the offending op marked ``>>>``, located at the op's
user line):

1. the op code exists (``optable.OPS``) and may run on the kernel's kind;
2. operands match the table: count, kinds, expression types; locals are declared,
   runtime arguments exist, CB indices are the kernel's, DST indices lie below its
   DST capacity, accessors are declared;
3. regions: ``for`` / ``while`` one, ``if`` two, others none; ``break`` /
   ``continue`` only inside a loop;
4. the DST handshake: math and SFPU ops only between ``tile_regs.acquire`` and
   ``tile_regs.commit``, packs only between ``tile_regs.wait`` and
   ``tile_regs.release``; a loop body and both branches of an ``if`` leave the
   handshake where they found it;
5. CB page counts are positive and within the CB's pages (cumulative counts, as
   ``cb_reserve_back`` / ``cb_wait_front`` take them).
"""

from __future__ import annotations

import dataclasses

from tilewright.errors import IRVerifyError
from tilewright.kir.ir import (
    Arg,
    BinOp,
    Cast,
    Const,
    Function,
    Intrinsic,
    Kernel,
    Op,
    Ty,
    UnOp,
    Var,
    seq,
)
from tilewright.kir.optable import INTRINSICS, OPS
from tilewright.kir.printer import print_kernel

__all__ = ["verify", "expr_type"]

_MATH = frozenset(
    {
        "copy_tile",
        "binary_tiles",
        "binary_dest_reuse",
        "sfpu",
        "sfpu_binary",
        "fill_tile",
        "unary_bcast",
        "matmul_tiles",
        "matmul_block",
        "reduce_tile",
        "transpose_tile",
    }
)
_PACK = frozenset({"pack_tile"})
# DST handshake: op -> (state it needs, state after)
_HANDSHAKE = {
    "tile_regs.acquire": ("idle", "math"),
    "tile_regs.commit": ("math", "committed"),
    "tile_regs.wait": ("committed", "pack"),
    "tile_regs.release": ("pack", "idle"),
}
_COMPARE = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
_LOGIC = frozenset({"and", "or"})


class _Fail(Exception):
    def __init__(self, op: Op, message: str) -> None:
        super().__init__(message)
        self.op = op
        self.message = message


def expr_type(e: object, kernel: Kernel, op: Op) -> Ty:
    """The type of expression ``e`` in ``kernel`` (a _Fail naming ``op`` if ill-formed)."""
    if isinstance(e, Const):
        return e.ty
    if isinstance(e, Var):
        declared = _locals(kernel).get(e.name)
        if declared is None:
            raise _Fail(op, f"local %{e.name} is not declared")
        if declared is not e.ty:
            raise _Fail(op, f"local %{e.name} is {declared}, used as {e.ty}")
        return e.ty
    if isinstance(e, Arg):
        if not 0 <= e.index < len(kernel.args):
            raise _Fail(
                op, f"runtime argument rt[{e.index}] does not exist ({len(kernel.args)} args)"
            )
        return e.ty
    if isinstance(e, BinOp):
        a, b = expr_type(e.a, kernel, op), expr_type(e.b, kernel, op)
        if e.op in _LOGIC:
            if a is not Ty.BOOL or b is not Ty.BOOL or e.ty is not Ty.BOOL:
                raise _Fail(op, f"'{e.op}' takes and gives bool, got {a}, {b} -> {e.ty}")
        elif e.op in _COMPARE:
            if e.ty is not Ty.BOOL or (a.is_float != b.is_float):
                raise _Fail(op, f"comparison '{e.op}' of {a} and {b} must give bool of like types")
        elif a is not e.ty or b is not e.ty:
            raise _Fail(op, f"'{e.op}' of {a} and {b} gives {e.ty}: operand types must equal it")
        return e.ty
    if isinstance(e, UnOp):
        a = expr_type(e.a, kernel, op)
        if e.op == "not" and (a is not Ty.BOOL or e.ty is not Ty.BOOL):
            raise _Fail(op, "'not' takes and gives bool")
        if e.op == "neg" and a is not e.ty:
            raise _Fail(op, "'neg' keeps its operand's type")
        return e.ty
    if isinstance(e, Intrinsic):
        info = INTRINSICS.get(e.name)
        if info is None:
            raise _Fail(op, f"unknown intrinsic @{e.name}")
        if kernel.kind not in info.kinds:
            raise _Fail(op, f"@{e.name} does not run on {kernel.kind} kernels")
        if len(e.args) != len(info.args):
            raise _Fail(op, f"@{e.name} takes {len(info.args)} argument(s)")
        for arg, want in zip(e.args, info.args):
            got = expr_type(arg, kernel, op)
            if got is not want:
                raise _Fail(op, f"@{e.name} argument is {got}, expected {want}")
        if e.ty is not info.ty:
            raise _Fail(op, f"@{e.name} gives {info.ty}")
        return e.ty
    if isinstance(e, Cast):
        expr_type(e.a, kernel, op)
        return e.ty
    raise _Fail(op, f"operand {e!r} is not an expression")


_CURRENT: list[tuple[Kernel, dict[str, Ty]]] = []


def _locals(kernel: Kernel) -> dict[str, Ty]:
    """The kernel's locals by name (computed once per verify call)."""
    if _CURRENT and _CURRENT[-1][0] is kernel:
        return _CURRENT[-1][1]
    return {v.name: v.ty for v in kernel.locals}


def _check_operand(kind: str, value: object, kernel: Kernel, op: Op, name: str) -> None:
    base, _, sub = kind.partition(":")
    if base == "e":
        ty = expr_type(value, kernel, op)
        ok = (
            not sub
            or (sub == "int" and ty.is_int)
            or (sub == "num" and (ty.is_int or ty.is_float))
            or sub == ty.value
        )
        if not ok:
            raise _Fail(op, f"operand {name} is {ty}, expected {sub}")
    elif base == "cb":
        if not isinstance(value, int) or kernel.cb(value) is None:
            raise _Fail(
                op, f"operand {name}: circular buffer {value!r} is not declared by the kernel"
            )
    elif base == "dst":
        if not isinstance(value, int) or not 0 <= value < kernel.dst_tiles:
            raise _Fail(
                op,
                f"operand {name}: DST index {value!r} is outside the {kernel.dst_tiles} DST tiles "
                "of one acquire",
            )
    elif base == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            raise _Fail(op, f"operand {name} must be a static int, got {value!r}")
    elif base == "float":
        if not isinstance(value, (int, float)):
            raise _Fail(op, f"operand {name} must be a static number, got {value!r}")
    elif base == "str":
        if not isinstance(value, str):
            raise _Fail(op, f"operand {name} must be a string, got {value!r}")
    elif base == "var":
        if not isinstance(value, Var):
            raise _Fail(op, f"operand {name} must be a local, got {value!r}")
        expr_type(value, kernel, op)
    elif base == "ex*":
        if not isinstance(value, tuple):
            raise _Fail(op, f"operand {name} must be a tuple of expressions")
        for item in value:
            expr_type(item, kernel, op)
    elif base == "arg*":
        if not isinstance(value, tuple):
            raise _Fail(op, f"operand {name} must be a tuple of arguments")
        for item in value:
            if isinstance(item, str):
                if all(a.name != item for a in kernel.accessors):
                    raise _Fail(op, f"accessor {item!r} is not declared")
            else:
                expr_type(item, kernel, op)
    elif base == "str*":
        if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
            raise _Fail(op, f"operand {name} must be a tuple of strings")


def _check_op(op: Op, kernel: Kernel, in_loop: bool) -> None:
    info = OPS.get(op.code)
    if info is None:
        raise _Fail(op, f"unknown op '{op.code}'")
    if kernel.kind not in info.kinds:
        raise _Fail(op, f"'{op.code}' does not run on {kernel.kind} kernels")
    if len(op.args) != len(info.operands):
        raise _Fail(op, f"'{op.code}' takes {len(info.operands)} operand(s), got {len(op.args)}")
    for (name, kind), value in zip(info.operands, op.args):
        _check_operand(kind, value, kernel, op, name)
    if len(op.regions) != info.regions:
        raise _Fail(op, f"'{op.code}' has {info.regions} region(s), got {len(op.regions)}")
    if op.code in ("break", "continue") and not in_loop:
        raise _Fail(op, f"'{op.code}' outside a loop")
    if info.effect is not None:
        cb = kernel.cb(op.args[0])  # type: ignore[arg-type]
        pages = op.args[1]
        if cb is not None and (not isinstance(pages, int) or not 0 < pages <= cb.num_pages):
            raise _Fail(
                op,
                f"'{op.code}' of {pages!r} pages: CB {cb.index} '{cb.name}' has {cb.num_pages} pages",
            )
    if op.code == "set":
        var, value = op.args
        got = expr_type(value, kernel, op)
        if isinstance(var, Var) and got is not var.ty:
            raise _Fail(op, f"%{var.name} is {var.ty}, assigned a {got}")
    if op.code == "matmul_block":
        dst, ct, rt = op.args[4], op.args[6], op.args[7]
        last = int(dst) + int(ct) * int(rt) - 1  # type: ignore[call-overload]
        if last >= kernel.dst_tiles:
            raise _Fail(
                op,
                f"matmul_block writes DST tiles up to {last}, beyond the {kernel.dst_tiles} of one acquire",
            )
    if op.code == "for" and op.args[3] == 0:
        raise _Fail(op, "a for loop's step must not be 0")
    if op.code in ("noc.read_page", "noc.write_page"):
        if all(a.name != op.args[0] for a in kernel.accessors):
            raise _Fail(op, f"accessor {op.args[0]!r} is not declared")
    if op.code == "raw.call":
        _check_raw_call(op, kernel)
    if op.code == "extern.call":
        result = op.args[4]
        if result and result not in _locals(kernel):
            raise _Fail(op, f"result local %{result} is not declared")
        if len(seq(op.args[2])) != len(seq(op.args[3])):
            raise _Fail(op, "extern.call has one C++ type per argument")


def _check_raw_call(op: Op, kernel: Kernel) -> None:
    """A call of a static inline function: declared, scalar arguments of the parameters'
    types, one declared accessor per accessor parameter, a result local of its type."""
    name, args, accessors, result = op.args
    fn = kernel.function(str(name))
    if fn is None:
        raise _Fail(op, f"function {name!r} is not declared by the kernel")
    if len(seq(args)) != len(fn.params):
        raise _Fail(op, f"{name} takes {len(fn.params)} scalar argument(s), got {len(seq(args))}")
    for a, p in zip(seq(args), fn.params):
        got = expr_type(a, kernel, op)
        if got is not p.ty:
            raise _Fail(op, f"argument for %{p.name} of {name} is {got}, expected {p.ty}")
    if len(seq(accessors)) != len(fn.accessors):
        raise _Fail(op, f"{name} takes {len(fn.accessors)} accessor(s)")
    for acc in seq(accessors):
        if all(a.name != acc for a in kernel.accessors):
            raise _Fail(op, f"accessor {acc!r} is not declared")
    if result:
        ty = _locals(kernel).get(str(result))
        if ty is None:
            raise _Fail(op, f"result local %{result} is not declared")
        if fn.result is None or fn.result.ty is not ty:
            raise _Fail(op, f"result local %{result} is {ty}; {name} returns {fn.result}")


def _verify_function(kernel: Kernel, fn: Function) -> None:
    """A function body is checked as a kernel of its own (the kernel's CBs, accessors, DST
    capacity; its parameters and locals): it starts and ends with DST released."""
    verify(
        dataclasses.replace(
            kernel,
            name=f"{kernel.name}::{fn.name}",
            locals=fn.params + fn.locals,
            body=fn.body,
            functions=(),
        )
    )


def _walk(ops: tuple[Op, ...], kernel: Kernel, state: str, in_loop: bool) -> str:
    """Check ``ops``; the DST handshake state after them."""
    for op in ops:
        _check_op(op, kernel, in_loop)
        step = _HANDSHAKE.get(op.code)
        if step is not None:
            need, after = step
            if state != need:
                raise _Fail(op, f"'{op.code}' in DST state '{state}'; it needs '{need}'")
            state = after
        elif op.code in _MATH and state != "math":
            raise _Fail(
                op, f"'{op.code}' outside tile_regs_acquire .. tile_regs_commit (state '{state}')"
            )
        elif op.code in _PACK and state != "pack":
            raise _Fail(
                op, f"'{op.code}' outside tile_regs_wait .. tile_regs_release (state '{state}')"
            )
        if op.code in ("for", "while"):
            end = _walk(op.regions[0], kernel, state, True)
            if end != state:
                raise _Fail(op, f"the loop body moves the DST handshake from '{state}' to '{end}'")
        elif op.code == "if":
            a = _walk(op.regions[0], kernel, state, in_loop)
            b = _walk(op.regions[1], kernel, state, in_loop)
            if a != b:
                raise _Fail(op, f"the branches leave the DST handshake in '{a}' and '{b}'")
            state = a
    return state


def verify(kernel: Kernel) -> Kernel:
    """Check every rule of the module docstring; return ``kernel`` (an IRVerifyError if not)."""
    names = [v.name for v in kernel.locals]
    _CURRENT.append((kernel, {v.name: v.ty for v in kernel.locals}))
    try:
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise _Fail(Op("comment", (f"local %{dup}",)), f"local %{dup} is declared twice")
        end = _walk(kernel.body, kernel, "idle", False)
        if end != "idle" and kernel.body:
            raise _Fail(kernel.body[-1], f"the kernel ends in DST state '{end}'; release DST first")
    except _Fail as fail:
        text = print_kernel(kernel, mark=fail.op, note=fail.message)
        raise IRVerifyError(
            f"kernel IR of '{kernel.name}' is invalid: {fail.message}\n{text}", loc=fail.op.loc
        ) from None
    finally:
        _CURRENT.pop()
    for fn in kernel.functions:
        _verify_function(kernel, fn)
    return kernel
