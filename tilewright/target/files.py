"""Reading and writing descriptor files, the format chosen by extension.

=========  ==========================================================================
``.ttsys``  size-prefixed FlatBuffer (:mod:`ttsys`), the runtime's and tt-mlir's format
``.json``   ``ttrt query``-style JSON of the whole root (:mod:`jsonform`)
``.mlir``   an MLIR module with ``#system_desc = #ttcore.system_desc<...>`` (:mod:`text`)
=========  ==========================================================================

The text form has no envelope (version, schema hash, git hash): reading ``.mlir`` wraps the
descriptor in the tt-mlir HEAD envelope unless told otherwise, and writing ``.mlir`` drops
it.

Reads are bounded: only regular files (a FIFO would block forever, ``/dev/zero`` never
ends, a directory is no descriptor) of at most :data:`MAX_DESCRIPTOR_BYTES`; every
refusal and every file-system error while reading is a :class:`SystemDescError` naming
the path.  Errors while writing (``OSError``) propagate unchanged.
"""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import Final

from tilewright.errors import SystemDescError
from tilewright.target.jsonform import from_json, to_json
from tilewright.target.model import SystemDesc, SystemDescRoot, Version
from tilewright.target.schema_hashes import make_root, resolve_schema_hash
from tilewright.target.text import parse_system_desc, print_mlir_module
from tilewright.target.ttsys import decode_ttsys, encode_ttsys

__all__ = [
    "FORMATS",
    "MAX_DESCRIPTOR_BYTES",
    "file_format",
    "read_descriptor_bytes",
    "read_system_desc",
    "write_system_desc",
]

#: Extension → format name.
FORMATS: Final = {".ttsys": "ttsys", ".json": "json", ".mlir": "mlir"}

MAX_DESCRIPTOR_BYTES: Final = 1 << 20
"""Largest descriptor file read (1 MiB; the largest real one, an 8-chip n300-llmbox
``.ttsys``, is 3984 bytes, and its JSON and MLIR forms are a few times that)."""

_FILE_KINDS: Final = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_descriptor_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a descriptor file: a regular file of at most ``MAX_DESCRIPTOR_BYTES``.

    Opens without blocking (a FIFO cannot hang the reader), checks the opened file itself
    (no race with a swapped path), and never reads more than the cap plus one byte.

    Raises:
        SystemDescError: not a regular file, too large, or unreadable (naming the path).
    """
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise SystemDescError(f"{name}: cannot read: {err.strerror or err}", field="path") from None
    try:
        info = os.fstat(fd)
        for is_kind, kind in _FILE_KINDS:
            if is_kind(info.st_mode):
                raise SystemDescError(
                    f"{name}: is {kind}, not a descriptor file (.ttsys, .json, .mlir)",
                    field="path",
                )
        if not stat.S_ISREG(info.st_mode):  # pragma: no cover - every other kind is listed
            raise SystemDescError(f"{name}: not a regular file", field="path")
        too_big = SystemDescError(
            f"{name}: larger than {MAX_DESCRIPTOR_BYTES} bytes, the most a descriptor file may "
            "have (the largest real one is 3984 bytes)",
            field="path",
        )
        if info.st_size > MAX_DESCRIPTOR_BYTES:
            raise too_big
        chunks, size = [], 0
        while size <= MAX_DESCRIPTOR_BYTES:  # st_size can lie (/proc files): read bounded
            chunk = os.read(fd, MAX_DESCRIPTOR_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_DESCRIPTOR_BYTES:
            raise too_big
        return b"".join(chunks)
    except OSError as err:
        raise SystemDescError(f"{name}: cannot read: {err.strerror or err}", field="path") from None
    finally:
        os.close(fd)


def file_format(path: str | os.PathLike[str]) -> str:
    """``"ttsys"``, ``"json"`` or ``"mlir"`` from the file extension.

    Raises:
        SystemDescError: any other extension.
    """
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise SystemDescError(
            f"{os.fspath(path)}: unknown descriptor extension {suffix!r}; use {', '.join(FORMATS)}",
            field="path",
        )
    return FORMATS[suffix]


def read_system_desc(
    path: str | os.PathLike[str],
    *,
    strict: bool = False,
    schema_hash: str | None = None,
    version: Version | str | None = None,
    ttmlir_git_hash: str | None = None,
) -> SystemDescRoot:
    """Read a ``.ttsys``, ``.json`` or ``.mlir`` descriptor.

    Args:
        path: the file.
        strict: ``.ttsys`` only: reject fields in unknown vtable slots (§11 rule 4).
        schema_hash, version, ttmlir_git_hash: ``.mlir`` only: the envelope to wrap the
            text in (default: tt-mlir HEAD, see :func:`schema_hashes.make_root`).

    Raises:
        SystemDescError: unknown extension, not a regular file of at most
            ``MAX_DESCRIPTOR_BYTES``, unreadable, or malformed content.
    """
    fmt = file_format(path)
    data = read_descriptor_bytes(path)
    if fmt == "ttsys":
        return decode_ttsys(data, strict=strict)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SystemDescError(
            f"{os.fspath(path)}: not UTF-8 text (byte {err.start})", offset=err.start
        ) from None
    if fmt == "json":
        return from_json(text)
    system_desc = parse_system_desc(text, source=os.fspath(path))
    return make_root(
        system_desc, schema_hash=schema_hash, version=version, ttmlir_git_hash=ttmlir_git_hash
    )


def write_system_desc(
    obj: SystemDescRoot | SystemDesc,
    path: str | os.PathLike[str],
    *,
    schema_hash: str | None = None,
) -> None:
    """Write a descriptor as ``.ttsys``, ``.json`` or ``.mlir``.

    Args:
        obj: a root, or a bare descriptor (wrapped in the tt-mlir HEAD envelope).
        path: the file; its extension picks the format.
        schema_hash: override the stored hash (``"head"``, a tt-mlir commit or 64 hex
            digits); None keeps the root's.

    Raises:
        SystemDescError: unknown extension, unrepresentable values, or (``.mlir``) a
            descriptor the text form cannot carry (§11 rule 25).
    """
    fmt = file_format(path)
    root = obj if isinstance(obj, SystemDescRoot) else make_root(obj)
    if schema_hash is not None:
        root = replace(root, schema_hash=resolve_schema_hash(schema_hash))
    if fmt == "ttsys":
        data = encode_ttsys(root)
    elif fmt == "json":
        data = to_json(root).encode("utf-8")
    else:
        data = print_mlir_module(root).encode("utf-8")
    Path(path).write_bytes(data)
