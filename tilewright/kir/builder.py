"""Build kernel IR from Python: locals, ops and structured control flow.

The lowering builds IR from the user's AST; raw IR functions (``ttl.raw``, the next
issue) build it directly.  :class:`Builder` keeps the region being filled and the
kernel's locals::

    b = Builder("scale", "compute", slot="trisc", dst_tiles=4, cbs=(src, dst))
    i = b.local("i", Ty.I64)
    with b.for_(i, 0, n):
        b.op("cb.wait_front", 0, 1)
        ...
    kernel = b.kernel()   # verified

Every op is checked against the op table when the kernel is finished
(:func:`~.verify.verify`), so a misuse reports the IR with the op marked.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from tilewright.errors import SourceLoc
from tilewright.kir.ir import (
    AccessorDecl,
    CBDecl,
    Const,
    ContractNote,
    Expr,
    Kernel,
    Op,
    Ty,
    Var,
)
from tilewright.kir.verify import verify

__all__ = ["Builder"]


def _expr(v: object) -> object:
    """Python numbers become constants of their natural type."""
    if isinstance(v, bool):
        return Const(v, Ty.BOOL)
    if isinstance(v, int):
        return Const(v, Ty.I64)
    if isinstance(v, float):
        return Const(v, Ty.F64)
    return v


@dataclass
class Builder:
    name: str
    kind: str
    slot: str = ""
    source: str = "<builder>"
    cbs: tuple[CBDecl, ...] = ()
    accessors: tuple[AccessorDecl, ...] = ()
    args: tuple[str, ...] = ()
    dst_tiles: int = 0
    contracts: tuple[ContractNote, ...] = ()  # the external calls' notes (extern.call)
    loc: SourceLoc | None = None
    _locals: dict[str, Var] = field(default_factory=dict)
    _stack: list[list[Op]] = field(default_factory=lambda: [[]])

    def local(self, name: str, ty: Ty) -> Var:
        var = self._locals.setdefault(name, Var(name, ty))
        if var.ty is not ty:
            raise ValueError(f"local {name} is already a {var.ty}")
        return var

    def op(self, code: str, *args: object, regions: tuple = ()) -> Op:
        """Append op ``code`` (ints stay static operands; use :func:`_expr` values for
        expression operands or pass IR expressions)."""
        op = Op(code, tuple(args), regions, self.loc)
        self._stack[-1].append(op)
        return op

    def set(self, var: Var, value: object) -> Op:
        return self.op("set", var, _expr(value))

    @contextmanager
    def _region(self) -> Iterator[list[Op]]:
        self._stack.append([])
        try:
            yield self._stack[-1]
        finally:
            self._stack.pop()

    @contextmanager
    def for_(self, var: Var, start: object, stop: object, step: int = 1) -> Iterator[None]:
        """``for var in range(start, stop, step)`` around the ops built in the block."""
        with self._region() as body:
            yield
        self.op("for", var, _expr(start), _expr(stop), step, regions=(tuple(body),))

    @contextmanager
    def if_(self, cond: Expr) -> Iterator[None]:
        with self._region() as body:
            yield
        self.op("if", cond, regions=(tuple(body), ()))

    def kernel(self) -> Kernel:
        """The finished kernel, verified."""
        if len(self._stack) != 1:
            raise ValueError("a region is still open")
        return verify(
            Kernel(
                name=self.name,
                kind=self.kind,
                slot=self.slot,
                source=self.source,
                cbs=self.cbs,
                accessors=self.accessors,
                args=self.args,
                locals=tuple(self._locals.values()),
                body=tuple(self._stack[0]),
                dst_tiles=self.dst_tiles,
                contracts=self.contracts,
            )
        )
