"""Field tables of the system-descriptor FlatBuffer schema (reference §1, §2.3, §6.2).

Each FlatBuffer table is an ordered tuple of :class:`Field` (name, slot, kind, default)
plus, for the tables that have a ``#ttcore.system_desc`` form, the MLIR key and text
style.  One generic reader and writer (``ttsys.py``), the MLIR printer and parser
(``text.py``) and the JSON form (``jsonform.py``) all walk these tables; none of them
names a ChipDesc field in code.  Structs are described the same way (:class:`StructSpec`).

The module also owns the representability check (:func:`value_problems`): whether a model
value fits its FlatBuffer type (uint32, int32, a known enum, ...).  It is data plus one
walker; the codecs own the bytes and the characters.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from tilewright.target.enums import ARCH, CHIP_CAPABILITY, CPU_ROLE, DATA_TYPE, EnumTable
from tilewright.target.model import (
    ChipChannel,
    ChipCoord,
    ChipDesc,
    CPUDesc,
    Dim2d,
    SystemDesc,
    SystemDescRoot,
    Version,
)

__all__ = [
    "CHIP_CHANNEL",
    "CHIP_COORD",
    "CHIP_DESC",
    "CPU_DESC",
    "DIM2D",
    "INT32",
    "STRING",
    "SYSTEM_DESC",
    "SYSTEM_DESC_ROOT",
    "TABLES",
    "UINT8",
    "UINT16",
    "UINT32",
    "UINT64",
    "VERSION",
    "EnumKind",
    "Field",
    "Scalar",
    "StringKind",
    "StructSpec",
    "TableSpec",
    "Text",
    "VectorKind",
    "add_order",
    "value_problems",
]


@dataclass(frozen=True, slots=True)
class Scalar:
    """A FlatBuffer scalar type: ``struct`` format character, byte size and value range."""

    name: str
    fmt: str
    size: int
    lo: int
    hi: int


UINT8 = Scalar("uint8", "B", 1, 0, 2**8 - 1)
UINT16 = Scalar("uint16", "H", 2, 0, 2**16 - 1)
UINT32 = Scalar("uint32", "I", 4, 0, 2**32 - 1)
UINT64 = Scalar("uint64", "Q", 8, 0, 2**64 - 1)
INT32 = Scalar("int32", "i", 4, -(2**31), 2**31 - 1)


@dataclass(frozen=True, slots=True)
class EnumKind:
    """An enum stored as ``scalar``; ``table`` gives its names in every spelling."""

    table: EnumTable[Any]
    scalar: Scalar
    rule: int = 0  # §11 rule broken by an out-of-range value

    @property
    def is_flags(self) -> bool:
        return issubclass(self.table.enum_type, enum.Flag)


@dataclass(frozen=True, slots=True)
class StructSpec:
    """An inline FlatBuffer struct: members in declaration order (scalars or structs).

    All descriptor structs have alignment 4 (§1.1).
    """

    name: str
    cls: type
    members: tuple[tuple[str, Scalar | StructSpec], ...]
    align: int = 4

    @property
    def fmt(self) -> str:
        """Flattened ``struct`` format of the members (without byte-order prefix)."""
        return "".join(member.fmt for _, member in self.members)

    @property
    def size(self) -> int:
        return sum(m.size for _, m in self.members)

    def flatten(self, obj: Any) -> tuple[int, ...]:
        """The struct's scalar values in byte order (nested structs inlined)."""
        out: list[int] = []
        for name, member in self.members:
            value = getattr(obj, name)
            if isinstance(member, StructSpec):
                out.extend(member.flatten(value))
            else:
                out.append(value)
        return tuple(out)

    def build(self, values: tuple[int, ...] | list[int]) -> Any:
        """Inverse of :meth:`flatten`."""
        obj, _ = self._build(list(values))
        return obj

    def _build(self, values: list[int]) -> tuple[Any, list[int]]:
        kwargs: dict[str, Any] = {}
        for name, member in self.members:
            if isinstance(member, StructSpec):
                kwargs[name], values = member._build(values)
            else:
                kwargs[name], values = values[0], values[1:]
        return self.cls(**kwargs), values


