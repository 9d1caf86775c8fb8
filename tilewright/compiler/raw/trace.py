"""Tracing a raw IR function: its body runs as plain Python and emits kernel-IR ops.

:func:`trace` binds the parameters of a :class:`~.function.RawIRFunction` for one call
site (DFB parameters to circular-buffer indices, compile-time scalars to constants,
run-time scalars to function parameters, tensor accessors to the kernel's accessors),
puts a :class:`_Trace` in scope and calls the body.  The op functions of ``ttl.raw``
(:mod:`.ops`) append ops through the trace's :class:`~tilewright.kir.builder.Builder`;
traced scalars are :class:`Val` objects whose Python operators build IR expressions.

Misuse is caught as the op is built, with the line *inside* the raw function: an op
the kernel kind cannot run, a DST index out of range, a DFB where a scalar belongs (or
the reverse), an unbalanced DST handshake, an op outside any trace, a traced value
used as a Python truth value.  The finished body is then verified
(:func:`~tilewright.kir.verify.verify`): a failure prints the function's IR with the
offending op marked.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from tilewright.compiler.raw.function import RawIRError, RawIRFunction
from tilewright.errors import SourceLoc, TilewrightError
from tilewright.kir.builder import Builder
from tilewright.kir.ir import (
    KIND_COMPUTE,
    AccessorDecl,
    BinOp,
    Cast,
    CBDecl,
    Const,
    Expr,
    Kernel,
    Op,
    Ty,
    UnOp,
    Var,
)
from tilewright.kir.optable import OPS
from tilewright.kir.verify import verify
from tilewright.lang.raw_types import RawType, ir_type

__all__ = [
    "Bind",
    "RawTrace",
    "Val",
    "DFBHandle",
    "AccessorHandle",
    "trace",
    "active",
    "user_loc",
]

_HERE = os.path.dirname(os.path.abspath(__file__))
_SKIP = (_HERE, os.path.dirname(os.path.abspath(contextlib.__file__)) + os.sep + "contextlib")
_KIND_WORDS = {"compute": "compute", "data_movement": "data-movement"}


def user_loc() -> SourceLoc | None:
    """The first frame outside this package (and contextlib): the raw function's line."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(_SKIP):
            return SourceLoc(name, frame.f_lineno)
        frame = frame.f_back  # type: ignore[assignment]
    return None


@dataclass(frozen=True, slots=True)
class Bind:
    """How one parameter is bound at a call site."""

    kind: str  # "dfb" (cb index) | "const" (folded value) | "param" (run time) | "accessor"
    value: object = None


@dataclass(frozen=True, slots=True)
class RawTrace:
    """A raw function traced for one call site (one specialisation)."""

    fn: RawIRFunction
    kind: str
    params: tuple[Var, ...]  # run-time scalar parameters, in signature order
    param_positions: tuple[int, ...]  # the call argument each of ``params`` comes from
    accessors: tuple[str, ...]  # the kernel accessors the function uses, as parameters
    locals: tuple[Var, ...]
    body: tuple[Op, ...]
    result: Expr | None

    @property
    def result_ty(self) -> Ty | None:
        return self.result.ty if self.result is not None else None


class DFBHandle:
    """A DFB parameter: a circular buffer index fixed by the call site."""

    __slots__ = ("name", "cb")

    def __init__(self, name: str, cb: int) -> None:
        self.name, self.cb = name, cb

    def __bool__(self) -> bool:
        raise RawIRError(f"DFB parameter '{self.name}' used as a truth value", loc=user_loc())

    def __repr__(self) -> str:
        return f"<DFB parameter {self.name}>"


class AccessorHandle:
    """A TensorAccessor parameter: the kernel's accessor of the call's tensor."""

    __slots__ = ("name", "accessor")

    def __init__(self, name: str, accessor: str) -> None:
        self.name, self.accessor = name, accessor

    def __repr__(self) -> str:
        return f"<TensorAccessor parameter {self.name}>"


def _wrong_operand(x: object, want: str) -> RawIRError:
    if isinstance(x, DFBHandle):
        got = f"DFB parameter '{x.name}'"
    elif isinstance(x, AccessorHandle):
        got = f"TensorAccessor parameter '{x.name}'"
    elif isinstance(x, Val):
        got = f"a traced {x.ty} scalar"
    else:
        got = f"{type(x).__name__} {x!r}"
    return RawIRError(f"{_op_name()}: expected {want}, got {got}", loc=user_loc())


