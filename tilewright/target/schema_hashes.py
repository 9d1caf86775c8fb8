"""Known ``schema_hash`` values per tt-mlir version, and the default envelope (reference §3, §5).

tt-mlir stores ``sha256`` of its flatc-generated schema header in every ``.ttsys`` and
rejects files whose hash differs from its own.  The hash cannot be recomputed without flatc
built at tt-mlir's pinned commit, so the values are hard-coded here, each valid from its
commit until the next change to ``include/ttmlir/Target/Common/*.fbs``.

This module owns the table and the envelope Tilewright writes by default; reading and
validation decide what to do with an unknown hash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from tilewright.errors import SystemDescError
from tilewright.target.model import SystemDesc, SystemDescRoot, Version

__all__ = [
    "DEFAULT_PRODUCT_IDENTIFIER",
    "HEAD_SCHEMA_HASH",
    "HEAD_TTMLIR_GIT_HASH",
    "HEAD_VERSION",
    "KNOWN_SCHEMA_HASHES",
    "SCHEMA_REVISIONS",
    "SchemaRevision",
    "is_hex_hash",
    "make_root",
    "resolve_schema_hash",
    "schema_revision",
]


@dataclass(frozen=True, slots=True)
class SchemaRevision:
    """One schema hash and the tt-mlir commit from which it is valid."""

    commit: str
    date: str
    change: str
    schema_hash: str


#: Oldest first (§5).  Hashes before ``d6102f30d5`` describe older, wire-incompatible schemas
#: (§1.4) and are not listed: such files cannot be read by this codec anyway.
SCHEMA_REVISIONS: Final[tuple[SchemaRevision, ...]] = (
    SchemaRevision(
        "d6102f30d5",
        "2026-04-23",
        "+ dram_grid_size",
        "e790bd65526701882513685f3a09f73773806f6096c67559d10990d77e7d8b69",
    ),
    SchemaRevision(
        "13041813f5",
        "2026-04-28",
        "+ dram_bank_to_logical_worker_*",
        "26d000993aa20930de21772c65a5b5b95e0feb27f351d32e7dd6ff9549f4fb7a",
    ),
    SchemaRevision(
        "7e9bbc6a21",
        "2026-05-14",
        "+ Arch.Quasar",
        "c122760fb47eade0b1256ff8c8c23e1511c53bd7c7ce2e2413cd283dd353511d",
    ),
    # The four real tt-xla files (tt-mlir 464a5f3419) carry this one.
    SchemaRevision(
        "c7d92e92e8",
        "2026-05-28",
        "MeshShardType change (not descriptor)",
        "7f252e8a9f2f1850b406e7c18440842ccf8d0c51c47b8747c297e5b6bb8a966f",
    ),
    SchemaRevision(
        "84c6565bdf",
        "2026-06-12",
        "+ DataMovementProcessor enum (not descriptor)",
        "3bb2f74e95baff9d6190dcc5d64a604f10535a87a3cd57ea6cb2ff1ecb917c9e",
    ),
    SchemaRevision(
        "f6cc00fad1",
        "2026-06-15",
        "+ MoEActivationFunction enum (not descriptor)",
        "92f6a8a87b72abd510d53425c6cd90ab2e8ba161928ee94c8bdd6680f51d9cdb",
    ),
)

#: tt-mlir commit (short) → schema hash, oldest first.
KNOWN_SCHEMA_HASHES: Final = MappingProxyType({r.commit: r.schema_hash for r in SCHEMA_REVISIONS})

_BY_HASH: Final = {r.schema_hash: r for r in SCHEMA_REVISIONS}

#: The hash of tt-mlir main @ 19c86fca45 (the reference's HEAD); written by default.
HEAD_SCHEMA_HASH: Final = SCHEMA_REVISIONS[-1].schema_hash
#: tt-mlir HEAD commit and version used for envelopes Tilewright makes up (defaults, text
#: input).  The patch count 4155 is the reference's (Appendix B2), derived, not released.
HEAD_TTMLIR_GIT_HASH: Final = "19c86fca45ae7c3d8f886c0401d8b40a40d2f294"
HEAD_VERSION: Final = Version(0, 0, 4155)
#: The runtime writes this literal (§3); Tilewright keeps it so tools see familiar values.
DEFAULT_PRODUCT_IDENTIFIER: Final = "unknown"


def is_hex_hash(text: str, length: int = 64) -> bool:
    """True if ``text`` is ``length`` lowercase hex digits (64: schema hash, 40: git hash)."""
    return re.fullmatch(f"[0-9a-f]{{{length}}}", text) is not None


def schema_revision(schema_hash: str) -> SchemaRevision | None:
    """The tt-mlir revision a hash belongs to, or None if unknown."""
    return _BY_HASH.get(schema_hash)


def resolve_schema_hash(spec: str) -> str:
    """A schema hash from ``"head"``, a tt-mlir commit (prefix) of the table, or a 64-hex hash.

    Raises:
        SystemDescError: ``spec`` is none of these (§11 rule 6).
    """
    text = spec.strip()
    if text.lower() == "head":
        return HEAD_SCHEMA_HASH
    if is_hex_hash(text):
        return text
    # A short commit prefix or a full 40-digit commit starting with the table's short one.
    matches = [
        r
        for r in SCHEMA_REVISIONS
        if len(text) >= 7 and (r.commit.startswith(text) or text.startswith(r.commit))
    ]
    if len(matches) == 1:
        return matches[0].schema_hash
    known = ", ".join(KNOWN_SCHEMA_HASHES)
    raise SystemDescError(
        f"schema hash {spec!r} is neither 'head', a known tt-mlir commit ({known}) nor 64 "
        "lowercase hex digits",
        field="schema_hash",
        rule="system-desc.6",
    )


def make_root(
    system_desc: SystemDesc,
    *,
    schema_hash: str | None = None,
    version: Version | str | None = None,
    ttmlir_git_hash: str | None = None,
    product_identifier: str | None = DEFAULT_PRODUCT_IDENTIFIER,
) -> SystemDescRoot:
    """Wrap a bare :class:`SystemDesc` (text form, defaults) in an envelope.

    Missing values default to tt-mlir HEAD (:data:`HEAD_SCHEMA_HASH`, :data:`HEAD_VERSION`,
    :data:`HEAD_TTMLIR_GIT_HASH`); ``schema_hash`` goes through :func:`resolve_schema_hash`.
    """
    return SystemDescRoot(
        version=Version.parse(version) if isinstance(version, str) else version or HEAD_VERSION,
        schema_hash=resolve_schema_hash(schema_hash) if schema_hash else HEAD_SCHEMA_HASH,
        ttmlir_git_hash=ttmlir_git_hash or HEAD_TTMLIR_GIT_HASH,
        product_identifier=product_identifier,
        system_desc=system_desc,
    )
