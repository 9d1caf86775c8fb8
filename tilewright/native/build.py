"""JIT builds of native code: C++ source -> shared object, cached by content.

``build_shared_object(source, include_paths=...)`` compiles one translation unit with
the host C++ compiler (``$CXX``, else ``c++`` / ``g++`` / ``clang++`` on ``PATH``)
into a position-independent shared object and returns its path.  Objects are cached
in a user cache directory (``BuildOptions.cache_dir``, else
``$XDG_CACHE_HOME/tilewright/native``, else ``~/.cache/tilewright/native``):

* the *primary key* hashes the source text, the compiler's identity and version, the
  flags and the include directories;
* a manifest stored under the primary key lists every header the compiler read
  (``-MMD``: the user's headers and Tilewright's emulation headers, not the system
  ones, which the compiler version covers) with the SHA-256 of its contents;
* a lookup reuses the object only if every listed header still has the recorded
  contents, so editing an included header rebuilds (ccache's "direct mode");
* a source that starts with a *prelude* (kernels: the standard headers of the kernel
  API) is compiled with that header precompiled (:mod:`.pch`): its PCH directory, named
  by the PCH's own key, is on the include path and so in the primary key.

The cache is not trusted blindly (docs/robustness.md#build-cache):

* the manifest records the object's SHA-256; a lookup verifies it before the object is
  handed out for loading, and rebuilds a damaged one (a bit flip or a truncation would
  otherwise crash the dynamic loader);
* the manifest names its object by file name only (the content hash and ``.so``): a
  manifest pointing anywhere else (another directory, a symlink) is ignored and rebuilt;
  manifests, headers and objects are read bounded (regular files of limited size);
* within a process, a verified object is re-checked at every lookup by ``stat`` of its
  recorded headers and of itself (cheap), so a header edited while the process runs
  rebuilds on the next use; callers that keep a loaded object ask :func:`is_current`;
* builds happen in a temporary directory and are renamed into place, so a build killed
  half-way leaves no object or manifest behind, only its temporary directory, which
  later builds remove once it is older than ``STALE_SECONDS``;
* a cache directory that cannot be used (not writable, a file in the way) is a
  :class:`~tilewright.errors.NativeBuildError` naming the path.

Objects are written to a temporary name and renamed into place, so concurrent
builds of the same source are safe.  A failed build raises
:class:`~tilewright.errors.NativeBuildError` with the compiler's messages and the
generated source (also kept under ``<cache>/failed/`` for inspection); undefined
symbols fail at link time (``-Wl,-z,defs``) with the symbol named.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from tilewright.errors import NativeBuildError, SourceLoc
from tilewright.native import pch, toolchain
from tilewright.native.cachefs import (
    Signature,
    make_dir,
    parse_deps,
    remove_stale_builds,
    unusable_cache,
)
from tilewright.native.cachefs import file_hash as _file_hash
from tilewright.native.cachefs import signature as _signature
from tilewright.native.runtime import library
from tilewright.native.toolchain import (
    BASE_FLAGS,
    INCLUDE_DIR,
    BuildOptions,
    compiler_identity,
)

__all__ = [
    "BuildResult",
    "build_shared_object",
    "is_current",
    "prepare",
]

_MAX_MANIFEST = 1 << 20
_OBJECT_NAME = re.compile(r"[0-9a-f]{64}\.so")


@dataclass(frozen=True, slots=True)
class _Verified:
    """An object verified in this process, with what it was verified against."""

    path: str
    files: tuple[tuple[str, Signature | None], ...]  # the object and its headers, stat'ed


_VERIFIED: dict[tuple[str, str], _Verified] = {}
"""(cache directory, primary key) -> the object verified in this process."""
_CLEANED: set[str] = set()  # cache directories whose stale builds this process removed


@dataclass(frozen=True, slots=True)
class BuildResult:
    path: str
    key: str
    cached: bool
    seconds: float
    command: tuple[str, ...] = field(default=())
    cache: str = ""
    """The cache directory the object is in (with ``key``: what :func:`is_current` checks)."""


def is_current(result: BuildResult, seen: dict[str, object] | None = None) -> bool:
    """Whether ``result``'s object is still what a lookup would return: its headers and
    the object itself are unchanged since this process verified them (``stat`` only).
    ``seen``: the ``stat`` signatures already taken by this check's caller (a launch
    checks the kernels of one program, which share most headers, with one ``stat`` each)."""
    verified = _VERIFIED.get((result.cache, result.key))
    return verified is not None and verified.path == result.path and _unchanged(verified, seen)


def _unchanged(verified: _Verified, seen: dict[str, object] | None = None) -> bool:
    if seen is None:
        return all(_signature(path) == sig for path, sig in verified.files)
    for path, sig in verified.files:
        got = seen.get(path, _UNSEEN)
        if got is _UNSEEN:
            got = seen[path] = _signature(path)
        if got != sig:
            return False
    return True


_UNSEEN = object()


def _clean_once(cache: Path) -> None:
    """Once per process and cache directory: remove stale temporary build directories
    (of objects, ``<bucket>/build-*``, of precompiled headers, ``pch/build-*``, and of the
    runtime library, ``runtime/twrt-*``)."""
    key = str(cache)
    if key in _CLEANED:
        return
    _CLEANED.add(key)
    try:
        buckets = [e.path for e in os.scandir(cache) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for bucket in buckets:
        remove_stale_builds(Path(bucket), "build-")
    remove_stale_builds(cache / "runtime", "twrt-")


def _code_flags(opts: BuildOptions) -> list[str]:
    return [opts.opt_level, *BASE_FLAGS, *opts.extra_flags]


def _flags(opts: BuildOptions, include_paths, pch_dir: Path | None = None) -> list[str]:
    runtime = library()
    flags = _code_flags(opts)
    # The precompiled prelude's directory first: GCC finds <dir>/<prelude>.gch there and,
    # for a PCH it cannot use, goes on to the header itself in INCLUDE_DIR (native/pch.py).
    if pch_dir is not None:
        flags.append(f"-I{pch_dir}")
    # Tilewright's headers come first so their API names (api/dataflow/dataflow_api.h, ...)
    # win over a real tt-metal tree that may sit on a user include path; then the headers
    # generated for the runtime library every object links against (its path names its
    # content hash, so a new runtime is a new cache key).
    flags.append(f"-I{INCLUDE_DIR}")
    flags.append(f"-I{runtime.directory}")
    flags.extend(f"-I{p}" for p in include_paths)
    return flags


EXIT_WRAPS = ("exit", "_exit", "_Exit", "quick_exit", "abort", "__assert_fail")
"""Calls that would end the process, routed to the runtime (runtime/exits.cpp): inside a
kernel or an external call they end that run with an error at the call site."""


def _link_args() -> list[str]:
    """Link inputs after the source: the runtime library, found again through the rpath;
    the process-ending calls of the object wrapped by the runtime's."""
    runtime = library()
    wraps = ",".join(f"--wrap={name}" for name in EXIT_WRAPS)
    return [str(runtime.path), f"-Wl,-rpath,{runtime.directory}", f"-Wl,{wraps}"]


