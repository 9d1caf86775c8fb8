"""Which engine runs an operation: ``auto``, ``python`` or ``native`` (one options object).

The choice comes from the operation's ``options=`` string (``--tw-engine=native``)
or, without one, from the run session (``tilewright run --engine``, the pytest
plugin, ``tilewright.device.session.OPTIONS.engine``).  ``python`` interprets every
operation; ``native`` compiles every operation and reports what does not compile as
an error; ``auto`` (the default) compiles what compiles and interprets the rest with
a one-line notice naming the construct and its line.  :func:`run_engine` applies the
choice to one operation call, and tells the observers (``tilewright explain --ir``,
``tilewright emit``) what it compiled or left interpreted.

``auto`` never runs an engine that checks less: a compiled kernel checks every TT-Lang
rule the interpreter checks (``lang.rules``, as ``fail`` ops; external calls' declared
contracts with the interpreter's own checks, ``lang.extern.checks``), and a rule the
compiled engine cannot check -- the exceptions of docs/compiler.md, "Rules on every
engine" -- makes the operation not compilable, so ``auto`` falls back to the
interpreter, which checks everything.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tilewright.compiler.backend.compile import compile_call, kernel_coverage
from tilewright.device import session
from tilewright.errors import InterfaceError, NotCompilableError, SourceLoc

__all__ = [
    "ENGINES",
    "COMPILE_OBSERVERS",
    "FALLBACK_OBSERVERS",
    "COVERAGE_OBSERVERS",
    "EngineChoice",
    "engine_of",
    "notice",
    "NOTICES",
    "run_engine",
]

ENGINES = ("auto", "python", "native")
_FLAG = "--tw-engine"


@dataclass(frozen=True, slots=True)
class EngineChoice:
    engine: str
    from_operation: bool


def engine_of(
    op_options: Mapping[str, object], op_name: str, loc: SourceLoc | None = None
) -> EngineChoice:
    """The engine of one operation call."""
    words = str(op_options.get("options") or "").split()
    for i, word in enumerate(words):
        if word == _FLAG or word.startswith(_FLAG + "="):
            value = (
                word.partition("=")[2]
                if "=" in word
                else (words[i + 1] if i + 1 < len(words) else "")
            )
            if value not in ENGINES:
                raise InterfaceError(
                    f"operation '{op_name}': {_FLAG} takes one of {', '.join(ENGINES)}, got {value!r}",
                    loc=loc,
                )
            return EngineChoice(value, True)
    engine = getattr(session.OPTIONS, "engine", "auto")
    return EngineChoice(engine, False)


NOTICES: list[str] = []
"""The notices given so far (each once per process)."""


def notice(op_name: str, exc: NotCompilableError) -> None:
    """One line on stderr: the operation runs interpreted, and why (once per reason)."""
    where = f"{exc.loc.file}:{exc.loc.line}: " if exc.loc is not None else ""
    text = f"tilewright: note: {where}operation '{op_name}' runs interpreted: {exc.message}"
    if text in NOTICES:
        return
    NOTICES.append(text)
    print(text, file=sys.stderr)


COMPILE_OBSERVERS: list[Callable] = []
"""Callables ``observer(record, compiled, program)`` run after an operation compiled
(``tilewright explain --ir``, ``tilewright emit``)."""
FALLBACK_OBSERVERS: list[Callable] = []
"""Callables ``observer(record, error, program)`` run when ``auto`` interprets an operation."""
COVERAGE_OBSERVERS: list[Callable] = []
"""Callables ``observer(record, engine, kernels)`` run before an operation call is compiled
or interpreted (``tilewright explain --coverage``): the call's engine and, per kernel, None
or the error of the construct that stops it (:func:`compile.kernel_coverage`)."""


def run_engine(
    record,
    options,
    split_plan,
    program,
    device,
    grid,
    setups,
    args,
    call_loc,
    *,
    runtime_resources: bool = False,
    signature=None,
) -> None:
    """Compile the call for the native engine unless the engine is ``python``.

    Under ``auto`` a construct that does not compile leaves the program interpreted,
    with a one-line notice; under ``native`` it is the error.  A call whose program got
    operation runtime resources (reference C.11: defines, per-node runtime args, caller
    semaphores) is not compiled yet.
    """
    choice = engine_of(options, record.name, call_loc)
    if COVERAGE_OBSERVERS:
        kernels = kernel_coverage(
            record, split_plan, program, device, grid, setups, args, {**options, "engine": "native"}
        )
        for observer in COVERAGE_OBSERVERS:
            observer(record, choice.engine, kernels)
    if choice.engine == "python":
        return
    try:
        if runtime_resources:
            raise NotCompilableError(
                f"operation '{record.name}' uses operation runtime resources "
                "(runtime_resource_factory=, reference C.11), which the compiled path does "
                "not lower yet",
                loc=call_loc,
                hint="run it with --engine auto or --engine python",
            )
        compiled = compile_call(
            record,
            split_plan,
            program,
            device,
            grid,
            setups,
            args,
            {**options, "engine": choice.engine},
            signature=signature,
        )
    except NotCompilableError as exc:
        if choice.engine == "native":
            raise
        if not getattr(exc, "quiet", False):
            notice(record.name, exc)
        for fallback in FALLBACK_OBSERVERS:
            fallback(record, exc, program)
        return
    compiled.install(program)
    for observer in COMPILE_OBSERVERS:
        observer(record, compiled, program)
