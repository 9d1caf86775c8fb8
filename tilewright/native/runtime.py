"""The native runtime library (libtwrt): its build, its loading and its C interface.

``libtwrt.so`` implements the tt-metal kernel API for native kernels (sources in
``runtime/``).  It is built once per build cache, keyed by the hash of its sources,
of the headers generated from the Python tables that are the single source of truth
(``device/shared.py`` layouts, ``device/perf`` model constants, and in
:mod:`.headers` the error classes, the kernel-API messages, the data formats and the
op registry's SFPU table) and of the compiler; every kernel object links against it.

:func:`library` builds (or finds) and loads it and returns a :class:`Runtime` with
the C functions bound; the first call also tells it which BLAS ``sgemm`` numpy uses,
so tile matmuls round exactly as numpy's do.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import tempfile
import threading
from functools import partial
from pathlib import Path
from typing import Any

from tilewright.device.blas import numpy_sgemm
from tilewright.device.device import NUM_SEMAPHORES
from tilewright.device.ops import special
from tilewright.device.ops.tile_ops import SFPU_OPS as _SFPU_TABLE
from tilewright.device.perf import costs
from tilewright.device.shared import DeviceInfo, EngineHeader, RunSpec, c_header
from tilewright.errors import NativeBuildError
from tilewright.native import headers, toolchain
from tilewright.native.cachefs import (
    discard,
    file_hash,
    make_dir,
    remove_stale_builds,
    unusable_cache,
)
from tilewright.native.toolchain import compiler_identity, include_dir

__all__ = ["Runtime", "library", "SFPU_OPS", "generated_dir"]

SOURCE_DIR = Path(__file__).resolve().parent / "runtime"
SOURCES = (
    "fiber.cpp",
    "window.cpp",
    "sched.cpp",
    "dataflow.cpp",
    "formats.cpp",
    "compute.cpp",
    "layout.cpp",
    "interrupt.cpp",
    "exits.cpp",
    "perf.cpp",
    "scalars.cpp",
)

SFPU_OPS: tuple[str, ...] = tuple(_SFPU_TABLE)
"""SFPU unary ops the native runtime implements (``<name>_tile`` in the kernel API), in the
order of their op codes: the op registry's table (``device/ops/tile_ops.py``)."""

_FLAGS = (
    "-std=c++20",
    "-pthread",
    # -O3: GCC 12's -O2 leaves the tile codecs' and DST's per-element loops scalar (the bf16
    # unpack was 18% of a warm 2048^3 matmul); vectorised, the warm matmul and elementwise
    # calls are 15-30% faster, for 0.4 s more of a once-per-machine build.  Vectorising
    # changes no float result (no reassociation without -ffast-math; the bit-identity
    # tests of tests/native and tests/compiler/backend).
    "-O3",
    "-fPIC",
    "-shared",
    "-fvisibility=hidden",
    "-ffp-contract=off",  # float arithmetic as numpy's: one rounding per operation
    "-fno-math-errno",
    "-Wall",
    "-Wno-unused-function",
)


def _costs_header() -> str:
    """The device-time model's constants (device/perf/costs.py) and, per SFPU op of
    ``SFPU_OPS``, its instruction count (the cost table's, keyed by the same names)."""
    lines = ["// Generated from tilewright/device/perf/costs.py -- do not edit.", "#pragma once"]
    lines += [f"#define TW_COST_{k} {v}" for k, v in costs.c_constants().items()]
    lines.append(f"#define TW_NUM_SEMAPHORES {NUM_SEMAPHORES}")
    counts = [costs.SFPU_INSTRUCTIONS.get(name, costs.SFPU_DEFAULT) for name in SFPU_OPS]
    lines.append(
        f"static const int kSfpuInstructions[{len(counts)}] = {{{', '.join(map(str, counts))}}};"
    )
    return "\n".join(lines) + "\n"


def _erf_header() -> str:
    """The coefficients of device/ops/special.py's erf (float64, exact repr)."""
    coeffs = special.coefficients()  # the one table both engines evaluate
    rows = ["    {" + ", ".join(float(v).hex() for v in row) + "}," for row in coeffs]
    lines = [
        "// Generated from tilewright/device/ops/special.py -- do not edit.",
        "#pragma once",
        f"#define TW_ERF_WIDTH {special._WIDTH!r}",  # noqa: SLF001
        f"#define TW_ERF_PIECES {special._PIECES}",  # noqa: SLF001
        f"#define TW_ERF_DEGREE {special._DEGREE}",  # noqa: SLF001
        f"static const double kErfCoeffs[{coeffs.shape[0]}][{coeffs.shape[1]}] = {{",
        *rows,
        "};",
    ]
    return "\n".join(lines) + "\n"


