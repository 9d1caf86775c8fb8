"""The shape of an op row: everything about one IR op code, side by side.

An :class:`OpDef` holds an op's operands (names and kinds, in order), the kernel kinds
that may run it, its regions, its place in the DST handshake, its circular-buffer
effect, and its rules: ``run`` (the interpreter: the op as a closure over the Python
kernel API), ``cpp`` (the emitter: a format over the operand names, or a function),
``check`` (the verifier's rule beyond the operand kinds), ``effects`` (the DFB actions
when ``effect`` does not say them), ``text`` (the printer's form when it is not the
default).  The rows live where the ops are defined (:mod:`tilewright.kir.ops`); the
table of all of them is :data:`tilewright.kir.optable.OPS`.  Each pass calls the rule
with a small context of its own -- :class:`Runner`, :class:`Writer`, :class:`Checker`,
:class:`EffectWalker` -- so a row imports none of the passes (compare JAX's primitives,
whose abstract-eval, lowering and impl rules are registered side by side).

Operand kinds:

====== ================================================================
kind    value
====== ================================================================
``e``   a scalar expression of any type (``e:u32``, ``e:i64``, ``e:bool``,
        ``e:f64``, ``e:int`` any integer type, ``e:num`` any number)
``cb``  a static circular-buffer index declared by the kernel
``dst`` a static DST tile index below the kernel's DST capacity
``int`` a static int; ``float`` a static float; ``str`` a string
``var`` a local :class:`~.ir.Var`
``ex*`` a tuple of expressions; ``str*`` a tuple of strings; ``arg*`` a tuple
        of expressions and accessor names
====== ================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from tilewright.kir.ir import KIND_COMPUTE, KIND_DM, Function, Kernel, Op, Ty

__all__ = [
    "OpDef",
    "OpFn",
    "Runner",
    "Writer",
    "Checker",
    "EffectWalker",
    "operands",
    "ANY",
    "CK",
    "DM",
    "BREAK",
    "CONTINUE",
]

ANY = (KIND_COMPUTE, KIND_DM)
CK = (KIND_COMPUTE,)
DM = (KIND_DM,)

BREAK, CONTINUE = 1, 2
"""Statuses a compiled op returns to the enclosing loop (None: go on)."""

OpFn = Callable[[Any], "int | None"]
"""A compiled op: runs on an interpreter ``Env``; returns None, BREAK or CONTINUE."""


class Runner(Protocol):
    """What an interpreter rule may ask of the interpreter (:mod:`.interp`)."""

    def block(self, ops: tuple[Op, ...]) -> OpFn: ...

    def call(self, fn: Function, values: dict[str, Any], env: Any) -> Any:
        """Run ``fn``'s body with ``values`` (its parameters and locals) on ``env``'s core
        resources; its result's value, or None."""
        ...


class Writer(Protocol):
    """What a C++ rule may ask of the emitter (``compiler/backend/emit.py``)."""

    kernel: Kernel

    def line(self, depth: int, text: str, *, sync: bool = True) -> None: ...

    def body(self, depth: int, ops: tuple[Op, ...]) -> None: ...

    def args(self, op: Op) -> dict[str, str]:
        """The op's operands as C++ text, by operand name."""
        ...

    def expr(self, e: object) -> str: ...

    def fresh(self, stem: str) -> str: ...


class Checker(Protocol):
    """What a verifier rule may ask of the verifier (:mod:`.verify`)."""

    kernel: Kernel

    def expr_type(self, e: object) -> Ty: ...

    def local(self, name: str) -> Ty | None: ...

    def fail(self, message: str) -> Exception:
        """The verifier's failure at this op (raise it)."""
        ...


class EffectWalker(Protocol):
    """What an effects rule may ask of the DFB-effect analysis (:mod:`.effects`)."""

    def walk(self, ops: tuple[Op, ...]) -> None: ...

    def has_effects(self, ops: tuple[Op, ...]) -> bool: ...

    def function(self, name: str) -> tuple[Op, ...]: ...

    def unknown(self) -> Exception:
        """The actions depend on run-time values (raise it)."""
        ...


def operands(*pairs: str) -> tuple[tuple[str, str], ...]:
    """``operands("cb:cb", "pages:int")`` -> (("cb", "cb"), ("pages", "int"))."""
    return tuple(tuple(p.split(":", 1)) for p in pairs)  # type: ignore[misc]


@dataclass(frozen=True, slots=True)
class OpDef:
    """One op code and every rule about it.

    ``regions`` names the role of each region: ``"loop"`` (``break`` / ``continue`` may
    leave it; the DST handshake state must come out as it went in) or ``"branch"`` (the
    branches must agree on the state they leave).  ``handshake`` is the DST state change
    of a ``tile_regs_*`` op (state it needs, state after); ``phase`` the state a math
    (``"math"``) or pack (``"pack"``) op runs in.  ``effect`` is the CB action
    (``reserve`` / ``push`` / ``wait`` / ``pop``) on operands ``cb`` and ``pages``.
    ``jump``: ``break`` / ``continue`` (only inside a loop; the DFB actions after one are
    unknown).  ``effects``: the actions of an op ``effect`` cannot describe (an op with
    this rule and no regions counts as acting, for the loops around it).  ``text``: the
    printer's line, given the expression printer.  ``header``: the tt-metal API
    header the op's C++ needs (compute ops; ``debug.print``'s on either kind).
    """

    code: str
    operands: tuple[tuple[str, str], ...]
    run: Callable[[Op, Runner], OpFn | None]
    cpp: str | Callable[[Writer, int, Op], None]
    kinds: tuple[str, ...] = ANY
    regions: tuple[str, ...] = ()
    handshake: tuple[str, str] | None = None
    phase: str | None = None
    effect: str | None = None
    jump: bool = False
    check: Callable[[Checker, Op], None] | None = None
    effects: Callable[[Op, EffectWalker], None] | None = None
    text: Callable[[Op, Callable[[object], str]], str] | None = None
    header: str | None = None
    doc: str = ""