@dataclass(frozen=True, slots=True)
class StringKind:
    """A UTF-8 FlatBuffer string (offset to length-prefixed, NUL-terminated bytes)."""

    name: str = "string"


STRING = StringKind()


class Text(enum.Enum):
    """How a field is written in ``#ttcore.system_desc<...>`` (§6.2, §6.3); see ``text.py``."""

    UINT = "uint"  # decimal (hex accepted on input), 32-bit in MLIR
    ARCH_ATTR = "arch_attr"  # <wormhole_b0>
    KEYWORD = "keyword"  # host
    STRING = "string"  # "x86_64-pc-linux"
    DIMS = "dims"  # custom<DimensionList>: 8x8
    DTYPE_LIST = "dtype_list"  # [<f32>, <bf16>]          non-empty
    VARG_LIST = "varg_list"  # [ 4x16,  16x16] / [ 0x0x0x0]  non-empty, leading-space quirk
    CORE_LIST = "core_list"  # [(7, 3), (0, 0)]          may be empty
    TABLE_LIST = "table_list"  # [{...}, {...}]            non-empty
    UINT_LIST = "uint_list"  # [0, 1]                    non-empty
    CAP_LIST = "cap_list"  # [1 : i32, 0 : i32]        non-empty
    CHANNEL_LIST = "channel_list"  # , [<[0, 9, 0], [1, 1, 0]>]  optional group, omitted if empty


@dataclass(frozen=True, slots=True)
class Field:
    """One FlatBuffer table field.

    Attributes:
        name: FlatBuffer field name = model attribute name.
        slot: vtable slot (vtable offset ``4 + 2 * slot``).
        kind: value type.
        default: value when the slot is absent (scalars 0; None means "required",
            a decoding error when absent, except where ``optional`` says otherwise).
        key: MLIR key in the ``{key = value, ...}`` form, or None (positional/no text).
        text: MLIR text style, or None if the field has no text form (envelope).
        optional: absence is legal (decodes to ``default``).
        rule: §11 rule that requires the field's presence (for error messages).
    """

    name: str
    slot: int
    kind: FieldKind
    default: Any = None
    key: str | None = None
    text: Text | None = None
    optional: bool = False
    rule: int = 3


@dataclass(frozen=True, slots=True)
class VectorKind:
    """A FlatBuffer vector of ``elem``."""

    elem: Scalar | EnumKind | StructSpec | StringKind | TableSpec


@dataclass(frozen=True, slots=True)
class TableSpec:
    """A FlatBuffer table: its model class and fields in declaration (slot) order.

    ``build_first`` lists table-typed fields whose objects the runtime producer creates
    before every other child object, in that order (§2.2); all other children are
    created in declaration order.
    """

    name: str
    cls: type
    fields: tuple[Field, ...]
    build_first: tuple[str, ...] = ()
    _by_name: dict[str, Field] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_name.update({f.name: f for f in self.fields})

    @property
    def num_slots(self) -> int:
        return len(self.fields)

    def get(self, name: str) -> Field:
        """The field called ``name``."""
        return self._by_name[name]


FieldKind: TypeAlias = Scalar | EnumKind | StructSpec | StringKind | TableSpec | VectorKind


def size_class(kind: FieldKind) -> int:
    """Byte class flatc sorts fields by: scalars by size; everything else counts as 4 (§2.3)."""
    if isinstance(kind, Scalar):
        return kind.size
    if isinstance(kind, EnumKind):
        return kind.scalar.size
    return 4


def add_order(spec: TableSpec) -> tuple[Field, ...]:
    """Field-add order of flatc's ``CreateX``: by size class 8, 4, 2, 1, each in reverse
    declaration order (§2.3).  Matching it is what makes the bytes identical."""
    return tuple(sorted(spec.fields, key=lambda f: (-size_class(f.kind), -f.slot)))


