"""The native toolchain: build options, the C++ compiler and its identity, base flags.

Shared by the runtime library build (``native.runtime``) and kernel/extern builds
(``native.build``); it imports neither.  ``OPTIONS`` is rebound by :func:`configure`:
read it as ``toolchain.OPTIONS`` (a ``from`` import would keep the old value).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from tilewright.errors import NativeBuildError

__all__ = [
    "BASE_FLAGS",
    "BuildOptions",
    "OPTIONS",
    "configure",
    "include_dir",
    "compiler_identity",
    "run_compiler",
    "stop_compilers",
    "in_parallel",
]

INCLUDE_DIR = Path(__file__).resolve().parent / "include"

# Why each flag: C++20 (designated initializers of InterleavedAddrGen{.bank_base_address
# = ...}); -fvisibility=hidden so every object keeps its own bridge pointer and exports
# only its entry points; -fpermissive so tt-metal code written for 32-bit RISC-V
# (`(uint32_t)pointer`) compiles with a warning instead of an error; -z defs so an
# undefined symbol is a link error naming it, not a load-time surprise.
BASE_FLAGS = (
    "-std=c++20",
    "-g1",  # line tables: a native fault is reported at its source line (addr2line)
    "-fPIC",
    "-shared",
    "-fvisibility=hidden",
    "-fvisibility-inlines-hidden",
    "-fpermissive",
    "-Wno-int-to-pointer-cast",
    "-fstack-clash-protection",  # a large local array probes its pages: it hits the guard
    "-Wl,-z,defs",
)


@dataclass(frozen=True, slots=True)
class BuildOptions:
    """How native code is built (one options object; environment read only for defaults)."""

    cache_dir: str | None = None
    """Cache directory; None: $XDG_CACHE_HOME/tilewright/native or ~/.cache/tilewright/native."""
    compiler: str | None = None
    """C++ compiler command; None: $CXX, else c++, g++ or clang++ from PATH."""
    opt_level: str = "-O1"
    extra_flags: tuple[str, ...] = ()
    timeout: float = 300.0
    """Seconds a single compilation may take."""

    def resolved_cache_dir(self) -> Path:
        if self.cache_dir:
            return Path(self.cache_dir)
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return Path(base) / "tilewright" / "native"

    def resolved_compiler(self) -> str:
        cmd = self.compiler or os.environ.get("CXX")
        if cmd:
            return cmd
        for name in ("c++", "g++", "clang++"):
            found = shutil.which(name)
            if found:
                return found
        raise NativeBuildError(
            "no C++ compiler found for external C++ functions",
            hint="install g++ (or clang++), or set CXX / tilewright.native.configure(compiler=...)",
        )


OPTIONS = BuildOptions()


def configure(**changes) -> BuildOptions:
    """Change the build options (e.g. ``configure(cache_dir=tmp)`` in tests); returns them."""
    global OPTIONS
    OPTIONS = replace(OPTIONS, **changes)
    return OPTIONS


def include_dir() -> str:
    """Directory of Tilewright's tt-metal kernel-API emulation headers."""
    return str(INCLUDE_DIR)


_COMPILER_IDS: dict[str, str] = {}


def compiler_identity(compiler: str) -> str:
    """The compiler's ``--version`` banner (memoized): part of every cache key."""
    ident = _COMPILER_IDS.get(compiler)
    if ident is None:
        try:
            out = subprocess.run(
                [compiler, "--version"], check=False, capture_output=True, text=True, timeout=60
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise NativeBuildError(
                f"cannot run the C++ compiler {compiler!r}: {exc}",
                hint="install g++ or set CXX to a working C++ compiler",
            ) from None
        ident = _COMPILER_IDS[compiler] = f"{compiler}\n{out.stdout.strip()}"
    return ident


# The compiler processes running now, each the leader of its own process group: killing
# the driver alone (g++) would leave cc1plus / as / ld running on after the run ended.
_COMPILERS: set[subprocess.Popen] = set()
_COMPILERS_LOCK = threading.Lock()


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # already gone (and reaped)
        pass


def stop_compilers() -> None:
    """Kill every compiler running now, with the processes it started (``tilewright run``
    ending on SIGTERM: builds would otherwise run on, and finish, after the run ended)."""
    with _COMPILERS_LOCK:
        running = list(_COMPILERS)
    for proc in running:
        _kill_group(proc)


def run_compiler(
    command: list[str], cwd: Path | None = None, timeout: float | None = None
) -> subprocess.CompletedProcess:
    """Run one compile, registered for :func:`stop_compilers`; killed with its process group
    on any exception (a timeout, Ctrl-C, SIGTERM).  Every build (the runtime library,
    kernels, external functions) runs its compiler here."""
    # LC_ALL=C: plain ASCII quotes in diagnostics, whatever the user's locale.
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=dict(os.environ, LC_ALL="C"),
        start_new_session=True,  # its own group: a terminal's Ctrl-C reaches it through us
    )
    with _COMPILERS_LOCK:
        _COMPILERS.add(proc)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        _kill_group(proc)
        proc.communicate()
        raise
    finally:
        with _COMPILERS_LOCK:
            _COMPILERS.discard(proc)
    return subprocess.CompletedProcess(command, proc.returncode, out, err)


def in_parallel(jobs: Iterable[Callable[[], object]]) -> list:
    """Run build jobs (each runs its compilers through :func:`run_compiler`) on a thread per
    CPU core; their results in order.  The first failure is raised without the worker's
    frames: their innermost one outside Tilewright is concurrent/futures/thread.py, which
    diagnostics would take for the user's line.  On Ctrl-C the compilers are killed (they
    run in their own process groups, and the pool would otherwise wait for each)."""
    jobs = list(jobs)
    if len(jobs) <= 1:
        return [job() for job in jobs]
    with ThreadPoolExecutor(max_workers=min(len(jobs), os.cpu_count() or 2)) as pool:
        try:
            return list(pool.map(lambda job: job(), jobs))
        except KeyboardInterrupt:
            stop_compilers()
            raise
        except Exception as exc:  # noqa: BLE001 - re-raised here, whatever it is
            raise exc.with_traceback(None) from None
