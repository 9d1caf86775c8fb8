"""Files of the native build caches, handled defensively (kernel objects and the runtime).

Shared by :mod:`.build` (kernel and external-call objects) and :mod:`.runtime` (the
runtime library): content hashes of regular files of bounded size, ``stat`` signatures
that tell a changed file from an unchanged one cheaply, cache directories that are
created or reported (a :class:`~tilewright.errors.NativeBuildError` naming the path,
never a ``pathlib`` traceback), and the removal of temporary build directories that a
killed build left behind.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import time
from pathlib import Path

from tilewright.errors import NativeBuildError

__all__ = [
    "STALE_SECONDS",
    "Signature",
    "FILE_HASHES",
    "signature",
    "file_hash",
    "unusable_cache",
    "make_dir",
    "remove_stale_builds",
    "discard",
    "parse_deps",
]

STALE_SECONDS = 15 * 60
"""A temporary build directory older than this is debris of a killed build (a compile
times out after ``BuildOptions.timeout``, 300 s by default)."""
_MAX_HASHED = 256 << 20  # a header or object larger than this is not one Tilewright wrote

Signature = tuple[int, int, int, int]
"""(device, inode, mtime_ns, size) of a regular file."""

FILE_HASHES: dict[tuple[str, Signature], str] = {}
"""(path, signature) -> SHA-256: a file is hashed again only once it changed."""


def signature(path: str) -> Signature | None:
    """What ``stat`` says about a regular file (None: missing, or not a regular file)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


def file_hash(path: str) -> str | None:
    """SHA-256 of a regular file of bounded size (None: missing, special or too large)."""
    sig = signature(path)
    if sig is None or sig[3] > _MAX_HASHED:
        return None
    key = (path, sig)
    digest = FILE_HASHES.get(key)
    if digest is None:
        h = hashlib.sha256()
        try:
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
        except OSError:
            return None
        digest = FILE_HASHES[key] = h.hexdigest()
    return digest


def unusable_cache(
    path: Path, exc: OSError, what: str = "the native build cache"
) -> NativeBuildError:
    """The error for a cache directory that cannot be used (it names the path)."""
    reason = exc.strerror or str(exc)
    return NativeBuildError(
        f"{what} cannot be used: {path}: {reason}",
        rule="build-environment",
        hint="make the directory writable, remove the file in its way, or choose another cache "
        "(XDG_CACHE_HOME, or tilewright.native.configure(cache_dir=...))",
    )


def make_dir(path: Path, what: str = "the native build cache") -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise unusable_cache(path, exc, what) from None
    if not path.is_dir():  # pragma: no cover - mkdir(exist_ok) raises for a file in the way
        raise unusable_cache(path, NotADirectoryError(20, "not a directory"), what)


def discard(directory: Path, prefix: str) -> None:
    """Move a damaged build directory aside as ``<prefix>damaged-<pid>-<name>`` (a process
    using its files keeps them open or mapped), then remove it; what a failed removal
    leaves is stale-build debris that :func:`remove_stale_builds` (same prefix) removes."""
    aside = directory.with_name(f"{prefix}damaged-{os.getpid()}-{directory.name}")
    try:
        os.replace(directory, aside)
    except OSError:
        return
    shutil.rmtree(aside, ignore_errors=True)


def remove_stale_builds(parent: Path, prefix: str, max_age: float = STALE_SECONDS) -> int:
    """Remove ``parent/<prefix>*`` directories older than ``max_age`` seconds (debris of
    builds that were killed); returns how many were removed."""
    removed = 0
    now = time.time()
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return 0
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and now - st.st_mtime > max_age:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed += 1
    return removed


def parse_deps(text: str, source_path: str) -> list[str]:
    """Header paths from a make-style dependency file (``-MMD``)."""
    body = text.replace("\\\n", " ")
    _, _, rest = body.partition(":")
    paths = []
    for token in re.split(r"(?<!\\)\s+", rest.strip()):
        token = token.replace("\\ ", " ")
        if token and os.path.abspath(token) != os.path.abspath(source_path):
            paths.append(os.path.abspath(token))
    return sorted(set(paths))
