"""Validation of system descriptors: every rule of reference §11, as findings.

:func:`validate` takes ``.ttsys`` bytes, a :class:`SystemDescRoot` or a bare
:class:`SystemDesc` and returns every broken rule as a :class:`Finding` (E: tt-mlir would
crash, misbehave or reject; W: legal but suspicious).  :func:`check` raises a
:class:`SystemDescError` for the first E and returns the warnings.

Container and structure rules (1-5, 8, the enum ranges of 15, 16 and 18, presence in 17
and 19) are enforced by the decoder (:mod:`ttsys`), because a model cannot hold a missing
field or an unknown arch; this module reports them for bytes input and checks everything
else on the model.  Rules that only matter for the MLIR text form (15, 18, 21, 25) are E
with ``for_mlir=True`` and W otherwise; their single source is :func:`text.mlir_problems`.
With ``for_device=True`` rule 26 (physical limits, :mod:`limits`) is checked too: what
the virtual device builds a chip from (``tilewright.device.requirements`` adds rule 27).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from tilewright.errors import SystemDescError
from tilewright.target.enums import ChipCapability, DataType
from tilewright.target.fields import SYSTEM_DESC, SYSTEM_DESC_ROOT, value_problems
from tilewright.target.findings import Finding, Severity, SystemDescRuleError, error_for
from tilewright.target.limits import physical_findings
from tilewright.target.model import ChipDesc, SystemDesc, SystemDescRoot
from tilewright.target.schema_hashes import (
    is_hex_hash,
    resolve_schema_hash,
    schema_revision,
)
from tilewright.target.text import mlir_problems
from tilewright.target.ttsys import decode_with_findings

__all__ = ["Options", "check", "first_error", "validate"]

E, W = Severity.ERROR, Severity.WARNING


@dataclass(frozen=True, slots=True)
class Options:
    """What to validate against.

    Attributes:
        strict: rules 4 and 6 (unknown vtable slots, schema hash) reject instead of warn.
        for_mlir: the descriptor is headed to/from ``#ttcore.system_desc`` text: rules 15,
            18, 21 and 25 reject instead of warn.
        schema_hash: the targeted tt-mlir's hash (``"head"``, a commit, or hex); None
            accepts any known hash (rule 6).
        chip_ids: chip positions a device will use (rule 24), or None.
        mesh_shape: mesh shape a device will use (rule 24), or None.
        for_device: the descriptor is headed to a (virtual) chip: rule 26, counts and sizes
            within the architecture's physical limits, is checked (E).
    """

    strict: bool = False
    for_mlir: bool = False
    schema_hash: str | None = None
    chip_ids: tuple[int, ...] | None = None
    mesh_shape: tuple[int, ...] | None = None
    for_device: bool = False


def validate(
    obj: bytes | bytearray | memoryview | SystemDescRoot | SystemDesc,
    *,
    strict: bool = False,
    for_mlir: bool = False,
    schema_hash: str | None = None,
    chip_ids: Sequence[int] | None = None,
    mesh_shape: Sequence[int] | None = None,
    for_device: bool = False,
) -> list[Finding]:
    """Every broken §11 rule, errors and warnings, in rule order per object.

    Args:
        obj: ``.ttsys`` bytes, a root, or a bare system descriptor.
        strict, for_mlir, schema_hash, chip_ids, mesh_shape, for_device: see
            :class:`Options`.
    """
    opts = Options(
        strict,
        for_mlir,
        schema_hash,
        tuple(chip_ids) if chip_ids is not None else None,
        tuple(mesh_shape) if mesh_shape is not None else None,
        for_device,
    )
    findings: list[Finding] = []
    if isinstance(obj, bytes | bytearray | memoryview):
        try:
            obj, decode_findings = decode_with_findings(obj, strict=strict)
        except SystemDescRuleError as err:
            return [err.finding]
        findings.extend(decode_findings)
    if isinstance(obj, SystemDescRoot):
        representable = value_problems(SYSTEM_DESC_ROOT, obj)
        prefix = "system_desc."
    else:
        representable = value_problems(SYSTEM_DESC, obj)
        prefix = ""
    if representable:
        # Later rules assume well-typed values; report rule 0 alone.
        return findings + [Finding(E, 0, message, path) for path, message in representable]
    if isinstance(obj, SystemDescRoot):
        findings.extend(_envelope(obj, opts))
        sd = obj.system_desc
    else:
        sd = obj
    for rule in _SYSTEM_RULES:
        findings.extend(rule(sd, opts, prefix))
    for i, chip in enumerate(sd.chip_descs):
        at = f"{prefix}chip_descs[{i}]."
        for chip_rule in _CHIP_RULES:
            findings.extend(chip_rule(chip, at))
        if for_device:
            findings.extend(physical_findings(chip, at))
    mlir_severity = E if for_mlir else W
    findings.extend(
        Finding(mlir_severity, f.rule, f.message, f.path) for f in mlir_problems(sd, prefix)
    )
    return findings


def check(
    obj: bytes | bytearray | memoryview | SystemDescRoot | SystemDesc,
    *,
    strict: bool = False,
    for_mlir: bool = False,
    schema_hash: str | None = None,
    chip_ids: Sequence[int] | None = None,
    mesh_shape: Sequence[int] | None = None,
    for_device: bool = False,
) -> list[Finding]:
    """Raise for the first E finding of :func:`validate`; return the W findings.

    Raises:
        SystemDescError: the first error, its ``rule`` set to ``system-desc.<n>``.
    """
    findings = validate(
        obj,
        strict=strict,
        for_mlir=for_mlir,
        schema_hash=schema_hash,
        chip_ids=chip_ids,
        mesh_shape=mesh_shape,
        for_device=for_device,
    )
    error = first_error(findings)
    if error is not None:
        raise error
    return findings


# --- envelope (rules 6, 7) -----------------------------------------------------------------


def _envelope(root: SystemDescRoot, opts: Options) -> Iterator[Finding]:
    severity = E if opts.strict else W
    stored = root.schema_hash
    if not is_hex_hash(stored):
        yield Finding(
            severity, 6, f"schema_hash {stored!r} is not 64 lowercase hex digits", "schema_hash"
        )
    elif opts.schema_hash is not None:
        target = resolve_schema_hash(opts.schema_hash)
        if stored != target:
            yield Finding(
                severity,
                6,
                f"schema_hash {_describe_hash(stored)} differs from the "
                f"targeted {_describe_hash(target)}; tt-mlir rejects it with 'system "
                "desc schema mismatch'",
                "schema_hash",
            )
    elif schema_revision(stored) is None:
        yield Finding(
            severity,
            6,
            f"schema_hash {stored[:12]}... is not a known tt-mlir schema; "
            "tt-mlir rejects files whose hash differs from its own",
            "schema_hash",
        )
    if not is_hex_hash(root.ttmlir_git_hash, 40):
        yield Finding(
            W,
            7,
            f"ttmlir_git_hash {root.ttmlir_git_hash!r} is not a 40-digit git commit hash",
            "ttmlir_git_hash",
        )
    if root.product_identifier is None:
        yield Finding(
            W,
            7,
            "product_identifier is absent (the runtime always writes 'unknown')",
            "product_identifier",
        )


def _describe_hash(schema_hash: str) -> str:
    revision = schema_revision(schema_hash)
    where = f"tt-mlir {revision.commit}" if revision else "unknown tt-mlir"
    return f"{schema_hash[:12]}... ({where})"


# --- SystemDesc (rules 9-14, 24) -----------------------------------------------------------


def _indices(sd: SystemDesc, opts: Options, prefix: str) -> Iterator[Finding]:
    for i, index in enumerate(sd.chip_desc_indices):
        if index >= len(sd.chip_descs):
            yield Finding(
                E,
                9,
                f"chip_desc_indices[{i}] = {index} but there are only "
                f"{len(sd.chip_descs)} chip_descs",
                f"{prefix}chip_desc_indices[{i}]",
            )
    if len(sd.chip_capabilities) != len(sd.chip_desc_indices):
        yield Finding(
            E,
            10,
            f"{len(sd.chip_capabilities)} chip_capabilities for "
            f"{len(sd.chip_desc_indices)} chips; they are parallel per chip position",
            f"{prefix}chip_capabilities",
        )
    for i, cap in enumerate(sd.chip_capabilities):
        if int(cap) & ~int(ChipCapability.HOST_MMIO):
            yield Finding(
                E,
                11,
                f"capability {int(cap)} has bits other than HostMMIO (1); "
                "values like 3 predate the removal of PCIE (tt-mlir 2569d1964c)",
                f"{prefix}chip_capabilities[{i}]",
            )
    unused = sorted(set(range(len(sd.chip_descs))) - set(sd.chip_desc_indices))
    if unused:
        yield Finding(
            W,
            12,
            f"chip_descs {unused} are never referenced by chip_desc_indices",
            f"{prefix}chip_descs",
        )
    if sd.chip_desc_indices != tuple(range(len(sd.chip_desc_indices))):
        yield Finding(
            W,
            12,
            f"chip_desc_indices {list(sd.chip_desc_indices)} are not 0..n-1; "
            "tt-mlir's distributed merge assumes chip_descs[i] is chip i",
            f"{prefix}chip_desc_indices",
        )
    if len(sd.chip_coords) not in (1, sd.num_chips):
        yield Finding(
            W,
            13,
            f"{len(sd.chip_coords)} chip_coords for {sd.num_chips} chips "
            "(expected 1 placeholder or one per chip); coordinates are not topology",
            f"{prefix}chip_coords",
        )


def _channels(sd: SystemDesc, opts: Options, prefix: str) -> Iterator[Finding]:
    pairs = [
        (c.device_id0, c.ethernet_core_coord0, c.device_id1, c.ethernet_core_coord1)
        for c in sd.chip_channels
    ]
    seen: set[tuple[object, ...]] = set()
    for i, pair in enumerate(pairs):
        d0, c0, d1, c1 = pair
        reasons = []
        if d0 == d1:
            reasons.append("links a device to itself")
        elif d0 > d1:
            reasons.append("device_id0 > device_id1 (runtime output is normalised)")
        if pair in seen:
            reasons.append("duplicates an earlier channel")
        elif (d1, c1, d0, c0) in seen and d0 != d1:
            reasons.append("reverses an earlier channel")
        seen.add(pair)
        if reasons:
            yield Finding(
                W,
                14,
                f"channel {i} ({d0} → {d1}) " + "; ".join(reasons),
                f"{prefix}chip_channels[{i}]",
            )


def _device(sd: SystemDesc, opts: Options, prefix: str) -> Iterator[Finding]:
    if opts.chip_ids is not None:
        if not opts.chip_ids:
            yield Finding(E, 24, "a device needs at least one chip id", "chip_ids")
        for chip in opts.chip_ids:
            if not 0 <= chip < sd.num_chips:
                yield Finding(
                    E,
                    24,
                    f"chip id {chip} is not a chip position (0..{sd.num_chips - 1})",
                    "chip_ids",
                )
    if opts.mesh_shape is not None and math.prod(opts.mesh_shape) > sd.num_chips:
        yield Finding(
            E,
            24,
            f"mesh shape {list(opts.mesh_shape)} needs "
            f"{math.prod(opts.mesh_shape)} chips; the system has {sd.num_chips}",
            "mesh_shape",
        )


_SYSTEM_RULES: tuple[Callable[[SystemDesc, Options, str], Iterator[Finding]], ...] = (
    _indices,
    _channels,
    _device,
)


# --- ChipDesc (rules 17-23) ----------------------------------------------------------------


def _grids(chip: ChipDesc, at: str) -> Iterator[Finding]:
    if chip.grid_size.y < 1 or chip.grid_size.x < 1:
        yield Finding(
            E,
            17,
            f"grid {chip.grid_size.y}x{chip.grid_size.x} has no worker cores",
            at + "grid_size",
        )
    dram = chip.dram_grid_size
    if dram.y < 1 or dram.x < 1:
        yield Finding(
            E, 17, f"dram_grid {dram.y}x{dram.x} has no DRAM cores", at + "dram_grid_size"
        )
    elif dram.y * dram.x != chip.num_dram_channels:
        yield Finding(
            W,
            17,
            f"dram_grid {dram.y}x{dram.x} has {dram.y * dram.x} cores but "
            f"num_dram_channels is {chip.num_dram_channels}",
            at + "dram_grid_size",
        )


def _data_types(chip: ChipDesc, at: str) -> Iterator[Finding]:
    dropped = [t.name for t in chip.supported_data_types if t >= DataType.FLOAT64]
    if dropped:
        yield Finding(
            W,
            18,
            f"data types {dropped} (FlatBuffer 13-18) are dropped by tt-mlir's reader",
            at + "supported_data_types",
        )


def _banks(chip: ChipDesc, at: str) -> Iterator[Finding]:
    for noc in ("noc0", "noc1"):
        name = f"dram_bank_to_logical_worker_{noc}"
        banks = getattr(chip, name)
        if banks and len(banks) != chip.num_dram_channels:
            yield Finding(
                W,
                19,
                f"{len(banks)} banks mapped but num_dram_channels is {chip.num_dram_channels}",
                at + name,
            )
        outside = [
            (b.y, b.x)
            for b in banks
            if not (0 <= b.y < chip.grid_size.y and 0 <= b.x < chip.grid_size.x)
        ]
        if outside:
            yield Finding(
                W,
                19,
                f"workers {outside} lie outside the {chip.grid_size.y}x{chip.grid_size.x} grid",
                at + name,
            )


def _regions(chip: ChipDesc, at: str) -> Iterator[Finding]:
    if chip.l1_unreserved_base > chip.l1_size:
        yield Finding(
            E,
            20,
            f"l1_unreserved_base {chip.l1_unreserved_base} > l1_size "
            f"{chip.l1_size}: usable L1 would wrap around",
            at + "l1_unreserved_base",
        )
    if chip.dram_unreserved_base > chip.dram_unreserved_end:
        yield Finding(
            E,
            20,
            f"dram_unreserved_base {chip.dram_unreserved_base} > "
            f"dram_unreserved_end {chip.dram_unreserved_end}",
            at + "dram_unreserved_base",
        )
    if chip.dram_unreserved_end > chip.dram_channel_size:
        yield Finding(
            E,
            20,
            f"dram_unreserved_end {chip.dram_unreserved_end} > "
            f"dram_channel_size {chip.dram_channel_size}",
            at + "dram_unreserved_end",
        )


def _alignment(chip: ChipDesc, at: str) -> Iterator[Finding]:
    for name in (
        "noc_l1_address_align_bytes",
        "pcie_address_align_bytes",
        "noc_dram_address_align_bytes",
    ):
        value = getattr(chip, name)
        if value <= 0 or value & (value - 1):
            yield Finding(W, 22, f"{name} = {value} is not a power of two", at + name)
    align = chip.noc_dram_address_align_bytes
    if align > 0 and chip.dram_unreserved_end % align:
        yield Finding(
            W,
            22,
            f"dram_unreserved_end {chip.dram_unreserved_end} is not a multiple "
            f"of noc_dram_address_align_bytes {align}",
            at + "dram_unreserved_end",
        )


def _counts(chip: ChipDesc, at: str) -> Iterator[Finding]:
    dst = chip.dst_physical_size_tiles
    if dst < 4 or dst % 4:
        yield Finding(
            W,
            23,
            f"dst_physical_size_tiles = {dst}: not a multiple of 4 (>= 4), so "
            "the logical DST size can round down to 0",
            at + "dst_physical_size_tiles",
        )
    for name in ("num_cbs", "num_compute_threads", "num_datamovement_threads"):
        if getattr(chip, name) < 1:
            yield Finding(W, 23, f"{name} = 0: no kernel can use it", at + name)


_CHIP_RULES: tuple[Callable[[ChipDesc, str], Iterator[Finding]], ...] = (
    _grids,
    _data_types,
    _banks,
    _regions,
    _alignment,
    _counts,
)


def first_error(findings: list[Finding]) -> SystemDescError | None:
    """The error :func:`check` would raise for ``findings``, or None."""
    return next((error_for(f) for f in findings if f.is_error), None)
