"""The target layer: tt-mlir system descriptors and the capacity table (reference: system-desc.md).

* model: :class:`SystemDescRoot`, :class:`SystemDesc`, :class:`ChipDesc` and friends, with
  the FlatBuffer schema's field names; enums with both FlatBuffer and MLIR numbering;
* codecs: ``.ttsys`` (:func:`decode_ttsys` / :func:`encode_ttsys`, byte-exact),
  ``#ttcore.system_desc`` text (:func:`print_system_desc` / :func:`parse_system_desc`),
  JSON (:func:`to_json` / :func:`from_json`), files by extension
  (:func:`read_system_desc` / :func:`write_system_desc`);
* tt-mlir's compiler defaults (:func:`default_system_desc`) and real boards
  (:func:`board_preset`, :data:`BOARD_PRESETS`);
* :class:`CapacityTable`, what one chip offers to kernels;
* :func:`validate` / :func:`check`, every rule of §11.

Imports nothing of Tilewright's except :mod:`tilewright.errors`.
"""

from tilewright.target.capacity import (
    CapacityTable,
    KernelSlots,
    capacity_table,
    device_worker_grid,
    kernel_slots,
)
from tilewright.target.defaults import (
    COMPILER_CHIP_DEFAULTS,
    STANDARD_DATA_TYPES,
    STANDARD_TILE_SIZES,
    default_chip_desc,
    default_system_desc,
    parse_arch,
)
from tilewright.target.enums import (
    ARCH,
    CHIP_CAPABILITY,
    CPU_ROLE,
    DATA_TYPE,
    Arch,
    ChipCapability,
    CPURole,
    DataType,
    EnumTable,
)
from tilewright.target.files import (
    MAX_DESCRIPTOR_BYTES,
    file_format,
    read_descriptor_bytes,
    read_system_desc,
    write_system_desc,
)
from tilewright.target.findings import RULES, Finding, Severity, SystemDescWarning
from tilewright.target.jsonform import from_json, to_json
from tilewright.target.limits import PHYSICAL_LIMITS, PhysicalLimits
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
from tilewright.target.presets import BOARD_PRESETS, board_preset
from tilewright.target.schema_hashes import (
    HEAD_SCHEMA_HASH,
    KNOWN_SCHEMA_HASHES,
    SCHEMA_REVISIONS,
    make_root,
    resolve_schema_hash,
)
from tilewright.target.text import (
    parse_mlir_system_descs,
    parse_system_desc,
    print_mlir_module,
    print_system_desc,
)
from tilewright.target.ttsys import decode_ttsys, encode_ttsys
from tilewright.target.validate import check, validate

__all__ = [
    "ARCH",
    "BOARD_PRESETS",
    "CHIP_CAPABILITY",
    "COMPILER_CHIP_DEFAULTS",
    "CPU_ROLE",
    "DATA_TYPE",
    "HEAD_SCHEMA_HASH",
    "KNOWN_SCHEMA_HASHES",
    "PHYSICAL_LIMITS",
    "MAX_DESCRIPTOR_BYTES",
    "RULES",
    "SCHEMA_REVISIONS",
    "STANDARD_DATA_TYPES",
    "STANDARD_TILE_SIZES",
    "Arch",
    "CPUDesc",
    "CPURole",
    "CapacityTable",
    "ChipCapability",
    "ChipChannel",
    "ChipCoord",
    "ChipDesc",
    "DataType",
    "Dim2d",
    "EnumTable",
    "Finding",
    "PhysicalLimits",
    "KernelSlots",
    "Severity",
    "SystemDesc",
    "SystemDescRoot",
    "SystemDescWarning",
    "Version",
    "board_preset",
    "capacity_table",
    "check",
    "decode_ttsys",
    "default_chip_desc",
    "default_system_desc",
    "device_worker_grid",
    "encode_ttsys",
    "file_format",
    "from_json",
    "kernel_slots",
    "make_root",
    "parse_arch",
    "parse_mlir_system_descs",
    "parse_system_desc",
    "print_mlir_module",
    "print_system_desc",
    "read_descriptor_bytes",
    "read_system_desc",
    "resolve_schema_hash",
    "to_json",
    "validate",
    "write_system_desc",
]
