"""Precompiled headers of the kernel build: parsed once per compiler and flag set, shared
by every process that uses the build cache.

Most of a kernel's front-end time is the C++ standard library its API includes (about 30k
lines: 0.15-0.25 s CPU of a 0.3-0.4 s build with g++ 12).  Every kernel translation unit
starts with ``#include "tilewright/kernel_std.h"`` (those headers, nothing a kernel's
defines change), and the build puts :func:`search_dir` first on the include path: GCC
looks for ``<dir>/tilewright/kernel_std.h.gch`` before the header itself and, finding a
valid one, loads it instead of parsing (GCC manual, "Using Precompiled Headers").  The
object code is the same either way; only the parse is skipped.

Layout: ``<cache>/pch/<key>/tilewright/kernel_std.h.gch`` and ``<key>/manifest.json``.
The key hashes the compiler's identity, the code-generation flags (GCC rejects a PCH
built with other ``-O``/``-f``/``-g`` flags) and the header's text, so it is known
without building.  The manifest records the PCH's SHA-256 and every header it was built
from (``-MD``: the system headers too) with theirs; a process uses the PCH only after
checking both once (then by ``stat``), and rebuilds a damaged, truncated or stale one.
Builds happen in a temporary directory (``<cache>/pch/build-*``) whose PCH and manifest
are renamed into place as one directory, so concurrent builders (threads of one launch,
or other processes) leave one complete, vouched-for PCH and a reader never sees a partial
one; within a process one lock per key makes the threads of a launch build it once.

Compilers other than GCC look a ``.gch`` up only for ``-include`` (clang): for them
:func:`search_dir` is None and kernels parse the header as before (docs/cpp-kernels.md).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from tilewright.errors import NativeBuildError
from tilewright.native import toolchain
from tilewright.native.cachefs import (
    Signature,
    discard,
    file_hash,
    make_dir,
    parse_deps,
    signature,
    unusable_cache,
)
from tilewright.native.toolchain import INCLUDE_DIR, compiler_identity

__all__ = ["Prelude", "KERNEL_STD", "pch_flags", "search_dir", "ensure", "unbuilt", "is_gcc"]


@dataclass(frozen=True, slots=True)
class Prelude:
    """A header a translation unit includes before anything else, precompiled: ``name`` as
    the ``#include`` spells it, found under ``root`` (an include directory of the build)."""

    root: Path
    name: str

    @property
    def path(self) -> Path:
        return self.root / self.name

    @property
    def include_line(self) -> str:
        return f'#include "{self.name}"'


KERNEL_STD = Prelude(INCLUDE_DIR, "tilewright/kernel_std.h")
"""The standard headers of the kernel API: the first include of every C++ kernel."""

_MAX_MANIFEST = 1 << 20
_LOCKS: dict[Path, threading.Lock] = {}
_LOCKS_LOCK = threading.Lock()
_VERIFIED: dict[Path, tuple[tuple[str, Signature | None], ...]] = {}
"""PCH directory -> the PCH and its headers as verified in this process (``stat``)."""


def is_gcc(compiler: str) -> bool:
    """Whether the compiler is GCC (which finds ``<header>.gch`` for an ``#include``)."""
    banner = compiler_identity(compiler).partition("\n")[2]
    return "Free Software Foundation" in banner and "clang" not in banner.lower()


def pch_flags(flags: list[str]) -> list[str]:
    """The code-generation flags of a build (what GCC checks a PCH against): without
    linking (``-shared``, ``-Wl,...``) and include directories (the standard headers are
    found without them)."""
    return [f for f in flags if f != "-shared" and not f.startswith(("-Wl,", "-I"))]


def search_dir(prelude: Prelude, compiler: str, flags: list[str], cache: Path) -> Path | None:
    """The include directory holding the prelude's PCH for these flags (not built here:
    see :func:`ensure`); None when the compiler cannot use one."""
    if not is_gcc(compiler):
        return None
    text = file_hash(str(prelude.path))
    if text is None:
        raise NativeBuildError(f"the kernel prelude header {prelude.path} is missing")
    key = hashlib.sha256(
        "\0".join([compiler_identity(compiler), *pch_flags(flags), prelude.name, text]).encode()
    ).hexdigest()
    return cache / "pch" / key[:32]


def ensure(prelude: Prelude, compiler: str, flags: list[str], where: Path, timeout: float) -> None:
    """Make ``where`` (from :func:`search_dir`) hold a verified PCH of ``prelude``: reuse
    it if it and every header it was built from are intact, else build it."""
    if _current(where):
        return
    with _lock(where):
        if _current(where):
            return
        found = _lookup(where, prelude.name)
        if found is None:
            found = _build(prelude, compiler, flags, where, timeout)
        _VERIFIED[where] = found


