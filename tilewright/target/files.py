"""Reading and writing descriptor files, the format chosen by extension.

=========  ==========================================================================
``.ttsys``  size-prefixed FlatBuffer (:mod:`ttsys`), the runtime's and tt-mlir's format
``.json``   ``ttrt query``-style JSON of the whole root (:mod:`jsonform`)
``.mlir``   an MLIR module with ``#system_desc = #ttcore.system_desc<...>`` (:mod:`text`)
=========  ==========================================================================

The text form has no envelope (version, schema hash, git hash): reading ``.mlir`` wraps the
descriptor in the tt-mlir HEAD envelope unless told otherwise, and writing ``.mlir`` drops
it.  File-system errors (``OSError``) propagate unchanged.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Final

from tilewright.errors import SystemDescError
from tilewright.target.jsonform import from_json, to_json
from tilewright.target.model import SystemDesc, SystemDescRoot, Version
from tilewright.target.schema_hashes import make_root, resolve_schema_hash
from tilewright.target.text import parse_system_desc, print_mlir_module
from tilewright.target.ttsys import decode_ttsys, encode_ttsys

__all__ = ["FORMATS", "file_format", "read_system_desc", "write_system_desc"]

#: Extension → format name.
FORMATS: Final = {".ttsys": "ttsys", ".json": "json", ".mlir": "mlir"}


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
        SystemDescError: unknown extension or malformed content.
    """
    fmt = file_format(path)
    if fmt == "ttsys":
        return decode_ttsys(Path(path).read_bytes(), strict=strict)
    try:
        text = Path(path).read_bytes().decode("utf-8")
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
