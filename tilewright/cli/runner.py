"""Running a user's TT-Lang program: ``import ttl`` / ``import ttnn`` resolve to Tilewright.

A meta-path finder maps the top-level names ``ttl`` and ``ttnn`` (and their
submodules) to ``tilewright.ttl`` / ``tilewright.ttnn``, so the module objects are
Tilewright's own (``ttl is tilewright.ttl``).  The program runs as ``__main__``
with its own ``sys.argv``.  A Tilewright error prints its diagnostic (location,
excerpt, notes) without a Python traceback and exits with status 1; the program's own
failures print a traceback of the program's frames only; an exception Tilewright raised
without diagnosing it is reported at the user's line, never as an internal traceback.
Ctrl-C prints where every kernel of the interrupted launch was (the engine's report) and
exits with 130, the shell's status for SIGINT.
"""

from __future__ import annotations

import gc
import importlib
import importlib.abc
import importlib.util
import os
import runpy
import signal
import sys
import threading
import traceback
from collections.abc import Callable

from tilewright.cli import signals
from tilewright.errors import (
    TilewrightError,
    format_error,
    internal_file,
    traceback_location,
)
from tilewright.lazy import lazy_import

# ttnn (and with it the device) loads when a program runs, not when the command line starts.
chips = lazy_import("tilewright.ttnn.chips")
ttnn_device = lazy_import("tilewright.ttnn.device")

__all__ = ["install_aliases", "run_program", "users_frames", "ALIASES"]

ALIASES = {"ttl": "tilewright.ttl", "ttnn": "tilewright.ttnn"}

PROCESS_ENTRY = False
"""True when the ``tilewright`` command owns the process (``cli.main.main``, not a caller
running the command in process, as tests do): only then does :func:`run_program` freeze the
collector's view of what it loaded (:func:`_load_provided`)."""


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module) -> None:  # the target module is already executed
        pass


class _AliasFinder(importlib.abc.MetaPathFinder):
    aliases: dict[str, str] = ALIASES

    def find_spec(self, fullname, path=None, target=None):
        head, _, rest = fullname.partition(".")
        base = self.aliases.get(head)
        if base is None:
            return None
        real = base + ("." + rest if rest else "")
        if importlib.util.find_spec(real) is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real))


_FINDER = _AliasFinder()


def install_aliases(names: tuple[str, ...] = ("ttl", "ttnn")) -> None:
    """Make ``import ttl`` and ``import ttnn`` (or only ``names``) give Tilewright's modules.

    With the real TT-Lang compiler (``--compiler ttlang``) only ``ttnn`` is Tilewright's.
    """
    _FINDER.aliases = {name: ALIASES[name] for name in names}
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def _load_provided(aliases: tuple[str, ...]) -> None:
    """Import what the run provides (``ttl``, ``ttnn``) before the program starts, then move
    every object alive now to the collector's permanent generation (``gc.freeze``).

    Why: every full (generation 2) collection walks every tracked object.  A program's own
    ``import torch`` runs several (torch's heap is 110k-170k objects); Tilewright's modules
    (about 55k objects here) would be walked by each of them and by each the program's run
    makes later, and loading them after torch's heap exists tips the collector into another
    full walk of it (issue 22; ``benchmarks/bench_startup.py`` ``full_gc``).  ``gc.freeze``
    (Python docs, ``gc`` module: "move them to a permanent generation and ignore them in
    all the future collections") is sound here because nothing of the program exists yet:
    what is frozen is the interpreter's, the command line's and Tilewright's module-level
    state, alive until the process ends anyway; the program's own objects are collected as
    always.  Deviation a program could see: ``gc.get_objects()`` omits frozen objects
    (``gc.get_freeze_count()`` counts them; ``gc.unfreeze()`` undoes this).  Only for the
    process the command owns (:data:`PROCESS_ENTRY`): a caller running it in process keeps
    its collector as it was.
    """
    for name in aliases:
        importlib.import_module(ALIASES[name])
    gc.freeze()


