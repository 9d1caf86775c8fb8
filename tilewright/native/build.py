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
  contents, so editing an included header rebuilds (ccache's "direct mode").

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
from dataclasses import dataclass, field
from pathlib import Path

from tilewright.errors import NativeBuildError, SourceLoc
from tilewright.native import toolchain
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
]

_VERIFIED: dict[tuple[str, str], str] = {}
"""(cache directory, primary key) -> object path verified in this process."""
_FILE_HASHES: dict[tuple[str, int, int], str] = {}


@dataclass(frozen=True, slots=True)
class BuildResult:
    path: str
    key: str
    cached: bool
    seconds: float
    command: tuple[str, ...] = field(default=())


def _file_hash(path: str) -> str | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (path, st.st_mtime_ns, st.st_size)
    digest = _FILE_HASHES.get(key)
    if digest is None:
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        _FILE_HASHES[key] = digest
    return digest


def _flags(opts: BuildOptions, include_paths) -> list[str]:
    runtime = library()
    flags = [opts.opt_level, *BASE_FLAGS, *opts.extra_flags]
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
) -> BuildResult:
    """Compile ``source`` into a shared object (or reuse the cached one); return its path."""
    opts = options or toolchain.OPTIONS
    start = time.perf_counter()
    compiler = opts.resolved_compiler()
    flags = _flags(opts, [str(p) for p in include_paths])
    link = _link_args()
    primary = hashlib.sha256(
        "\0".join([source, compiler_identity(compiler), *flags, *link]).encode()
    ).hexdigest()
    cache = opts.resolved_cache_dir()
    key = (str(cache), primary)
    verified = _VERIFIED.get(key)
    if verified is not None and os.path.exists(verified):
        return BuildResult(verified, primary, True, time.perf_counter() - start)
    bucket = cache / primary[:2]
    manifest_path = bucket / f"{primary}.json"
    cached = _lookup(manifest_path)
    if cached is not None:
        _VERIFIED[key] = cached
        return BuildResult(cached, primary, True, time.perf_counter() - start)
    bucket.mkdir(parents=True, exist_ok=True)
    path, command = _compile(source, compiler, flags, link, bucket, primary, what, loc, opts, cache)
    _VERIFIED[key] = path
    return BuildResult(path, primary, False, time.perf_counter() - start, tuple(command))


def _lookup(manifest_path: Path) -> str | None:
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError):
        return None
    obj = manifest_path.parent / manifest.get("object", "")
    if not obj.is_file():
        return None
    for dep, digest in manifest.get("deps", ()):
        if _file_hash(dep) != digest:
            return None
    return str(obj)


def _compile(source, compiler, flags, link, bucket: Path, primary, what, loc, opts, cache: Path):
    work = Path(tempfile.mkdtemp(prefix="build-", dir=bucket))
    try:
        src = work / "extern_call.cpp"
        src.write_text(source)
        obj = work / "out.so"
        dep_file = work / "deps.d"
        command = [compiler, *flags, "-MMD", "-MF", str(dep_file), "-o", str(obj), str(src), *link]
        try:
            # LC_ALL=C: plain ASCII quotes in diagnostics, whatever the user's locale.
            proc = subprocess.run(
                command,
                check=False,
                capture_output=True,
                text=True,
                timeout=opts.timeout,
                cwd=work,
                env=dict(os.environ, LC_ALL="C"),
            )
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
        deps = _parse_deps(dep_file.read_text() if dep_file.exists() else "", str(src))
        records = [[d, _file_hash(d)] for d in deps]
        full = hashlib.sha256(
            (primary + "".join(f"{d}\0{h}" for d, h in records)).encode()
        ).hexdigest()
        final = bucket / f"{full}.so"
        os.replace(obj, final)
        manifest = {"object": final.name, "deps": records, "what": what}
        tmp_manifest = work / "manifest.json"
        tmp_manifest.write_text(json.dumps(manifest))
        os.replace(tmp_manifest, bucket / f"{primary}.json")
        return str(final), command
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _parse_deps(text: str, source_path: str) -> list[str]:
    """Header paths from a make-style dependency file (``-MMD``)."""
    body = text.replace("\\\n", " ")
    _, _, rest = body.partition(":")
    paths = []
    for token in re.split(r"(?<!\\)\s+", rest.strip()):
        token = token.replace("\\ ", " ")
        if token and os.path.abspath(token) != os.path.abspath(source_path):
            paths.append(os.path.abspath(token))
    return sorted(set(paths))


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