def _op_name() -> str:
    """``raw.<op>`` of the op function being run (for messages)."""
    frame = sys._getframe(1)
    name = "raw"
    while frame is not None and frame.f_code.co_filename.startswith(_HERE):
        if not frame.f_code.co_name.startswith("_") and frame.f_code.co_filename.endswith("ops.py"):
            name = f"raw.{frame.f_code.co_name}"
        frame = frame.f_back  # type: ignore[assignment]
    return name


def expr_of(x: object, want: Ty | None = None) -> Expr:
    """A traced scalar or Python number as an IR expression (converted to ``want``)."""
    if isinstance(x, Val):
        e = x.expr
    elif isinstance(x, bool):
        e = Const(x, Ty.BOOL)
    elif isinstance(x, int):
        e = Const(x, want if want is not None and (want.is_int or want.is_float) else Ty.I64)
        if e.ty.is_float:
            e = Const(float(x), e.ty)
    elif isinstance(x, float):
        e = Const(x, want if want is not None and want.is_float else Ty.F32)
    else:
        raise _wrong_operand(x, "a scalar (a traced value or a Python number)")
    if want is not None and e.ty is not want:
        if e.ty.is_float != want.is_float and want is not Ty.BOOL:
            raise RawIRError(
                f"{_op_name()}: a {e.ty} value where a {want} is expected; convert it with "
                f"raw.cast(x, ...)",
                loc=user_loc(),
            )
        e = Cast(e, want)
    return e


class Val:
    """A traced scalar: Python operators build IR expressions."""

    __slots__ = ("expr",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, expr: Expr) -> None:
        self.expr = expr

    @property
    def ty(self) -> Ty:
        return self.expr.ty

    def __repr__(self) -> str:
        return f"<traced {self.expr.ty} value>"

    def __bool__(self) -> bool:
        raise RawIRError(
            "a traced value has no Python truth value (it is known only when the kernel runs); "
            "use raw.if_(cond) / raw.while_(cond) instead of if / while",
            loc=user_loc(),
        )

    def __index__(self) -> int:
        raise RawIRError(
            "a traced value is not a Python int (it is known only when the kernel runs); use "
            "raw.for_(start, stop) instead of range()",
            loc=user_loc(),
        )

    def _bin(self, other: object, op: str, swap: bool = False) -> Val:
        a = self.expr
        b = expr_of(other, a.ty) if not isinstance(other, Val) else other.expr
        if swap:
            a, b = b, a
        if a.ty is not b.ty:
            raise RawIRError(
                f"'{op}' of a {a.ty} and a {b.ty} value; convert one with raw.cast(x, ...)",
                loc=user_loc(),
            )
        if op in ("truediv",) and not a.ty.is_float:
            raise RawIRError("'/' of integers; use '//' (floor division)", loc=user_loc())
        if op in ("floordiv", "mod") and a.ty.is_float:
            raise RawIRError(f"'{op}' of floats; use '/'", loc=user_loc())
        ty = Ty.BOOL if op in ("eq", "ne", "lt", "le", "gt", "ge") else a.ty
        if op in ("and", "or") and a.ty is not Ty.BOOL:
            raise RawIRError(
                f"'{'&' if op == 'and' else '|'}' takes bool values (comparisons)", loc=user_loc()
            )
        return Val(BinOp(op, a, b, ty))

    def __add__(self, o: object) -> Val:
        return self._bin(o, "add")

    def __radd__(self, o: object) -> Val:
        return self._bin(o, "add", True)

    def __sub__(self, o: object) -> Val:
        return self._bin(o, "sub")

    def __rsub__(self, o: object) -> Val:
        return self._bin(o, "sub", True)

    def __mul__(self, o: object) -> Val:
        return self._bin(o, "mul")

    def __rmul__(self, o: object) -> Val:
        return self._bin(o, "mul", True)

    def __truediv__(self, o: object) -> Val:
        return self._bin(o, "truediv")

    def __rtruediv__(self, o: object) -> Val:
        return self._bin(o, "truediv", True)

    def __floordiv__(self, o: object) -> Val:
        return self._bin(o, "floordiv")

    def __rfloordiv__(self, o: object) -> Val:
        return self._bin(o, "floordiv", True)

    def __mod__(self, o: object) -> Val:
        return self._bin(o, "mod")

    def __rmod__(self, o: object) -> Val:
        return self._bin(o, "mod", True)

    def __lt__(self, o: object) -> Val:
        return self._bin(o, "lt")

    def __le__(self, o: object) -> Val:
        return self._bin(o, "le")

    def __gt__(self, o: object) -> Val:
        return self._bin(o, "gt")

    def __ge__(self, o: object) -> Val:
        return self._bin(o, "ge")

    def __eq__(self, o: object) -> Val:  # type: ignore[override]
        return self._bin(o, "eq")

    def __ne__(self, o: object) -> Val:  # type: ignore[override]
        return self._bin(o, "ne")

    def __and__(self, o: object) -> Val:
        return self._bin(o, "and")

    def __or__(self, o: object) -> Val:
        return self._bin(o, "or")

    def __invert__(self) -> Val:
        if self.expr.ty is not Ty.BOOL:
            raise RawIRError("'~' takes a bool value (a comparison)", loc=user_loc())
        return Val(UnOp("not", self.expr, Ty.BOOL))

    def __neg__(self) -> Val:
        return Val(UnOp("neg", self.expr, self.expr.ty))


