"""What the virtual device needs from a system descriptor (rule 27), and the one check.

Every descriptor that reaches a :class:`~tilewright.device.device.Device` goes through
:func:`check_runnable`: tt-mlir's rules (reference §11), the physical limits of the
architecture (rule 26, :mod:`tilewright.target.limits`) and what this device builds from
the descriptor (rule 27, here).  ``tilewright sysdesc check`` runs the same function, so
a descriptor it accepts runs, and one it rejects is refused by ``run`` with the same
message.

Rule 27, per chip descriptor:

* at least one chip;
* at least one circular buffer, compute thread and data-movement thread (kernels need
  a processor slot; ``num_dram_channels`` >= 1 for interleaved buffers);
* ``dst_physical_size_tiles`` >= 4, so a 32-bit DST holds at least one tile;
* non-zero L1 and DRAM alignments (the allocators round to them);
* the kernel-config region (semaphores and runtime arguments of every processor slot)
  fits below ``l1_unreserved_base``, where the device keeps it as tt-metal does.
  tt-mlir's Wormhole compiler default (``l1_unreserved_base`` = 1024) is a compile-only
  mock that fails this; the board presets (``--board n150``) carry real values;
* the usable L1 leaves room for ``ttnn.open_device``'s default L1_SMALL region.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from tilewright.device.kernel_config import DEFAULT_L1_SMALL_SIZE, kernel_config_bytes
from tilewright.target import ChipDesc, SystemDesc, SystemDescRoot, validate
from tilewright.target.findings import Finding, Severity, SystemDescRuleError
from tilewright.target.ttsys import decode_with_findings
from tilewright.target.validate import first_error

__all__ = ["check_runnable", "device_findings", "runnable_findings", "RUN_HINT"]

RUN_HINT = (
    "tt-mlir's compiler defaults are compile-only mocks; to run programs use a board "
    "preset (tilewright run --board n150|p150|n300|n300-llmbox, or `tilewright sysdesc "
    "default --board n150 -o FILE`)"
)

_AT_LEAST_ONE = (
    ("num_cbs", "circular buffers (DFB indices)"),
    ("num_compute_threads", "compute kernel slots"),
    ("num_datamovement_threads", "data-movement kernel slots"),
    ("num_dram_channels", "DRAM channels (interleaved buffers need a bank)"),
    ("noc_l1_address_align_bytes", "bytes of L1 alignment (the allocator rounds to it)"),
    ("noc_dram_address_align_bytes", "bytes of DRAM alignment (the allocator rounds to it)"),
)


def device_findings(chip: ChipDesc, at: str) -> Iterator[Finding]:
    """Rule 27 (E): what the virtual device builds from one chip descriptor."""
    for name, what in _AT_LEAST_ONE:
        if getattr(chip, name) < 1:
            yield _error(f"{name} = 0: the virtual device needs at least 1 ({what})", at + name)
    if chip.dst_physical_size_tiles < 4:
        yield _error(
            f"dst_physical_size_tiles = {chip.dst_physical_size_tiles}: a 32-bit DST would "
            "hold no tile (at least 4 physical tiles)",
            at + "dst_physical_size_tiles",
        )
    slots = max(0, chip.num_compute_threads) + max(0, chip.num_datamovement_threads)
    config = kernel_config_bytes(slots)
    if config > chip.l1_unreserved_base:
        yield _error(
            f"{chip.l1_unreserved_base} B of reserved L1 leave no room for the {config} B "
            f"kernel-config region (semaphores and runtime arguments of {slots} processor "
            "slots) the device keeps below l1_unreserved_base",
            at + "l1_unreserved_base",
        )
    usable = chip.l1_size - chip.l1_unreserved_base
    if 0 <= usable <= DEFAULT_L1_SMALL_SIZE:
        yield _error(
            f"usable L1 of {usable} B (l1_size - l1_unreserved_base) leaves nothing beyond "
            f"ttnn.open_device's default {DEFAULT_L1_SMALL_SIZE} B L1_SMALL region",
            at + "l1_size",
        )


def runnable_findings(
    obj: bytes | bytearray | memoryview | SystemDescRoot | SystemDesc,
    *,
    strict: bool = False,
    for_mlir: bool = False,
    schema_hash: str | None = None,
    chip_ids: Sequence[int] | None = None,
) -> list[Finding]:
    """Every finding of tt-mlir's rules, the physical limits (26) and the device's needs (27)."""
    findings = validate(
        obj,
        strict=strict,
        for_mlir=for_mlir,
        schema_hash=schema_hash,
        chip_ids=chip_ids,
        for_device=True,
    )
    if first_error(findings) is not None:  # later rules assume a well-formed descriptor
        return findings
    if isinstance(obj, bytes | bytearray | memoryview):
        obj, _ = decode_with_findings(obj, strict=strict)  # validated above: it decodes
    sd = obj.system_desc if isinstance(obj, SystemDescRoot) else obj
    prefix = "system_desc." if isinstance(obj, SystemDescRoot) else ""
    if sd.num_chips == 0:
        findings.append(
            _error(
                "the system has no chips (chip_desc_indices is empty): no device can be "
                "built from it (tt-mlir's Quasar default is such a stub)",
                f"{prefix}chip_desc_indices",
            )
        )
    for i, chip in enumerate(sd.chip_descs):
        findings.extend(device_findings(chip, f"{prefix}chip_descs[{i}]."))
    return findings


def check_runnable(
    obj: SystemDescRoot | SystemDesc,
    *,
    strict: bool = False,
    schema_hash: str | None = None,
    chip_ids: Sequence[int] | None = None,
) -> list[Finding]:
    """The one check for a descriptor headed to the device: raise the first error.

    Returns the warnings.  Raises a :class:`~tilewright.errors.SystemDescError` (rule
    ``system-desc.<n>``) for the first broken rule; rule-27 errors carry a hint on how
    to get a runnable descriptor.
    """
    findings = runnable_findings(obj, strict=strict, schema_hash=schema_hash, chip_ids=chip_ids)
    error = first_error(findings)
    if error is not None:
        if isinstance(error, SystemDescRuleError) and error.finding.rule == 27:
            error.hint = RUN_HINT
        raise error
    return findings


def _error(message: str, path: str) -> Finding:
    return Finding(Severity.ERROR, 27, message, path)
