"""Routing ``print`` inside kernels to a language's debug print, per thread.

A language layer (TT-Lang's debug print) wants ``print`` inside its kernels to get a
node/kernel prefix, and ``print`` everywhere else to stay the ordinary ``print``.
``builtins.print`` is process-wide, so swapping it per launch breaks as soon as two
threads launch at once: the swaps interleave, a stale hook stays installed, and the
main thread's ``print`` gets a kernel prefix.  Instead, while any launch wants kernel
prints, one *router* sits in ``builtins.print`` (installed by the first user, removed
by the last, under a lock); the router asks the calling thread's ``ACTIVE`` record for
its hook and running kernel, so a thread that is not running a kernel always prints
plainly.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tilewright.device.engine import ACTIVE

__all__ = ["kernel_print", "line_prefix"]

PrintFn = Callable[..., None]

_LOCK = threading.Lock()
_users = 0
_original: PrintFn = builtins.print


def line_prefix(run: Any) -> str:
    """The prefix of a kernel's debug-print line, ``[<place> <kernel>]``.  Defined once:
    TT-Lang's interpreted ``print`` (``lang/debug_print.py``), the KIR ``debug.print`` op
    and the native DPRINT handler's TT-Lang lines (``native/requests.py``) read it."""
    return f"[{run.place} {run.name}]"


def _routed_print(*args: Any, **kwargs: Any) -> None:
    active = ACTIVE
    hook = active.print_hook
    if hook is None or active.run is None:
        _original(*args, **kwargs)
    else:
        hook(*args, **kwargs)


@contextmanager
def kernel_print(make_hook: Callable[[PrintFn], PrintFn]) -> Iterator[None]:
    """Route ``print`` in this thread's kernels through ``make_hook(original_print)``.

    The hook is called only while a kernel runs on this thread; it receives the
    ordinary ``print`` to write with.  Nested and concurrent uses are fine.
    """
    global _users, _original
    with _LOCK:
        if _users == 0:
            _original = builtins.print
            builtins.print = _routed_print
        _users += 1
        original = _original
    previous = ACTIVE.print_hook
    ACTIVE.print_hook = make_hook(original)
    try:
        yield
    finally:
        ACTIVE.print_hook = previous
        with _LOCK:
            _users -= 1
            if _users == 0 and builtins.print is _routed_print:
                builtins.print = _original
