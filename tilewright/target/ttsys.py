"""The ``.ttsys`` binary codec: size-prefixed FlatBuffers, identifier ``TTSY`` (§2, App. A).

Writing uses the PyPI ``flatbuffers`` builder without generated code.  Objects are created
in the runtime producer's order (§2.2) and table fields added in flatc's ``CreateX`` order
(§2.3, :func:`fields.add_order`), scalars equal to 0 omitted, so a decoded real file
re-encodes to identical bytes.

Reading does not trust the buffer: the Python runtime has no verifier, so this module
checks every offset, vtable, vector and string against the buffer itself (§11 rules 1-5,
8, 15-19) and reports a :class:`SystemDescError` naming the field path and byte offset.
Semantic rules (indices, capabilities, sizes) are :mod:`validate`'s job.

Both directions walk the field tables of :mod:`fields`; nothing here names a ChipDesc
field.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import replace
from typing import Any, NoReturn

import flatbuffers

from tilewright.errors import SystemDescError
from tilewright.target.fields import (
    SYSTEM_DESC_ROOT,
    EnumKind,
    Field,
    FieldKind,
    Scalar,
    StringKind,
    StructSpec,
    TableSpec,
    VectorKind,
    add_order,
    value_problems,
)
from tilewright.target.findings import Finding, Severity, emit_warnings, error_for
from tilewright.target.model import SystemDesc, SystemDescRoot
from tilewright.target.schema_hashes import (
    KNOWN_SCHEMA_HASHES,
    make_root,
    resolve_schema_hash,
    schema_revision,
)

__all__ = ["FILE_IDENTIFIER", "decode_ttsys", "decode_with_findings", "encode_ttsys"]

FILE_IDENTIFIER = b"TTSY"
_HEADER = 12  # size prefix, root uoffset, identifier (§2.1)

# struct format character → (Builder.PrependX, Builder.PrependXSlot)
_PREPEND: dict[str, tuple[Callable[..., None], Callable[..., None]]] = {
    "B": (flatbuffers.Builder.PrependUint8, flatbuffers.Builder.PrependUint8Slot),
    "H": (flatbuffers.Builder.PrependUint16, flatbuffers.Builder.PrependUint16Slot),
    "I": (flatbuffers.Builder.PrependUint32, flatbuffers.Builder.PrependUint32Slot),
    "Q": (flatbuffers.Builder.PrependUint64, flatbuffers.Builder.PrependUint64Slot),
    "i": (flatbuffers.Builder.PrependInt32, flatbuffers.Builder.PrependInt32Slot),
}


# --- writer ----------------------------------------------------------------------------------


def encode_ttsys(obj: SystemDescRoot | SystemDesc, *, schema_hash: str | None = None) -> bytes:
    """Encode a descriptor as ``.ttsys`` bytes, byte-identical to the runtime producer's.

    Args:
        obj: a root (its envelope is kept) or a bare :class:`SystemDesc` (wrapped in the
            tt-mlir HEAD envelope, see :func:`schema_hashes.make_root`).
        schema_hash: override the stored hash: ``"head"``, a tt-mlir commit of
            :data:`KNOWN_SCHEMA_HASHES`, or 64 hex digits.  None keeps the root's.

    Raises:
        SystemDescError: a value does not fit its FlatBuffer type (rule 0).
    """
    root = obj if isinstance(obj, SystemDescRoot) else make_root(obj)
    if schema_hash is not None:
        root = replace(root, schema_hash=resolve_schema_hash(schema_hash))
    problems = value_problems(SYSTEM_DESC_ROOT, root)
    if problems:
        path, message = problems[0]
        raise error_for(Finding(Severity.ERROR, 0, message, path))
    builder = flatbuffers.Builder(1024)
    root_offset = _write_table(builder, SYSTEM_DESC_ROOT, root)
    builder.FinishSizePrefixed(root_offset, FILE_IDENTIFIER)
    return bytes(builder.Output())


def _write_struct(builder: flatbuffers.Builder, spec: StructSpec, value: Any) -> None:
    # Inline structs are written back to front: last member first (App. A).
    builder.Prep(spec.align, spec.size)
    for fmt, item in reversed(list(zip(spec.fmt, spec.flatten(value), strict=True))):
        _PREPEND[fmt][0](builder, item)


def _write_vector(
    builder: flatbuffers.Builder,
    kind: VectorKind,
    items: tuple[Any, ...],
    element_offsets: list[int] | None,
) -> int:
    elem = kind.elem
    if isinstance(elem, StructSpec):
        builder.StartVector(elem.size, len(items), elem.align)
        for item in reversed(items):
            _write_struct(builder, elem, item)
    elif isinstance(elem, Scalar | EnumKind):
        scalar = elem if isinstance(elem, Scalar) else elem.scalar
        builder.StartVector(scalar.size, len(items), scalar.size)
        for item in reversed(items):
            _PREPEND[scalar.fmt][0](builder, int(item))
    else:  # tables (element offsets built beforehand) or strings
        if element_offsets is None:
            element_offsets = _write_elements(builder, elem, items)
        builder.StartVector(4, len(items), 4)
        for offset in reversed(element_offsets):
            builder.PrependUOffsetTRelative(offset)
    return int(builder.EndVector())


def _write_elements(builder: flatbuffers.Builder, elem: Any, items: tuple[Any, ...]) -> list[int]:
    if isinstance(elem, TableSpec):
        return [_write_table(builder, elem, item) for item in items]
    return [builder.CreateString(item) for item in items]


def _write_table(builder: flatbuffers.Builder, spec: TableSpec, obj: Any) -> int:
    # 1. Child objects: `build_first` tables (or their vector elements), then every
    #    string, vector and table in declaration order (§2.2).
    prebuilt: dict[str, Any] = {}
    for name in spec.build_first:
        kind = spec.get(name).kind
        if isinstance(kind, VectorKind):
            prebuilt[name] = _write_elements(builder, kind.elem, getattr(obj, name))
        elif isinstance(kind, TableSpec):
            prebuilt[name] = _write_table(builder, kind, getattr(obj, name))
    offsets: dict[str, int] = {}
    for f in spec.fields:
        value = getattr(obj, f.name)
        if value is None or isinstance(f.kind, Scalar | EnumKind | StructSpec):
            continue
        if isinstance(f.kind, StringKind):
            offsets[f.name] = builder.CreateString(value)
        elif isinstance(f.kind, VectorKind):
            offsets[f.name] = _write_vector(builder, f.kind, value, prebuilt.get(f.name))
        elif f.name in prebuilt:
            offsets[f.name] = prebuilt[f.name]
        elif isinstance(f.kind, TableSpec):
            offsets[f.name] = _write_table(builder, f.kind, value)
    # 2. The table itself, fields in flatc's CreateX order; zero scalars are skipped (§2.3).
    builder.StartObject(spec.num_slots)
    for f in add_order(spec):
        value = getattr(obj, f.name)
        if isinstance(f.kind, Scalar | EnumKind):
            scalar = f.kind if isinstance(f.kind, Scalar) else f.kind.scalar
            _PREPEND[scalar.fmt][1](builder, f.slot, int(value), 0)
        elif isinstance(f.kind, StructSpec):
            _write_struct(builder, f.kind, value)
            builder.PrependStructSlot(f.slot, builder.Offset(), 0)
        elif f.name in offsets:
            builder.PrependUOffsetTRelativeSlot(f.slot, offsets[f.name], 0)
    return int(builder.EndObject())


# --- reader ----------------------------------------------------------------------------------


class _Reader:
    """Bounds-checked walk over one buffer; every failure names a field path and offset."""

    def __init__(self, buf: bytes, strict: bool) -> None:
        self.buf = buf
        self.size = len(buf)
        self.strict = strict
        self.findings: list[Finding] = []
        # Tables shared by several offsets decode once (models are immutable); this also
        # bounds the work a file of many offsets to one big table can cause.
        self.tables: dict[tuple[str, int], Any] = {}

    def fail(self, rule: int, message: str, path: str, offset: int | None) -> NoReturn:
        raise error_for(Finding(Severity.ERROR, rule, message, path, offset))

    def need(self, pos: int, length: int, path: str, what: str) -> None:
        """Bytes ``[pos, pos + length)`` must lie inside the buffer (rule 3)."""
        if pos < 0 or length < 0 or pos + length > self.size:
            self.fail(
                3,
                f"{what} at byte {pos} (+{length} bytes) runs past the end of the "
                f"{self.size}-byte buffer",
                path,
                pos,
            )

    def unpack(self, fmt: str, pos: int, path: str, what: str) -> tuple[Any, ...]:
        self.need(pos, struct.calcsize("<" + fmt), path, what)
        return struct.unpack_from("<" + fmt, self.buf, pos)

    def follow(self, pos: int, path: str, what: str) -> int:
        """Target of the uoffset stored at ``pos`` (rule 3: non-zero, in bounds)."""
        (rel,) = self.unpack("I", pos, path, f"offset to {what}")
        target = pos + rel
        if rel == 0 or target >= self.size:
            self.fail(
                3,
                f"offset to {what} points to byte {target}, outside the {self.size}-byte buffer",
                path,
                pos,
            )
        return int(target)

    def root(self) -> SystemDescRoot:
        if self.size < _HEADER:
            self.fail(
                1,
                f"file is {self.size} bytes, shorter than the 12-byte header "
                "(size prefix, root offset, identifier)",
                "",
                0,
            )
        (prefix,) = struct.unpack_from("<I", self.buf, 0)
        if prefix != self.size - 4:
            self.fail(
                1,
                f"size prefix says {prefix} bytes follow but the file has "
                f"{self.size - 4} (truncated or padded file)",
                "",
                0,
            )
        ident = self.buf[8:12]
        if ident != FILE_IDENTIFIER:
            self.fail(
                2,
                f"file identifier is {ident!r}, expected b'TTSY' (not a system descriptor)",
                "",
                8,
            )
        root: SystemDescRoot = self.table(SYSTEM_DESC_ROOT, self.follow(4, "", "root table"), "")
        return root

    def table(self, spec: TableSpec, pos: int, path: str) -> Any:
        """Decode the table at ``pos`` (rule 3 vtable checks, rule 4 unknown slots)."""
        key = (spec.name, pos)
        if key not in self.tables:
            self.tables[key] = self._table(spec, pos, path)
        return self.tables[key]

    def _table(self, spec: TableSpec, pos: int, path: str) -> Any:
        (soffset,) = self.unpack("i", pos, path, f"{spec.name} table")
        vtable = pos - soffset
        vt_size, obj_size = self.unpack("HH", vtable, path, f"{spec.name} vtable")
        if vt_size < 4 or vt_size % 2:
            self.fail(
                3, f"{spec.name} vtable size {vt_size} is not an even number >= 4", path, vtable
            )
        self.need(vtable, vt_size, path, f"{spec.name} vtable")
        if obj_size < 4:
            self.fail(
                3,
                f"{spec.name} table size {obj_size} is smaller than its vtable offset",
                path,
                vtable + 2,
            )
        self.need(pos, obj_size, path, f"{spec.name} table")
        entries = struct.unpack_from(f"<{(vt_size - 4) // 2}H", self.buf, vtable + 4)
        self.unknown_slots(spec, entries[spec.num_slots :], path, vtable)
        values = {
            f.name: self.field(
                spec, f, pos, obj_size, entries[f.slot] if f.slot < len(entries) else 0, path
            )
            for f in spec.fields
        }
        return spec.cls(**values)

    def unknown_slots(
        self, spec: TableSpec, extra: tuple[int, ...], path: str, vtable: int
    ) -> None:
        present = [spec.num_slots + i for i, entry in enumerate(extra) if entry]
        if not present:
            return
        finding = Finding(
            Severity.ERROR if self.strict else Severity.WARNING,
            4,
            f"{spec.name} has fields in unknown slot(s) {present} (newer schema?); "
            + ("rejected in strict mode" if self.strict else "ignored"),
            path,
            vtable,
        )
        if self.strict:
            raise error_for(finding)
        self.findings.append(finding)

    def field(
        self, spec: TableSpec, f: Field, pos: int, obj_size: int, entry: int, path: str
    ) -> Any:
        fpath = f"{path}.{f.name}" if path else f.name
        if entry == 0:
            if f.optional:
                return f.default
            self.fail(f.rule, f"required field {spec.name}.{f.name} is absent", fpath, pos)
        width = _inline_size(f.kind)
        if entry < 4 or entry + width > obj_size:
            self.fail(
                3,
                f"field {spec.name}.{f.name} at table offset {entry} (+{width} bytes) "
                f"lies outside the {obj_size}-byte table",
                fpath,
                pos + entry,
            )
        at = pos + entry
        kind = f.kind
        if isinstance(kind, Scalar):
            return self.unpack(kind.fmt, at, fpath, f.name)[0]
        if isinstance(kind, EnumKind):
            return self.enum(kind, self.unpack(kind.scalar.fmt, at, fpath, f.name)[0], fpath, at)
        if isinstance(kind, StructSpec):
            return kind.build(self.unpack(kind.fmt, at, fpath, f.name))
        target = self.follow(at, fpath, f.name)
        if isinstance(kind, StringKind):
            return self.string(target, fpath)
        if isinstance(kind, VectorKind):
            return self.vector(kind, target, fpath)
        return self.table(kind, target, fpath)

    def enum(self, kind: EnumKind, value: int, path: str, at: int) -> Any:
        member = kind.table.from_fb(value)
        if member is None:
            hint = " (MLIR numbering is FlatBuffer + 1)" if kind.table.name == "Arch" else ""
            self.fail(
                kind.rule,
                f"{value} is not a FlatBuffer {kind.table.name} ({kind.table.fb_values()}){hint}",
                path,
                at,
            )
        return member

    def string(self, pos: int, path: str) -> str:
        (length,) = self.unpack("I", pos, path, "string length")
        # Length, bytes and the NUL terminator must all be inside (rule 3).
        self.need(pos + 4, length + 1, path, f"string of {length} bytes")
        if self.buf[pos + 4 + length] != 0:
            self.fail(3, "string is not NUL-terminated", path, pos + 4 + length)
        try:
            return self.buf[pos + 4 : pos + 4 + length].decode("utf-8")
        except UnicodeDecodeError as err:
            self.fail(
                3,
                f"string is not valid UTF-8 ({err.reason} at byte {pos + 4 + err.start})",
                path,
                pos + 4 + err.start,
            )

    def vector(self, kind: VectorKind, pos: int, path: str) -> tuple[Any, ...]:
        (count,) = self.unpack("I", pos, path, "vector length")
        elem = kind.elem
        width = _inline_size(elem)
        start = pos + 4
        self.need(start, count * width, path, f"vector of {count} x {width} bytes")
        if isinstance(elem, Scalar):
            return struct.unpack_from(f"<{count}{elem.fmt}", self.buf, start)
        if isinstance(elem, EnumKind):
            raw = struct.unpack_from(f"<{count}{elem.scalar.fmt}", self.buf, start)
            return tuple(
                self.enum(elem, v, f"{path}[{i}]", start + i * width) for i, v in enumerate(raw)
            )
        if isinstance(elem, StructSpec):
            data = self.buf[start : start + count * width]
            return tuple(elem.build(values) for values in struct.iter_unpack("<" + elem.fmt, data))
        return tuple(
            self.string(self.follow(start + 4 * i, f"{path}[{i}]", "string"), f"{path}[{i}]")
            if isinstance(elem, StringKind)
            else self.table(
                elem, self.follow(start + 4 * i, f"{path}[{i}]", elem.name), f"{path}[{i}]"
            )
            for i in range(count)
        )


def _inline_size(kind: FieldKind) -> int:
    """Bytes a value of ``kind`` occupies inside its table or vector."""
    if isinstance(kind, Scalar):
        return kind.size
    if isinstance(kind, EnumKind):
        return kind.scalar.size
    if isinstance(kind, StructSpec):
        return kind.size
    return 4  # uoffset to a string, vector or table


# Any of these escaping the reader is a bug in a bounds check; convert rather than crash.
_STRAY = (
    struct.error,
    IndexError,
    KeyError,
    ValueError,
    TypeError,
    OverflowError,
    UnicodeDecodeError,
    RecursionError,
    MemoryError,
)


def decode_with_findings(
    data: bytes | bytearray | memoryview, *, strict: bool = False
) -> tuple[SystemDescRoot, list[Finding]]:
    """Decode ``.ttsys`` bytes; return the root and the W findings met on the way (rule 4).

    Raises:
        SystemDescError: the first container or structure error (rules 1-5, 8, 15-19).
    """
    reader = _Reader(bytes(data), strict)
    try:
        root = reader.root()
    except SystemDescError:
        raise
    except _STRAY as err:  # pragma: no cover - the fuzz tests keep this unreachable
        raise SystemDescError(
            f"malformed .ttsys ({type(err).__name__}: {err})", rule="system-desc.3"
        ) from err
    return root, reader.findings


def decode_ttsys(data: bytes | bytearray | memoryview, *, strict: bool = False) -> SystemDescRoot:
    """Decode ``.ttsys`` bytes into a :class:`SystemDescRoot`.

    Warns (:class:`~tilewright.target.findings.SystemDescWarning`) for fields in unknown
    vtable slots and for a ``schema_hash`` not in :data:`KNOWN_SCHEMA_HASHES` (§5: tt-mlir
    would reject the file).

    Args:
        data: the whole file.
        strict: reject unknown vtable slots instead of ignoring them (§11 rule 4).

    Raises:
        SystemDescError: malformed container or structure, with ``field`` and ``offset``.
    """
    root, findings = decode_with_findings(data, strict=strict)
    if schema_revision(root.schema_hash) is None:
        findings.append(
            Finding(
                Severity.WARNING,
                6,
                f"schema_hash {root.schema_hash[:16]}... is not a known tt-mlir schema "
                f"({len(KNOWN_SCHEMA_HASHES)} known); tt-mlir rejects files whose hash differs "
                "from its own",
                "schema_hash",
            )
        )
    emit_warnings(findings)
    return root