def unbuilt(where: Path) -> bool:
    """Whether ``where`` certainly needs a build (no manifest yet): one ``stat``, so a
    build can start it early (``build.prepare``) without verifying a PCH it will reuse."""
    return where not in _VERIFIED and not (where / "manifest.json").exists()


def _current(where: Path) -> bool:
    files = _VERIFIED.get(where)
    return files is not None and all(signature(p) == sig for p, sig in files)


def _install(staged: Path, where: Path, header: str, records: list) -> tuple:
    """Put a built PCH and its manifest in place together: their directory renamed to
    ``where`` (atomic).  Replaced one file at a time, two concurrent builders could leave
    one's PCH with the other's manifest (two builds of a header differ byte for byte),
    which every reader then rebuilt.  Where another builder's whole PCH is already in
    place it is used (and ours discarded with the build directory); a damaged one is moved
    aside first."""
    for _attempt in range(3):
        try:
            os.rename(staged, where)  # fails if ``where`` exists and is not empty
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise unusable_cache(where, exc) from None
            found = _lookup(where, header)
            if found is not None:
                return found
            discard(where, "build-")
            continue
        gch = where / f"{header}.gch"
        return ((str(gch), signature(str(gch))), *((d, signature(d)) for d, _h in records))
    raise NativeBuildError(f"cannot put the precompiled header in place at {where}")


def _lock(where: Path) -> threading.Lock:
    with _LOCKS_LOCK:
        return _LOCKS.setdefault(where, threading.Lock())


def _lookup(where: Path, header: str) -> tuple[tuple[str, Signature | None], ...] | None:
    """The PCH's files if its manifest, the PCH and every recorded header are intact."""
    manifest_path = where / "manifest.json"
    sig = signature(str(manifest_path))
    if sig is None or sig[3] > _MAX_MANIFEST:
        return None
    try:
        manifest = json.loads(manifest_path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict):
        return None
    digest, deps = manifest.get("sha256"), manifest.get("deps")
    if not isinstance(digest, str) or not isinstance(deps, list):
        return None
    gch = where / f"{header}.gch"
    if gch.is_symlink() or file_hash(str(gch)) != digest:
        return None  # missing, replaced by a link, bit-flipped or truncated: rebuild
    files = [(str(gch), signature(str(gch)))]
    for dep in deps:
        if not (isinstance(dep, list) and len(dep) == 2 and all(isinstance(x, str) for x in dep)):
            return None
        if file_hash(dep[0]) != dep[1]:
            return None  # a header changed (a library upgrade): rebuild
        files.append((dep[0], signature(dep[0])))
    return tuple(files)


def _build(prelude: Prelude, compiler, flags, where: Path, timeout) -> tuple:
    header = prelude.name
    parent = where.parent
    make_dir(parent)
    try:
        work = Path(tempfile.mkdtemp(prefix="build-", dir=parent))
    except OSError as exc:
        raise unusable_cache(parent, exc) from None
    try:
        out = work / "out.gch"
        dep_file = work / "deps.d"
        source = prelude.path
        command = [
            compiler,
            *pch_flags(flags),
            "-x",
            "c++-header",
            "-MD",
            "-MF",
            str(dep_file),
            "-o",
            str(out),
            str(source),
        ]
        try:
            proc = toolchain.run_compiler(command, work, timeout)
        except subprocess.TimeoutExpired:
            raise NativeBuildError(
                f"precompiling {header} did not finish within {timeout:.0f} s"
            ) from None
        except OSError as exc:
            raise NativeBuildError(f"cannot run the C++ compiler {compiler!r}: {exc}") from None
        if proc.returncode != 0:
            messages = (proc.stderr or proc.stdout or "").strip()
            raise NativeBuildError(
                f"precompiling the kernel prelude {source} failed "
                f"(compiler exit status {proc.returncode})\n--- compiler output ---\n{messages}",
                hint="the header lists standard C++ headers only: check the compiler's "
                "installation (its libstdc++ headers)",
            )
        deps = parse_deps(dep_file.read_text() if dep_file.exists() else "", str(source))
        records = [[d, file_hash(d) or ""] for d in deps]
        manifest = {"sha256": file_hash(str(out)), "deps": records, "header": header}
        staged = work / "staged"
        try:
            make_dir((staged / f"{header}.gch").parent)
            os.replace(out, staged / f"{header}.gch")
            (staged / "manifest.json").write_text(json.dumps(manifest))
        except OSError as exc:
            raise unusable_cache(work, exc) from None
        return _install(staged, where, header, records)
    finally:
        shutil.rmtree(work, ignore_errors=True)
