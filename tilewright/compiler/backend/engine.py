"""Which engine runs an operation: ``auto``, ``python`` or ``native`` (one options object).

The choice comes from the operation's ``options=`` string (``--tw-engine=native``)
or, without one, from the run session (``tilewright run --engine``, the pytest
plugin, ``tilewright.device.session.OPTIONS.engine``).  ``python`` interprets every
operation; ``native`` compiles every operation and reports what does not compile as
an error; ``auto`` (the default) compiles what compiles and interprets the rest with
a one-line notice naming the construct and its line.

``auto`` never runs an engine that checks less: a compiled kernel checks every TT-Lang
rule the interpreter checks (``lang.rules``, as ``fail`` ops), and a rule the compiled
engine cannot check -- the exceptions of docs/compiler.md, "Rules on every engine", and
external calls' declared contracts -- makes the operation not compilable, so ``auto``
falls back to the interpreter, which checks everything.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass

from tilewright.errors import InterfaceError, NotCompilableError, SourceLoc

__all__ = ["ENGINES", "EngineChoice", "engine_of", "notice", "NOTICES"]

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
    from tilewright.device import session

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
    if engine == "auto" and session.OPTIONS.trace:
        engine = "python"  # a trace shows the interpreter's events (copies, waits, zones)
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