def build_shared_object(
    source: str,
    *,
    include_paths=(),
    what: str = "native code",
    loc: SourceLoc | None = None,
    options: BuildOptions | None = None,
    prelude: pch.Prelude | None = None,
) -> BuildResult:
    """Compile ``source`` into a shared object (or reuse the cached one); return its path.

    ``prelude``: the header ``source`` includes before anything else (``pch.KERNEL_STD``
    for kernels; its root must be on the include path), precompiled once per compiler and
    flag set (:mod:`.pch`)."""
    opts = options or toolchain.OPTIONS
    start = time.perf_counter()
    compiler = opts.resolved_compiler()
    cache = opts.resolved_cache_dir()
    pch_dir = None
    if prelude is not None:
        pch_dir = pch.search_dir(prelude, compiler, _code_flags(opts), cache)
        if pch_dir is not None and pch.unbuilt(pch_dir):
            prepare((prelude,), opts)  # a fresh cache: the PCH beside the runtime library
    flags = _flags(opts, [str(p) for p in include_paths], pch_dir)
    link = _link_args()
    primary = hashlib.sha256(
        "\0".join([source, compiler_identity(compiler), *flags, *link]).encode()
    ).hexdigest()
    key = (str(cache), primary)
    verified = _VERIFIED.get(key)
    if verified is not None and _unchanged(verified):
        return BuildResult(
            verified.path, primary, True, time.perf_counter() - start, (), str(cache)
        )
    bucket = cache / primary[:2]
    manifest_path = bucket / f"{primary}.json"
    found = _lookup(manifest_path)
    if found is not None:
        _VERIFIED[key] = found
        return BuildResult(found.path, primary, True, time.perf_counter() - start, (), str(cache))
    make_dir(bucket)
    _clean_once(cache)
    if prelude is not None and pch_dir is not None:
        pch.ensure(prelude, compiler, _code_flags(opts), pch_dir, opts.timeout)
    found, command = _compile(
        source, compiler, flags, link, bucket, primary, what, loc, opts, cache
    )
    _VERIFIED[key] = found
    return BuildResult(
        found.path, primary, False, time.perf_counter() - start, tuple(command), str(cache)
    )


