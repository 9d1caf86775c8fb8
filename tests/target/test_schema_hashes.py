"""Known schema hashes and the default envelope (§3, §5)."""

from __future__ import annotations

import pytest

from tilewright.errors import SystemDescError
from tilewright.target import (
    HEAD_SCHEMA_HASH,
    KNOWN_SCHEMA_HASHES,
    SCHEMA_REVISIONS,
    Version,
    board_preset,
    make_root,
    resolve_schema_hash,
)
from tilewright.target.schema_hashes import HEAD_TTMLIR_GIT_HASH, is_hex_hash, schema_revision

REAL_FILES_HASH = "7f252e8a9f2f1850b406e7c18440842ccf8d0c51c47b8747c297e5b6bb8a966f"


def test_table_is_ordered_and_ends_at_head():
    assert list(KNOWN_SCHEMA_HASHES) == [
        "d6102f30d5",
        "13041813f5",
        "7e9bbc6a21",
        "c7d92e92e8",
        "84c6565bdf",
        "f6cc00fad1",
    ]
    assert HEAD_SCHEMA_HASH.startswith("92f6a8a87b72abd5")
    assert all(is_hex_hash(r.schema_hash) for r in SCHEMA_REVISIONS)
    assert schema_revision(REAL_FILES_HASH).commit == "c7d92e92e8"


def test_real_files_carry_a_known_hash():
    assert board_preset("n150").schema_hash == REAL_FILES_HASH == KNOWN_SCHEMA_HASHES["c7d92e92e8"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("head", HEAD_SCHEMA_HASH),
        ("HEAD", HEAD_SCHEMA_HASH),
        ("c7d92e9", REAL_FILES_HASH),
        ("c7d92e92e8", REAL_FILES_HASH),
        ("0123456789abcdef" * 4, "0123456789abcdef" * 4),
    ],
)
def test_resolve_schema_hash(spec, expected):
    assert resolve_schema_hash(spec) == expected


@pytest.mark.parametrize("spec", ["c7d9", "nothex", "ABCDEF" * 10 + "ABCD", "12345678"])
def test_resolve_schema_hash_rejects(spec):
    with pytest.raises(SystemDescError, match="neither 'head', a known tt-mlir commit"):
        resolve_schema_hash(spec)


def test_make_root_defaults_to_head_and_takes_overrides():
    sd = board_preset("n150").system_desc
    root = make_root(sd)
    assert (root.schema_hash, root.ttmlir_git_hash, root.version, root.product_identifier) == (
        HEAD_SCHEMA_HASH,
        HEAD_TTMLIR_GIT_HASH,
        Version(0, 0, 4155),
        "unknown",
    )
    custom = make_root(sd, schema_hash="c7d92e92e8", version="0.0.1", ttmlir_git_hash="a" * 40)
    assert (custom.schema_hash, custom.version, custom.ttmlir_git_hash) == (
        REAL_FILES_HASH,
        Version(0, 0, 1),
        "a" * 40,
    )