# --- structs (§1.1) ------------------------------------------------------------------------

VERSION = StructSpec("Version", Version, (("major", UINT16), ("minor", UINT16), ("patch", UINT32)))
DIM2D = StructSpec("Dim2d", Dim2d, (("y", INT32), ("x", INT32)))
CHIP_COORD = StructSpec(
    "ChipCoord", ChipCoord, (("rack", UINT32), ("shelf", UINT32), ("y", UINT32), ("x", UINT32))
)
CHIP_CHANNEL = StructSpec(
    "ChipChannel",
    ChipChannel,
    (
        ("device_id0", UINT32),
        ("ethernet_core_coord0", DIM2D),
        ("device_id1", UINT32),
        ("ethernet_core_coord1", DIM2D),
    ),
)

ARCH_KIND = EnumKind(ARCH, UINT32, rule=16)
DATA_TYPE_KIND = EnumKind(DATA_TYPE, UINT16, rule=18)
CPU_ROLE_KIND = EnumKind(CPU_ROLE, UINT8, rule=15)
CAPABILITY_KIND = EnumKind(CHIP_CAPABILITY, UINT32, rule=11)

# --- tables (§1.3); MLIR keys and styles from §6.2 -------------------------------------------

CPU_DESC = TableSpec(
    "CPUDesc",
    CPUDesc,
    (
        Field("role", 0, CPU_ROLE_KIND, 0, key="role", text=Text.KEYWORD, optional=True),
        Field("target_triple", 1, STRING, key="target_triple", text=Text.STRING, rule=15),
    ),
)


def _scalar(
    name: str, slot: int, kind: Scalar | EnumKind = UINT32, text: Text = Text.UINT
) -> Field:
    # Scalars default to 0 and are omitted from the wire when 0, so absence is legal.
    return Field(name, slot, kind, 0, key=name, text=text, optional=True)


def _dims(name: str, slot: int, key: str | None = None) -> Field:
    return Field(name, slot, DIM2D, key=key or name, text=Text.DIMS, rule=17)


def _vector(name: str, slot: int, elem: Any, text: Text, rule: int) -> Field:
    return Field(name, slot, VectorKind(elem), key=name, text=text, rule=rule)


CHIP_DESC = TableSpec(
    "ChipDesc",
    ChipDesc,
    (
        _scalar("arch", 0, ARCH_KIND, Text.ARCH_ATTR),
        _dims("grid_size", 1, key="grid"),
        _dims("coord_translation_offsets", 2),
        _scalar("l1_size", 3, UINT64),
        _scalar("num_dram_channels", 4),
        _scalar("dram_channel_size", 5, UINT64),
        _scalar("noc_l1_address_align_bytes", 6),
        _scalar("pcie_address_align_bytes", 7),
        _scalar("noc_dram_address_align_bytes", 8),
        _scalar("l1_unreserved_base", 9),
        _scalar("erisc_l1_unreserved_base", 10),
        _scalar("dram_unreserved_base", 11),
        _scalar("dram_unreserved_end", 12),
        _vector("supported_data_types", 13, DATA_TYPE_KIND, Text.DTYPE_LIST, rule=18),
        _vector("supported_tile_sizes", 14, DIM2D, Text.VARG_LIST, rule=18),
        _scalar("dst_physical_size_tiles", 15),
        _scalar("num_cbs", 16),
        _scalar("num_compute_threads", 17),
        _scalar("num_datamovement_threads", 18),
        _dims("dram_grid_size", 19, key="dram_grid"),
        _vector("dram_bank_to_logical_worker_noc0", 20, DIM2D, Text.CORE_LIST, rule=19),
        _vector("dram_bank_to_logical_worker_noc1", 21, DIM2D, Text.CORE_LIST, rule=19),
    ),
)