class Local(Val):
    """A mutable local (``raw.local``): ``x.set(value)`` assigns it."""

    __slots__ = ()

    def set(self, value: object) -> None:
        var = self.expr
        assert isinstance(var, Var)
        active("set").emit("set", var, expr_of(value, var.ty))


@dataclass
class _Trace:
    """The state of one trace: builder, kind, DST capacity and handshake state."""

    fn: RawIRFunction
    kind: str
    dst_tiles: int
    b: Builder
    state: str = "idle"
    counter: int = 0
    accessors: dict[str, None] = field(default_factory=dict)

    def fresh(self, stem: str, ty: Ty) -> Var:
        self.counter += 1
        return self.b.local(f"{stem}{self.counter}", ty)

    def emit(self, code: str, *args: object, regions: tuple = ()) -> Op:
        """Append op ``code`` at the user's line, after the trace-time checks."""
        loc = user_loc()
        info = OPS[code]
        if self.kind not in info.kinds:
            where = " and ".join(_KIND_WORDS[k] for k in info.kinds)
            raise RawIRError(
                f"{_op_name()} runs on {where} kernels; '{self.fn.name}' is traced for a "
                f"{_KIND_WORDS[self.kind]} kernel",
                loc=loc,
            )
        step = info.handshake
        if step is not None:
            need, after = step
            if self.state != need:
                raise RawIRError(
                    f"{_op_name()} in DST state '{self.state}'; it needs '{need}' (the handshake is "
                    "tile_regs_acquire -> math -> tile_regs_commit -> tile_regs_wait -> pack -> "
                    "tile_regs_release)",
                    loc=loc,
                )
            self.state = after
        elif info.phase == "math" and self.state != "math":
            raise RawIRError(
                f"{_op_name()} outside tile_regs_acquire .. tile_regs_commit (DST state "
                f"'{self.state}')",
                loc=loc,
            )
        elif info.phase == "pack" and self.state != "pack":
            raise RawIRError(
                f"{_op_name()} outside tile_regs_wait .. tile_regs_release (DST state "
                f"'{self.state}')",
                loc=loc,
            )
        self.b.loc = loc
        return self.b.op(code, *args, regions=regions)

    def dst(self, index: object) -> int:
        if isinstance(index, bool) or not isinstance(index, int):
            raise RawIRError(
                f"{_op_name()}: a DST index is a Python int (static), got {type(index).__name__}",
                loc=user_loc(),
            )
        if not 0 <= index < self.dst_tiles:
            raise RawIRError(
                f"{_op_name()}: DST index {index} is outside the {self.dst_tiles} DST tiles of one "
                "acquire",
                loc=user_loc(),
            )
        return index

    @contextlib.contextmanager
    def region(self, what: str) -> Iterator[list[Op]]:
        """A nested region that must leave the DST handshake where it found it."""
        loc = user_loc()
        before = self.state
        with self.b._region() as body:
            yield body
        if self.state != before:
            raise RawIRError(
                f"the body of this {what} moves the DST handshake from '{before}' to "
                f"'{self.state}'; acquire and release DST within one iteration / branch",
                loc=loc,
            )


_ACTIVE: list[_Trace] = []


def active(what: str) -> _Trace:
    """The trace in scope (a RawIRError at the user's line if none is)."""
    if not _ACTIVE:
        raise RawIRError(
            f"raw.{what} is a builder op: it is valid only inside a @ttl.raw.ir function while it "
            "is traced (call the function with ttl.raw.call from a kernel)",
            loc=user_loc(),
        )
    return _ACTIVE[-1]