def _open_devices() -> list:
    return chips.open_devices()


def _close_devices_left_open(before: list) -> None:
    """A program that forgot ``ttnn.close_device`` must not leak its device into the next run."""
    for dev in chips.open_devices():
        if all(dev is not b for b in before):
            ttnn_device.close_device(dev)


def users_frames(exc: BaseException) -> None:
    """Drop Tilewright's own frames (and synthetic ones) from ``exc``'s traceback in place."""
    kept = []
    tb = exc.__traceback__
    while tb is not None:
        if not internal_file(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    if not kept:
        return
    for a, b in zip(kept, kept[1:]):
        a.tb_next = b
    kept[-1].tb_next = None
    exc.__traceback__ = kept[0]


def _escaped_from_tilewright(exc: BaseException) -> bool:
    """Whether a non-Tilewright exception was raised inside Tilewright's own code."""
    tb, last = exc.__traceback__, None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return last is not None and not last.startswith("<") and internal_file(last)


def _undiagnosed(exc: BaseException) -> str:
    """An input Tilewright failed to diagnose, reported at the user's line (never a traceback)."""
    loc = traceback_location(exc)
    where = f"{loc}: " if loc is not None else ""
    excerpt = loc.excerpt() if loc is not None else ""
    return (
        f"{where}error: Tilewright could not diagnose this input ({type(exc).__name__}: {exc})"
        + (f"\n{excerpt}" if excerpt else "")
        + "\nhint: this is a gap in Tilewright's checks; please report it with the program"
    )


def _report_interrupt(exc: KeyboardInterrupt) -> int:
    """Where every kernel was (the engine's note), for Ctrl-C or SIGTERM (``signals``); a
    second interrupt while this prints is ignored (an ``--isolate`` parent may pass one on)."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        notes = getattr(exc, "__notes__", ())
        where = "\n" + "\n".join(notes) if notes else " (outside a launch)"
        if signals.terminated():
            where = where.replace("interrupted (Ctrl-C)", "terminated (SIGTERM)")
            print(f"terminated (SIGTERM){where}", file=sys.stderr)
            return signals.TERMINATED_STATUS
        print(f"KeyboardInterrupt: interrupted{where}", file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def run_program(
    path: str,
    argv: list[str],
    *,
    aliases: tuple[str, ...] = ("ttl", "ttnn"),
    classify: Callable[[BaseException], int | None] | None = None,
) -> int:
    """Run ``path`` as ``__main__``; return the process exit status.

    ``classify`` sees a failure first: it reports it and returns the status, or returns
    None to leave it to the reporting below (the real compiler's rejections).
    """
    install_aliases(aliases)
    before = _open_devices()
    if PROCESS_ENTRY:
        _load_provided(aliases)
    path = os.path.abspath(path)
    saved_argv, saved_path0 = sys.argv, sys.path[0] if sys.path else None
    sys.argv = [path, *argv]
    sys.path.insert(0, os.path.dirname(path))
    try:
        runpy.run_path(path, run_name="__main__")
        return 0
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except Exception as exc:
        status = classify(exc) if classify is not None else None
        if status is not None:
            return status
        return _report(exc)
    except KeyboardInterrupt as exc:
        return _report_interrupt(exc)
    finally:
        _close_devices_left_open(before)
        sys.argv = saved_argv
        if sys.path and sys.path[0] == os.path.dirname(path):
            sys.path.pop(0)
        _ = saved_path0


def _report(exc: Exception) -> int:
    """Print a failure of the program as the command line reports it; the exit status."""
    if isinstance(exc, TilewrightError):
        if exc.loc is None:  # any layer's error: point at the user's innermost frame
            exc.loc = traceback_location(exc)
        print(format_error(exc), file=sys.stderr)
        return 1
    if _escaped_from_tilewright(exc):  # no internal traceback reaches the user
        print(_undiagnosed(exc), file=sys.stderr)
        return 1
    users_frames(exc)  # the user's own failure: show where it happened, in their code
    traceback.print_exception(exc)
    return 1
