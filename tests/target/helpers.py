"""Helpers for the target-layer tests: the real descriptors and FlatBuffer byte surgery."""

from __future__ import annotations

import struct
from pathlib import Path

import flatbuffers

from tilewright.target import board_preset
from tilewright.target.fields import SYSTEM_DESC
from tilewright.target.ttsys import _write_table

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "ttsys"
BOARDS = ("n150", "n300", "n300-llmbox", "p150")


def real_path(board: str) -> Path:
    return DATA_DIR / f"{board}_system_desc.ttsys"


def real_bytes(board: str) -> bytes:
    return real_path(board).read_bytes()


# --- byte surgery on FlatBuffers (for malformed-input tests) -------------------------------


def table_at(buf: bytes, pos: int) -> tuple[int, int]:
    """(table position, vtable position) of the table at ``pos``."""
    (soffset,) = struct.unpack_from("<i", buf, pos)
    return pos, pos - soffset


def root_table(buf: bytes) -> int:
    return 4 + struct.unpack_from("<I", buf, 4)[0]


def vtable_entry_pos(buf: bytes, table: int, slot: int) -> int:
    """Byte position of the vtable entry of ``slot`` for the table at ``table``."""
    _, vtable = table_at(buf, table)
    return vtable + 4 + 2 * slot


def field_pos(buf: bytes, table: int, slot: int) -> int:
    """Absolute position of a present field's inline value."""
    (entry,) = struct.unpack_from("<H", buf, vtable_entry_pos(buf, table, slot))
    assert entry, f"slot {slot} absent"
    return table + entry


def follow(buf: bytes, pos: int) -> int:
    return pos + struct.unpack_from("<I", buf, pos)[0]


def system_desc_table(buf: bytes) -> int:
    return follow(buf, field_pos(buf, root_table(buf), 4))


def chip_desc_table(buf: bytes, index: int = 0) -> int:
    vector = follow(buf, field_pos(buf, system_desc_table(buf), 1))
    return follow(buf, vector + 4 + 4 * index)


def patch(buf: bytes, pos: int, fmt: str, value: int) -> bytes:
    out = bytearray(buf)
    struct.pack_into("<" + fmt, out, pos, value)
    return bytes(out)


def root_with_extra_slot(value: int) -> bytes:
    """A valid file whose root table has a 6th slot (a field of a newer schema)."""
    root = board_preset("n150")
    builder = flatbuffers.Builder(1024)
    sd = _write_table(builder, SYSTEM_DESC, root.system_desc)
    strings = [builder.CreateString(s) for s in (root.schema_hash, root.ttmlir_git_hash, "unknown")]
    builder.StartObject(6)
    builder.PrependUint32Slot(5, value, 0)
    builder.PrependUOffsetTRelativeSlot(4, sd, 0)
    for slot, offset in zip((3, 2, 1), reversed(strings), strict=True):
        builder.PrependUOffsetTRelativeSlot(slot, offset, 0)
    builder.Prep(4, 8)
    builder.PrependUint32(root.version.patch)
    builder.PrependUint16(root.version.minor)
    builder.PrependUint16(root.version.major)
    builder.PrependStructSlot(0, builder.Offset(), 0)
    builder.FinishSizePrefixed(builder.EndObject(), b"TTSY")
    return bytes(builder.Output())