def prepare(
    preludes: Sequence[pch.Prelude] = (pch.KERNEL_STD,), options: BuildOptions | None = None
) -> None:
    """Build what every native build with these options needs, side by side: the runtime
    library and the precompiled headers of ``preludes`` (reused when already built).

    A fresh cache's first kernel build needs both; one after the other (and the runtime's
    sources in one compiler process) they took 5.5 s on 2 cores with g++ 12, side by side
    3.7 s (with the runtime at -O3 since).  Benchmarks call this to measure
    an operation's own build; the first kernel build of a fresh cache calls it itself.
    The runtime library is the process's (``toolchain.OPTIONS``), as for every build."""
    opts = options or toolchain.OPTIONS
    compiler = opts.resolved_compiler()
    cache = opts.resolved_cache_dir()
    code = _code_flags(opts)
    jobs: list[Callable[[], object]] = [library]
    for prelude in preludes:
        where = pch.search_dir(prelude, compiler, code, cache)
        if where is not None:
            jobs.append(partial(pch.ensure, prelude, compiler, code, where, opts.timeout))
    toolchain.in_parallel(jobs)


def _read_manifest(path: Path) -> dict | None:
    """A manifest as written by :func:`_compile`, or None (missing, damaged, not ours)."""
    sig = _signature(str(path))
    if sig is None or sig[3] > _MAX_MANIFEST:
        return None
    try:
        manifest = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict):
        return None
    name, digest, deps = manifest.get("object"), manifest.get("sha256"), manifest.get("deps")
    if not isinstance(name, str) or not _OBJECT_NAME.fullmatch(name):
        return None  # only a content-named object in the manifest's own bucket
    if not isinstance(digest, str) or not isinstance(deps, list):
        return None
    if not all(
        isinstance(d, list) and len(d) == 2 and all(isinstance(x, str) for x in d) for d in deps
    ):
        return None
    return manifest


def _lookup(manifest_path: Path) -> _Verified | None:
    """The manifest's object if it and every recorded header are intact, else None."""
    manifest = _read_manifest(manifest_path)
    if manifest is None:
        return None
    obj = manifest_path.parent / manifest["object"]
    if obj.is_symlink() or _file_hash(str(obj)) != manifest["sha256"]:
        return None  # missing, replaced by a link, bit-flipped or truncated: rebuild
    files: list[tuple[str, Signature | None]] = [(str(obj), _signature(str(obj)))]
    for dep, digest in manifest["deps"]:
        if _file_hash(dep) != digest:
            return None
        files.append((dep, _signature(dep)))
    return _Verified(str(obj), tuple(files))


