"""TT-Lang rules at compile time: the lowering runs the interpreter's own checks.

Every rule of the language is a function of ``lang.rules`` (or ``lang.blockstate``) that
raises its error.  The lowering calls it on what it knows of the kernel at that point
(:func:`holds`): a violation becomes a ``fail`` op that raises the same error -- type,
message, rule id -- at the same line when the compiled kernel reaches it, so a break
on a path that never runs is never reported, as in the interpreter.  A check that needs
run-time numbers (:func:`check_at_run_time`) is emitted as an ``if`` around a ``failf``
whose format is the same message function's text with ``%lld`` for the numbers.

An error class the compiled kernel cannot raise (``InterfaceError``: the interpreter
raises it while the kernel runs, ``ttlang::ErrorClass`` has no such class) makes the
kernel not compilable, naming the rule: ``--engine auto`` then interprets it, and the
interpreter reports it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from tilewright.compiler.backend.lower import scalars as S
from tilewright.errors import TilewrightError, tag_rule
from tilewright.kir.ir import Const, Expr, Ty
from tilewright.kir.ops.control import ERROR_CLASSES
from tilewright.lang.rules.registry import RUNTIME_INT, printf_format

__all__ = ["RUNTIME_CLASSES", "holds", "violated", "check_at_run_time", "alive"]

RUNTIME_CLASSES: tuple[type[TilewrightError], ...] = tuple(ERROR_CLASSES.values())
"""The errors a compiled kernel raises: the classes a ``fail`` op names (``ttlang::ErrorClass``,
generated from ``device/api_messages.py``; ``kir/ops/control.py``)."""


def holds(lw, check: Callable[..., object], *args: object) -> bool:
    """Run a rule's check on compile-time facts: True if it holds; if not, the violation
    is emitted here (:func:`violated`) and False returned -- the code after it never runs."""
    try:
        check(*args)
    except TilewrightError as exc:
        violated(lw, exc)
        return False
    return True


def violated(lw, exc: TilewrightError, values: Sequence[Expr] = ()) -> None:
    """Emit the violation ``exc`` as a ``fail`` op (``values``: the run-time numbers of
    the :data:`RUNTIME_INT` slots of its message, as a ``failf``).  The path ends there:
    the lowering skips what follows on it (``Tracker.dead``)."""
    if lw.tracker.dead:  # already unreachable: nothing to report
        return
    cls = type(exc)
    if cls not in RUNTIME_CLASSES:
        raise lw.fail(
            f"{exc.message} (rule {exc.rule}: a {cls.__name__}, which the interpreter raises "
            "as the kernel runs; a compiled kernel cannot)"
        )
    text = tag_rule(exc.rule, exc.message)
    if values:
        wide = tuple(S.to_type(v, Ty.I64) for v in values)
        lw.emit("failf", cls.__name__, printf_format(text), wide)
    else:
        lw.emit("fail", cls.__name__, text)
    lw.tracker.kill()


def check_at_run_time(
    lw, ok: Expr, violation: Callable[..., TilewrightError], values: Sequence[Expr]
) -> None:
    """``if not ok: raise violation(*values)`` in the compiled kernel.  ``violation`` builds
    the rule's error from the numbers, given as strings: the values when they are known
    here (the check is decided now), :data:`RUNTIME_INT` slots otherwise."""
    if isinstance(ok, Const):
        if not ok.value:
            if all(isinstance(v, Const) for v in values):
                violated(lw, violation(*(str(v.value) for v in values)))  # type: ignore[union-attr]
            else:
                violated(lw, violation(*(RUNTIME_INT for _ in values)), values)
        return
    with lw.new_region() as failing, alive(lw):
        violated(lw, violation(*(RUNTIME_INT for _ in values)), values)
    lw.emit("if", S.unary("not", ok), regions=(tuple(failing), ()))


@contextmanager
def alive(lw) -> Iterator[None]:
    """A region of an ``if`` the lowering builds itself: a violation in it ends that
    branch only, the code after the ``if`` still runs."""
    active = lw.tracker.active
    try:
        yield
    finally:
        lw.tracker.active = active