def _generated() -> dict[str, str]:
    return {
        "twrt_layout.h": c_header(),
        "twrt_costs.h": _costs_header(),
        "twrt_erf.h": _erf_header(),
        **headers.generated(),
    }


def _key(compiler: str) -> str:
    h = hashlib.sha256()
    h.update(compiler_identity(compiler).encode())
    h.update("\0".join(_FLAGS).encode())
    for name, text in sorted(_generated().items()):
        h.update(name.encode() + b"\0" + text.encode())
    for path in sorted(SOURCE_DIR.iterdir()):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    runtime_h = Path(include_dir()) / "tilewright" / "runtime.h"
    h.update(runtime_h.read_bytes())
    return h.hexdigest()[:24]


def generated_dir() -> Path:
    """Directory of the generated headers of the current runtime (on kernels' include path)."""
    return library().directory


class Runtime:
    """The loaded runtime library with its C functions bound."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.directory = path.parent
        try:
            # CDLL: calls release the GIL.  The runtime serialises native code itself (one
            # thread in native code at a time, runtime/interrupt.cpp); meanwhile other
            # threads run Python, the watchdog among them.
            lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
        except OSError as exc:
            raise NativeBuildError(f"cannot load the native runtime {path}: {exc}") from None
        self.lib = lib
        vp, i32, i64, u32 = ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64, ctypes.c_uint32
        sig = {
            "twrt_engine_new": (vp, [ctypes.POINTER(EngineHeader)]),
            "twrt_engine_free": (None, [vp]),
            "twrt_run_new": (vp, [vp, i32, ctypes.POINTER(DeviceInfo), i32, i32]),
            "twrt_run_args": (None, [vp, u32, u32, u32, u32, vp, u32, u32]),
            "twrt_run_compute": (None, [vp, i32, i32, i32, i32, i32, i32]),
            "twrt_run_observe": (None, [vp, i32]),
            "twrt_run_start": (i32, [vp, vp, vp, vp]),
            "twrt_run_free": (None, [vp]),
            "twrt_runs_new": (
                i32,
                [vp, ctypes.POINTER(DeviceInfo), ctypes.POINTER(RunSpec), i32, vp],
            ),
            "twrt_runs_free": (None, [vp]),
            "twrt_resume": (i64, [vp, i32]),
            "twrt_call": (i32, [vp]),
            "twrt_run_request": (
                ctypes.c_char_p,
                [vp, ctypes.POINTER(i32), ctypes.POINTER(i64)],
            ),
            "twrt_run_reply": (None, [vp, i64]),
            "twrt_run_error": (
                ctypes.c_char_p,
                [
                    vp,
                    ctypes.POINTER(i32),
                    ctypes.POINTER(i32),
                    ctypes.POINTER(ctypes.c_char_p),
                    ctypes.POINTER(i32),
                ],
            ),
            "twrt_run_fault": (
                None,
                [
                    vp,
                    ctypes.POINTER(i32),
                    ctypes.POINTER(ctypes.c_uint64),
                    ctypes.POINTER(ctypes.c_uint64),
                    ctypes.POINTER(ctypes.c_char_p),
                    ctypes.POINTER(i32),
                ],
            ),
            "twrt_run_rc": (i32, [vp]),
            "twrt_run_error_message": (i32, [vp]),
            "twrt_run_guard": (ctypes.c_uint64, [vp, ctypes.POINTER(ctypes.c_uint64)]),
            "twrt_run_dst": (ctypes.POINTER(ctypes.c_float), [vp]),
            "twrt_set_sgemm": (None, [vp, i32]),
            "twrt_matmul_batched": (i32, []),
            "twrt_window_range": (ctypes.c_uint64, []),
            "twrt_interrupt": (i32, [ctypes.c_ulong, i32]),
            "twrt_sigint_arm": (None, [i32, ctypes.c_ulong]),
            "twrt_test_decode": (i32, [u32, vp, vp]),
            "twrt_test_encode": (i32, [u32, vp, vp]),
            "twrt_test_codec_simd": (i32, [i32]),
            "twrt_perf_pages": (
                ctypes.c_uint64,
                [vp, vp, ctypes.c_uint64, u32, i32, vp, i32, u32, i32],
            ),
            "twrt_test_dst_round": (None, [vp, vp]),
            "twrt_test_dst_accumulate": (None, [vp, vp, i32, i32]),
        }
        self._fns: dict[str, Any] = {}
        for name, (restype, argtypes) in sig.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
            self._fns[name[5:]] = fn  # twrt_resume -> self.resume
        _bind_sgemm(self)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_fns"][name]
        except KeyError:
            raise AttributeError(name) from None


_LOCK = threading.Lock()
_RUNTIMES: dict[str, Runtime] = {}
"""Compiler -> the one runtime library loaded in this process for it."""


def library() -> Runtime:
    """The runtime library (built on first use, then loaded once per process).

    One instance per process: the fibers, the current run and the identity window are
    its globals, so a kernel object linked against a second copy (e.g. one built in
    another cache directory after ``configure(cache_dir=...)``) would not see the run it
    is part of.  Kernel objects link against the loaded copy's file; if that file was
    removed, an identical copy is built in the current cache to link against (same
    soname, so the loader binds kernel objects to the instance already loaded).
    """
    opts = toolchain.OPTIONS
    compiler = opts.resolved_compiler()
    rt = _RUNTIMES.get(compiler)
    if rt is not None and rt.path.is_file():
        return rt
    with _LOCK:
        rt = _RUNTIMES.get(compiler)
        if rt is None:
            rt = _RUNTIMES[compiler] = Runtime(_build(compiler, opts.resolved_cache_dir()))
        elif not rt.path.is_file():
            rt.path = _build(compiler, opts.resolved_cache_dir())
            rt.directory = rt.path.parent
    return rt


def _build(compiler: str, cache: Path) -> Path:
    """The runtime library of this build key in ``cache`` (built if missing or damaged).

    The build happens in a temporary directory renamed into place (atomic); the object's
    SHA-256 is written next to it and checked before the library is loaded, so a damaged
    copy (a bit flip, a truncation) is rebuilt instead of crashing the dynamic loader.
    Temporary directories of killed builds are removed once they are stale.
    """
    what = "the native runtime's build cache"
    digest = _key(compiler)
    parent = cache / "runtime"
    directory = parent / digest
    target = directory / f"libtwrt-{digest}.so"
    stamp = directory / f"libtwrt-{digest}.sha256"
    if _intact(target, stamp):
        return target
    make_dir(parent, what)
    remove_stale_builds(parent, "twrt-")
    try:
        work = Path(tempfile.mkdtemp(prefix="twrt-", dir=parent))
    except OSError as exc:
        raise unusable_cache(parent, exc, what) from None
    try:
        for name, text in _generated().items():
            (work / name).write_text(text)
        for name in os.listdir(SOURCE_DIR):
            shutil.copy(SOURCE_DIR / name, work / name)
        out = work / target.name
        # One compile per source, as many at once as there are cores (about 6 s of CPU with
        # g++ 12 at -O3, compute.cpp a third of it: longest first), then one link.
        compile_flags = [f for f in _FLAGS if f != "-shared"]
        includes = [f"-I{work}", f"-I{include_dir()}"]
        order = sorted(SOURCES, key=lambda name: -(SOURCE_DIR / name).stat().st_size)
        objects = {name: work / f"{name}.o" for name in SOURCES}
        toolchain.in_parallel(
            partial(
                _run,
                [
                    compiler,
                    *compile_flags,
                    *includes,
                    "-c",
                    "-o",
                    str(objects[name]),
                    str(work / name),
                ],
            )
            for name in order
        )
        _run(
            [
                compiler,
                *_FLAGS,
                f"-Wl,-soname,{target.name}",
                "-o",
                str(out),
                *[str(objects[name]) for name in SOURCES],
            ]
        )
        (work / stamp.name).write_text(file_hash(str(out)) or "")
        if directory.exists():  # a damaged copy: move it out of the way first
            discard(directory, "twrt-")
        try:
            os.replace(work, directory)  # atomic: a concurrent build of the same key may win
        except OSError as exc:
            if not _intact(target, stamp):
                raise unusable_cache(directory, exc, what) from None
    except OSError as exc:
        raise unusable_cache(parent, exc, what) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _run(command: list[str]) -> None:
    proc = toolchain.run_compiler(command)
    if proc.returncode != 0:
        raise NativeBuildError(
            f"building the native runtime failed (compiler exit status {proc.returncode}):\n"
            f"{proc.stderr or proc.stdout}",
            hint="the runtime needs a C++20 compiler for x86-64 Linux (g++ >= 11 or clang >= 14)",
        )


def _intact(target: Path, stamp: Path) -> bool:
    """The library exists and has the SHA-256 recorded when it was built."""
    try:
        recorded = stamp.read_text(encoding="ascii").strip() if stamp.stat().st_size < 256 else ""
    except (OSError, ValueError):
        return False
    return bool(recorded) and file_hash(str(target)) == recorded


# -- numpy's sgemm ---------------------------------------------------------------------------


def _bind_sgemm(rt: Runtime) -> None:
    """Give the runtime the sgemm numpy's matmul calls (same kernels, same rounding)."""
    found = numpy_sgemm()
    if found is not None:
        address, ilp64 = found
        rt.set_sgemm(address, ilp64)
