"""The kernel IR verifier: every rule a kernel must keep before it is emitted.

Rules (each failure is an :class:`~tilewright.errors.IRVerifyError` whose message is
the whole kernel printed with the offending op marked ``>>>``, located at the op's
user line):

Every rule reads the op's row (``optable.OPS``) and the scalar table (:mod:`.scalar`):

1. the op code exists and may run on the kernel's kind;
2. operands match the table: count, kinds, expression types; locals are declared,
   runtime arguments exist, CB indices are the kernel's, DST indices lie below its
   DST capacity, accessors are declared;
3. regions: as many as the row's ``regions`` names; a jump (``break`` /
   ``continue``) only inside a ``loop`` region;
4. the DST handshake: ops of the ``math`` phase only between ``tile_regs.acquire`` and
   ``tile_regs.commit``, of the ``pack`` phase only between ``tile_regs.wait`` and
   ``tile_regs.release``; a loop body and both branches of an ``if`` leave the
   handshake where they found it;
5. CB page counts are positive and within the CB's pages (cumulative counts, as
   ``cb_reserve_back`` / ``cb_wait_front`` take them);
6. the row's own rule (``check``): an assignment's type, a loop step, a declared
   accessor or function, a DST range, a known tile op ...
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
)
from tilewright.kir.optable import OPS
from tilewright.kir.printer import print_kernel
from tilewright.kir.scalar import INTRINSICS, OPERATORS, type_error

__all__ = ["verify", "expr_type"]


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
    if isinstance(e, (BinOp, UnOp)):
        row = OPERATORS.get(e.op)
        arity = 2 if isinstance(e, BinOp) else 1
        if row is None or row.arity != arity:
            raise _Fail(op, f"unknown {'binary' if arity == 2 else 'unary'} operator '{e.op}'")
        a = expr_type(e.a, kernel, op)
        b = expr_type(e.b, kernel, op) if isinstance(e, BinOp) else None
        problem = type_error(row, a, b, e.ty)
        if problem is not None:
            raise _Fail(op, problem)
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


class _Checker:
    """What a row's verifier rule may ask (``opdef.Checker``), for one op."""

    __slots__ = ("kernel", "op")

    def __init__(self, kernel: Kernel, op: Op) -> None:
        self.kernel, self.op = kernel, op

    def expr_type(self, e: object) -> Ty:
        return expr_type(e, self.kernel, self.op)

    def local(self, name: str) -> Ty | None:
        return _locals(self.kernel).get(name)

    def fail(self, message: str) -> Exception:
        return _Fail(self.op, message)


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
    row = OPS.get(op.code)
    if row is None:
        raise _Fail(op, f"unknown op '{op.code}'")
    if kernel.kind not in row.kinds:
        raise _Fail(op, f"'{op.code}' does not run on {kernel.kind} kernels")
    if len(op.args) != len(row.operands):
        raise _Fail(op, f"'{op.code}' takes {len(row.operands)} operand(s), got {len(op.args)}")
    for (name, kind), value in zip(row.operands, op.args):
        _check_operand(kind, value, kernel, op, name)
    if len(op.regions) != len(row.regions):
        raise _Fail(op, f"'{op.code}' has {len(row.regions)} region(s), got {len(op.regions)}")
    if row.jump and not in_loop:
        raise _Fail(op, f"'{op.code}' outside a loop")
    if row.effect is not None:
        cb = kernel.cb(op.args[0])  # type: ignore[arg-type]
        pages = op.args[1]
        if cb is not None and (not isinstance(pages, int) or not 0 < pages <= cb.num_pages):
            raise _Fail(
                op,
                f"'{op.code}' of {pages!r} pages: CB {cb.index} '{cb.name}' has {cb.num_pages} pages",
            )
    if row.check is not None:
        row.check(_Checker(kernel, op), op)


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
        row = OPS[op.code]
        if row.handshake is not None:
            need, after = row.handshake
            if state != need:
                raise _Fail(op, f"'{op.code}' in DST state '{state}'; it needs '{need}'")
            state = after
        elif row.phase == "math" and state != "math":
            raise _Fail(
                op, f"'{op.code}' outside tile_regs_acquire .. tile_regs_commit (state '{state}')"
            )
        elif row.phase == "pack" and state != "pack":
            raise _Fail(
                op, f"'{op.code}' outside tile_regs_wait .. tile_regs_release (state '{state}')"
            )
        ends = set()
        for role, region in zip(row.regions, op.regions):
            end = _walk(region, kernel, state, in_loop or role == "loop")
            if role == "loop" and end != state:
                raise _Fail(op, f"the loop body moves the DST handshake from '{state}' to '{end}'")
            ends.add(end)
        if "branch" in row.regions:
            if len(ends) > 1:
                a, b = (_walk(r, kernel, state, in_loop) for r in op.regions[:2])
                raise _Fail(op, f"the branches leave the DST handshake in '{a}' and '{b}'")
            state = ends.pop()
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
