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
from dataclasses import dataclass, field, replace
from pathlib import Path

from tilewright.errors import NativeBuildError, SourceLoc

__all__ = [
    "BuildOptions",
    "BuildResult",
    "OPTIONS",
    "configure",
    "include_dir",
    "build_shared_object",
    "compiler_identity",
]

INCLUDE_DIR = Path(__file__).resolve().parent / "include"

# Why each flag: C++20 (designated initializers of InterleavedAddrGen{.bank_base_address
# = ...}); -fvisibility=hidden so every object keeps its own bridge pointer and exports
# only its entry points; -fpermissive so tt-metal code written for 32-bit RISC-V
# (`(uint32_t)pointer`) compiles with a warning instead of an error; -z defs so an
# undefined symbol is a link error naming it, not a load-time surprise.
_BASE_FLAGS = (
    "-std=c++20",
    "-g1",  # line tables: a native fault is reported at its source line (addr2line)
    "-fPIC",
    "-shared",
    "-fvisibility=hidden",
    "-fvisibility-inlines-hidden",
    "-fpermissive",
    "-Wno-int-to-pointer-cast",
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
    _VERIFIED.clear()
    return OPTIONS


def include_dir() -> str:
    """Directory of Tilewright's tt-metal kernel-API emulation headers."""
    return str(INCLUDE_DIR)


@dataclass(frozen=True, slots=True)
class BuildResult:
    path: str
    key: str
    cached: bool
    seconds: float
    command: tuple[str, ...] = field(default=())


_COMPILER_IDS: dict[str, str] = {}
_VERIFIED: dict[str, str] = {}  # primary key -> object path verified in this process
_FILE_HASHES: dict[tuple[str, int, int], str] = {}


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
    from tilewright.native.runtime import library

    runtime = library()
    flags = [opts.opt_level, *_BASE_FLAGS, *opts.extra_flags]
    # Tilewright's headers come first so their API names (api/dataflow/dataflow_api.h, ...)
    # win over a real tt-metal tree that may sit on a user include path; then the headers
    # generated for the runtime library every object links against (its path names its
    # content hash, so a new runtime is a new cache key).
    flags.append(f"-I{INCLUDE_DIR}")
    flags.append(f"-I{runtime.directory}")
    flags.extend(f"-I{p}" for p in include_paths)
    return flags


def _link_args() -> list[str]:
    """Link inputs after the source: the runtime library, found again through the rpath."""
    from tilewright.native.runtime import library

    runtime = library()
    return [str(runtime.path), f"-Wl,-rpath,{runtime.directory}"]


def build_shared_object(
    source: str,
    *,
    include_paths=(),
    what: str = "native code",
    loc: SourceLoc | None = None,
    options: BuildOptions | None = None,
) -> BuildResult:
    """Compile ``source`` into a shared object (or reuse the cached one); return its path."""
    opts = options or OPTIONS
    start = time.perf_counter()
    compiler = opts.resolved_compiler()
    flags = _flags(opts, [str(p) for p in include_paths])
    link = _link_args()
    primary = hashlib.sha256(
        "\0".join([source, compiler_identity(compiler), *flags, *link]).encode()
    ).hexdigest()
    verified = _VERIFIED.get(primary)
    if verified is not None and os.path.exists(verified):
        return BuildResult(verified, primary, True, time.perf_counter() - start)
    cache = opts.resolved_cache_dir()
    bucket = cache / primary[:2]
    manifest_path = bucket / f"{primary}.json"
    cached = _lookup(manifest_path)
    if cached is not None:
        _VERIFIED[primary] = cached
        return BuildResult(cached, primary, True, time.perf_counter() - start)
    bucket.mkdir(parents=True, exist_ok=True)
    path, command = _compile(source, compiler, flags, link, bucket, primary, what, loc, opts, cache)
    _VERIFIED[primary] = path
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