def _compile(source, compiler, flags, link, bucket: Path, primary, what, loc, opts, cache: Path):
    try:
        work = Path(tempfile.mkdtemp(prefix="build-", dir=bucket))
    except OSError as exc:
        raise unusable_cache(bucket, exc) from None
    try:
        src = work / "extern_call.cpp"
        src.write_text(source)
        obj = work / "out.so"
        dep_file = work / "deps.d"
        command = [compiler, *flags, "-MMD", "-MF", str(dep_file), "-o", str(obj), str(src), *link]
        try:
            proc = toolchain.run_compiler(command, work, opts.timeout)
        except subprocess.TimeoutExpired:
            raise NativeBuildError(
                f"C++ build of {what} did not finish within {opts.timeout:.0f} s", loc=loc
            ) from None
        except OSError as exc:
            raise NativeBuildError(
                f"cannot run the C++ compiler {compiler!r}: {exc}", loc=loc
            ) from None
        if proc.returncode != 0:
            raise _build_error(source, proc, what, loc, cache, primary, src)
        deps = parse_deps(dep_file.read_text() if dep_file.exists() else "", str(src))
        records: list[list[str]] = [[d, _file_hash(d) or ""] for d in deps]
        full = hashlib.sha256(
            (primary + "".join(f"{d}\0{h}" for d, h in records)).encode()
        ).hexdigest()
        final = bucket / f"{full}.so"
        object_hash = _file_hash(str(obj))
        manifest = {"object": final.name, "sha256": object_hash, "deps": records, "what": what}
        tmp_manifest = work / "manifest.json"
        try:
            tmp_manifest.write_text(json.dumps(manifest))
            # The object first, then its manifest: a build killed between the two renames
            # leaves an object no manifest names (rebuilt, and overwritten, next time).
            os.replace(obj, final)
            os.replace(tmp_manifest, bucket / f"{primary}.json")
        except OSError as exc:
            raise unusable_cache(bucket, exc) from None
        files = [(str(final), _signature(str(final)))] + [(d, _signature(d)) for d, _h in records]
        return _Verified(str(final), tuple(files)), command
    finally:
        shutil.rmtree(work, ignore_errors=True)


_UNDEFINED = re.compile(r"undefined reference to [`'‘](.+?)['’]")
_UNDECLARED = re.compile(r"[`'‘](\w+)['’] was not declared in this scope")


def _build_error(source, proc, what, loc, cache: Path, primary, src_path) -> NativeBuildError:
    failed = cache / "failed"
    kept = None
    try:
        failed.mkdir(parents=True, exist_ok=True)
        kept = failed / f"{primary[:16]}.cpp"
        kept.write_text(source)
    except OSError:  # the report still carries the source
        kept = None
    messages = (proc.stderr or proc.stdout or "").strip()
    if kept is not None:
        messages = messages.replace(str(src_path), str(kept))
    numbered = "\n".join(f"{i:4d} | {line}" for i, line in enumerate(source.splitlines(), 1))
    missing = sorted(set(_UNDEFINED.findall(messages)))
    undeclared = sorted(set(_UNDECLARED.findall(messages)))
    if undeclared and not missing:
        head = (
            f"C++ build of {what} failed: {', '.join(undeclared)} "
            f"{'is' if len(undeclared) == 1 else 'are'} not declared: not a tt-metal kernel API "
            "Tilewright provides (or a name the kernel forgot to declare)"
        )
        hint = (
            "docs/cpp-kernels.md lists the kernel API Tilewright emulates; LLK-level (llk_*) "
            "functions and a few helpers are not provided"
        )
    elif missing:
        head = (
            f"C++ build of {what} failed: undefined symbol(s) {', '.join(missing)} "
            "(declared but never defined)"
        )
        hint = "define the function in the header (inline), or remove the call"
    else:
        head = f"C++ build of {what} failed (compiler exit status {proc.returncode})"
        hint = "the compiler's messages name the file and line; the generated source is shown above"
    where = f" (kept at {kept})" if kept is not None else ""
    text = (
        f"{head}\n--- compiler output ---\n{messages}\n--- generated source{where} ---\n{numbered}"
    )
    err = NativeBuildError(text, loc=loc, hint=hint)
    err.compiler_output = messages
    err.source = source
    err.undefined_symbols = tuple(missing)
    return err