def trace(
    fn: RawIRFunction,
    kind: str,
    binds: Sequence[Bind],
    *,
    dst_tiles: int,
    cbs: tuple[CBDecl, ...] = (),
    accessors: tuple[AccessorDecl, ...] = (),
    source: str = "<raw>",
) -> RawTrace:
    """Run ``fn``'s body with ``binds`` for its parameters; the verified IR it built."""
    b = Builder(fn.name, kind, source=source, cbs=cbs, accessors=accessors, dst_tiles=dst_tiles)
    t = _Trace(fn, kind, dst_tiles if kind == KIND_COMPUTE else 0, b)
    args: list[object] = []
    params: list[Var] = []
    positions: list[int] = []
    for i, ((name, rt), bind) in enumerate(zip(fn.params, binds, strict=True)):
        args.append(_bind(name, rt, bind, params, positions, i, t))
    _ACTIVE.append(t)
    try:
        result = fn.fn(*args)
    except TilewrightError:
        raise
    except Exception as exc:  # a bug in the body (NameError, ZeroDivisionError ...)
        raise RawIRError(
            f"raw IR function '{fn.name}' raised {type(exc).__name__} while it was traced: {exc}",
            loc=_raised_at(exc, fn),
        ) from exc
    finally:
        _ACTIVE.pop()
    end = SourceLoc(fn.loc.file, fn.loc.line)
    if t.state != "idle":
        raise RawIRError(
            f"raw IR function '{fn.name}' returns in DST state '{t.state}'; release DST "
            "(tile_regs_release) before it returns",
            loc=end,
        )
    result_expr = _result(fn, result, end)
    body_kernel = Kernel(
        name=fn.name,
        kind=kind,
        slot="",
        source=source,
        cbs=cbs,
        accessors=accessors,
        locals=tuple(params) + tuple(b._locals.values()),
        body=tuple(b._stack[0]),
        dst_tiles=t.dst_tiles,
    )
    verify(body_kernel)
    return RawTrace(
        fn,
        kind,
        tuple(params),
        tuple(positions),
        tuple(t.accessors),
        tuple(b._locals.values()),
        tuple(b._stack[0]),
        result_expr,
    )


def _raised_at(exc: BaseException, fn: RawIRFunction) -> SourceLoc:
    """The innermost line of the raw function's file in ``exc``'s traceback (else its def)."""
    loc = fn.loc
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == fn.loc.file:
            loc = SourceLoc(fn.loc.file, tb.tb_lineno)
        tb = tb.tb_next
    return loc


def _bind(
    name: str,
    rt: RawType,
    bind: Bind,
    params: list[Var],
    positions: list[int],
    i: int,
    t: _Trace,
) -> object:
    if rt.kind == "dfb":
        assert bind.kind == "dfb" and isinstance(bind.value, int), bind
        return DFBHandle(name, bind.value)
    if rt.kind == "tensor":
        assert bind.kind == "accessor" and isinstance(bind.value, str), bind
        t.accessors[bind.value] = None
        return AccessorHandle(name, bind.value)
    ty = ir_type(rt)
    if bind.kind == "const":
        value = bind.value
        assert isinstance(value, (int, float)), value
        const = float(value) if ty.is_float else int(value)
        return Val(Const(const, ty))
    var = Var(f"p_{name}", ty)
    params.append(var)
    positions.append(i)
    return Val(var)


def _result(fn: RawIRFunction, result: object, loc: SourceLoc) -> Expr | None:
    if fn.result is None:
        if result is not None:
            raise RawIRError(
                f"raw IR function '{fn.name}' returns a value but declares no result; annotate "
                "its return type (-> ttl.raw.i32 ...)",
                loc=loc,
            )
        return None
    if result is None:
        raise RawIRError(
            f"raw IR function '{fn.name}' declares a {fn.result!r} result but returns None",
            loc=loc,
        )
    if not isinstance(result, (Val, int, float)) or isinstance(result, bool):
        raise RawIRError(
            f"raw IR function '{fn.name}' returns {type(result).__name__}; it returns one scalar "
            "(a traced value or a Python number)",
            loc=loc,
        )
    e = expr_of(result)
    want = ir_type(fn.result)
    if e.ty is not want:
        if e.ty.is_float != want.is_float:
            raise RawIRError(
                f"raw IR function '{fn.name}' returns a {e.ty} value; its result is {fn.result!r}",
                loc=loc,
            )
        e = Cast(e, want) if not isinstance(e, Const) else Const(e.value, want)
    return e
