"""Compiled kernels for the native engine, cached by their IR.

The cache key of a kernel is the SHA-256 of its printed IR, the emitter version and
its include directories: the same IR always gives the same C++, so a key names one
object.  In a process, :func:`native_kernel` keeps one :class:`NativeKernel` per key
(its loaded object survives across calls); on disk, the native build cache
(``tilewright.native.build``) keeps the object by the C++ text it was built from, so a
new process pays only the load.  All kernels of an operation are built in parallel
when the program launches (``NativeKernel.prepare_program``).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from tilewright.compiler.backend.emit import EMITTER_VERSION, emit_kernel
from tilewright.device.shared import WaitKind
from tilewright.errors import NativeBuildError, SourceLoc
from tilewright.kir.ir import Kernel
from tilewright.kir.printer import print_kernel
from tilewright.lang import state
from tilewright.lang.extern.checks import compiled_call, current_call, current_site
from tilewright.native.kernels import NativeKernel

__all__ = ["INCLUDE_DIR", "ir_key", "native_kernel", "CACHE"]

INCLUDE_DIR = Path(__file__).resolve().parent / "include"
"""``ttlang/support.h``: what generated kernels include besides the tt-metal API."""

CACHE: dict[str, NativeKernel] = {}
_BY_ID: dict[int, tuple[Kernel, str]] = {}  # id(kernel) -> (kernel, key): no deep hashing


def ir_key(kernel: Kernel) -> str:
    """The content hash of a kernel's IR (printed) and what turns it into an object."""
    known = _BY_ID.get(id(kernel))
    if known is not None and known[0] is kernel:
        return known[1]
    h = hashlib.sha256()
    h.update(f"emitter {EMITTER_VERSION}\n".encode())
    for path in kernel.include_paths:
        h.update(f"include {path}\n".encode())
    h.update(print_kernel(kernel).encode())
    for op_loc in _locations(kernel):
        h.update(op_loc.encode())
    key = h.hexdigest()
    if len(_BY_ID) > 4096:
        _BY_ID.clear()
    _BY_ID[id(kernel)] = (kernel, key)
    return key


def _locations(kernel: Kernel) -> list[str]:
    """Full source paths (the printed IR shows base names): #line directives use them."""
    out: list[str] = []
    stack = list(kernel.body)
    while stack:
        op = stack.pop()
        if op.loc is not None:
            out.append(op.loc.file)
        for region in op.regions:
            stack.extend(region)
    return sorted(set(out))


class CompiledKernel(NativeKernel):
    """A native kernel compiled from TT-Lang: it describes its waits in DFB terms.  Its prelude
    is the kernel API's (``tilewright/kernel_std.h``): ``ttlang/support.h`` includes no other
    standard header (Python's float repr and divmod are in the runtime, runtime/scalars.cpp)."""

    def __init__(self, kernel: Kernel, key: str, source: str) -> None:
        if kernel.contracts:  # this build announces its external calls (ttlang/support.h)
            source = f"#define TTLANG_CHECK_EXTERN_CONTRACTS 1\n{source}"
        super().__init__(
            source=source, include_paths=(str(INCLUDE_DIR), *kernel.include_paths), name=kernel.name
        )
        self.ir_key = key
        self.waits = {(w.line, w.cb, w.pages): w for w in kernel.waits}
        self.sem_waits = {(n.line, n.addr, n.value): n for n in kernel.sem_waits}
        self.contracts = kernel.contracts

    def extern_call(self, run, phase: int, contract: int, value: int, text: str | None):
        """An external call of this kernel begins, ends or let an exception escape on ``run``
        (the ``extern_call`` request): the interpreter's checks of the call
        (``lang.extern.checks``); at the beginning, the call's contract observer."""
        note = self.contracts[contract]
        return compiled_call(run, note.position, note.variant, note.dfbs, phase, value, text)

    def library(self, config, seen=None):
        """The loaded object (``NativeKernel.library``); a build that fails in the header of
        one of the kernel's external calls is reported at that call, as the interpreter's
        build of the call is."""
        try:
            return super().library(config, seen)
        except NativeBuildError as exc:
            note = _failing_call(self.contracts, exc)
            if note is None or exc.loc is not None:
                raise
            line, _, col, _ = note.position
            where = SourceLoc(note.file, line, col)
            head, sep, rest = exc.message.partition(" failed")
            located = NativeBuildError(
                f"{head} (for {note.title} at {where}){sep}{rest}", loc=where, hint=exc.hint
            )
            located.compiler_output = exc.compiler_output
            located.source = exc.source
            located.undefined_symbols = exc.undefined_symbols
            raise located from None

    def current_extern_call(self, run):
        """(title, location) of the external call ``run`` is inside, or None (fault reports)."""
        return current_call(run)

    def extern_call_token(self, run):
        """(site id, node x, node y) of the external call ``run`` is inside, or None (the
        crash slot of ``--isolate``)."""
        site = current_site(run)
        return None if site is None else (site.id, run.core.logical.x, run.core.logical.y)

    def describe_wait(self, run, kind: int, obj: int, value: int, loc) -> str | None:
        """The interpreter's words for a blocked DFB acquisition (``DataflowBuffer.describe_wait``
        and the blocks the kernel holds), or None for another wait."""
        if loc is None:
            return None
        if kind in (WaitKind.SEM_EQ, WaitKind.SEM_GE):
            sem = self.sem_waits.get((loc.line, obj, value))
            if sem is None:
                return None
            xy = run.core.logical
            return sem.text.format(node=f"({xy.x}, {xy.y})")
        verb = {WaitKind.CB_RESERVE: "reserve", WaitKind.CB_WAIT: "wait"}.get(kind)
        launch = state.CURRENT
        if verb is None or launch is None:
            return None
        note = self.waits.get((loc.line, obj, value))
        setup = launch.setups.get(run.core.index)
        if note is None or setup is None or note.dfb >= len(setup.dfbs):
            return None
        text = setup.dfbs[note.dfb].describe_wait((verb, value))
        return "\n".join([text, *(f"    {h}" for h in note.holds)])


def _failing_call(notes, exc: NativeBuildError):
    """The external call whose header the compiler's messages point into (a link error: the
    kernel's only external header's call), or None."""
    for note in notes:
        if f"{os.sep}{os.path.basename(note.header)}:" in exc.compiler_output:
            return note
    if exc.undefined_symbols and len({n.header for n in notes}) == 1:
        return notes[0]
    return None


def native_kernel(kernel: Kernel) -> NativeKernel:
    """The (cached) native kernel entry of a verified kernel IR."""
    key = ir_key(kernel)
    entry = CACHE.get(key)
    if entry is None:
        entry = CACHE[key] = CompiledKernel(kernel, key, emit_kernel(kernel))
    return entry