SYSTEM_DESC = TableSpec(
    "SystemDesc",
    SystemDesc,
    (
        Field("cpu_descs", 0, VectorKind(CPU_DESC), text=Text.TABLE_LIST, rule=8),
        Field("chip_descs", 1, VectorKind(CHIP_DESC), text=Text.TABLE_LIST, rule=8),
        Field("chip_desc_indices", 2, VectorKind(UINT32), text=Text.UINT_LIST, rule=8),
        Field("chip_capabilities", 3, VectorKind(CAPABILITY_KIND), text=Text.CAP_LIST, rule=8),
        Field("chip_coords", 4, VectorKind(CHIP_COORD), text=Text.VARG_LIST, rule=8),
        # Optional: absent means empty (the compiler null-checks only this one, §4).
        Field(
            "chip_channels", 5, VectorKind(CHIP_CHANNEL), (), text=Text.CHANNEL_LIST, optional=True
        ),
    ),
    # The producer builds every ChipDesc, then the host CPUDesc, then the vectors (§2.2).
    build_first=("chip_descs", "cpu_descs"),
)

SYSTEM_DESC_ROOT = TableSpec(
    "SystemDescRoot",
    SystemDescRoot,
    (
        Field("version", 0, VERSION, rule=5),
        Field("schema_hash", 1, STRING, rule=5),
        Field("ttmlir_git_hash", 2, STRING, rule=5),
        Field("product_identifier", 3, STRING, None, optional=True),
        Field("system_desc", 4, SYSTEM_DESC, rule=5),
    ),
    # CreateSystemDescRootDirect receives the finished SystemDesc, then makes its strings.
    build_first=("system_desc",),
)

#: Every table, by FlatBuffer name.
TABLES: dict[str, TableSpec] = {
    t.name: t for t in (CPU_DESC, CHIP_DESC, SYSTEM_DESC, SYSTEM_DESC_ROOT)
}


# --- representability ----------------------------------------------------------------------


def _scalar_problem(kind: Scalar, value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return f"expected an integer ({kind.name}), got {type(value).__name__} {value!r}"
    if not kind.lo <= value <= kind.hi:
        return f"{value} does not fit {kind.name} [{kind.lo}, {kind.hi}]"
    return None


def _enum_problem(kind: EnumKind, value: Any) -> str | None:
    enum_type = kind.table.enum_type
    if kind.is_flags:
        return _scalar_problem(kind.scalar, int(value) if isinstance(value, enum_type) else value)
    if not isinstance(value, enum_type):
        return f"expected {enum_type.__name__} ({kind.table.fb_values()}), got {value!r}"
    return None


def _problems(kind: FieldKind, value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(kind, Scalar):
        problem = _scalar_problem(kind, value)
    elif isinstance(kind, EnumKind):
        problem = _enum_problem(kind, value)
    elif isinstance(kind, StringKind):
        problem = None if isinstance(value, str) else f"expected a string, got {value!r}"
    elif isinstance(kind, StructSpec | TableSpec):
        if not isinstance(value, kind.cls):
            problem = f"expected {kind.name}, got {type(value).__name__}"
        else:
            yield from _children(kind, value, path)
            return
    else:  # VectorKind
        if not isinstance(value, tuple):
            problem = f"expected a tuple, got {type(value).__name__}"
        else:
            for i, item in enumerate(value):
                yield from _problems(kind.elem, item, f"{path}[{i}]")
            return
    if problem is not None:
        yield path, problem


def _children(spec: StructSpec | TableSpec, obj: Any, path: str) -> Iterator[tuple[str, str]]:
    prefix = f"{path}." if path else ""
    if isinstance(spec, StructSpec):
        for name, member in spec.members:
            yield from _problems(member, getattr(obj, name), prefix + name)
        return
    for f in spec.fields:
        value = getattr(obj, f.name)
        if value is None and f.optional:
            continue
        yield from _problems(f.kind, value, prefix + f.name)


def value_problems(spec: TableSpec, obj: Any, path: str = "") -> list[tuple[str, str]]:
    """Every (field path, problem) where ``obj`` does not fit the FlatBuffer types of ``spec``."""
    return list(_problems(spec, obj, path))
