"""The compiler back end: logical kernels -> kernel IR -> tt-metal C++ -> native execution.

Modules (see docs/compiler.md):

* ``lower/`` -- lowering kernel functions (explicit or split) from the Python AST to the
  kernel IR (``tilewright.kir``);
* ``passes/`` -- the IR -> IR passes, run from one list (DST chunking, CB protocol
  expansion, constant folding, dead-code elimination);
* ``emit`` -- C++ per kernel with ``#line`` directives to the user's Python lines;
* ``build`` -- native kernels cached by the IR's content hash;
* ``compile`` -- one operation call: lower, verify, rewire the program to native kernels;
* ``engine`` -- ``--engine auto|python|native`` and the not-compilable notice;
* ``host`` -- the host description (JSON and a ttnn ``generic_op`` program) of ``tilewright emit``.
"""

from __future__ import annotations

from collections.abc import Callable

from tilewright.compiler.backend.compile import CompiledCall, compile_call
from tilewright.compiler.backend.engine import engine_of, notice
from tilewright.errors import NotCompilableError

__all__ = ["CompiledCall", "COMPILE_OBSERVERS", "FALLBACK_OBSERVERS", "compile_call", "run_engine"]

COMPILE_OBSERVERS: list[Callable] = []
"""Callables ``observer(record, compiled, program)`` run after an operation compiled
(``tilewright explain --ir``, ``tilewright emit``)."""
FALLBACK_OBSERVERS: list[Callable] = []
"""Callables ``observer(record, error, program)`` run when ``auto`` interprets an operation."""


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
) -> None:
    """Compile the call for the native engine unless the engine is ``python``.

    Under ``auto`` a construct that does not compile leaves the program interpreted,
    with a one-line notice; under ``native`` it is the error.  A call whose program got
    operation runtime resources (reference C.11: defines, per-node runtime args, caller
    semaphores) is not compiled yet.
    """
    choice = engine_of(options, record.name, call_loc)
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
