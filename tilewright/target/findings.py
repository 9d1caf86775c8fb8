"""Validation findings, the rule catalogue and the warning category (reference §11).

A :class:`Finding` is one broken rule: severity (E rejects, W warns), the §11 rule number,
a message and the path of the offending field.  The decoder and :mod:`validate` both
produce findings; :func:`error_for` turns an E finding into a :class:`SystemDescError`
whose ``rule`` is the same id.  Rules 0, 26 and 27 are Tilewright's own: a model value
that does not fit its FlatBuffer type; a count or size no real chip has
(:mod:`limits`); what the virtual device needs (``tilewright.device.requirements``).
"""

from __future__ import annotations

import enum
import warnings
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from tilewright.errors import SystemDescError

__all__ = [
    "RULES",
    "Finding",
    "Severity",
    "SystemDescRuleError",
    "SystemDescWarning",
    "emit_warnings",
    "error_for",
    "rule_id",
]


class SystemDescWarning(UserWarning):
    """A legal but suspicious system descriptor (a W finding), e.g. an unknown schema hash.

    Lives in the target layer because ``tilewright/errors.py`` has no warning classes yet.
    """


class Severity(enum.Enum):
    """E: tt-mlir would crash, misbehave or reject; W: legal but suspicious (§11)."""

    ERROR = "E"
    WARNING = "W"

    def __str__(self) -> str:
        return self.value


#: Rule number → one-line title (§11; 0, 26 and 27 are Tilewright's: representability,
#: physical limits and what the virtual device needs).
RULES: Final = MappingProxyType(
    {
        0: "value representable in its FlatBuffer type",
        1: "size prefix matches the file length",
        2: "file identifier is TTSY",
        3: "offsets, vtables, vectors and strings in bounds",
        4: "no vtable entries beyond the known schema",
        5: "root fields present",
        6: "schema_hash of the targeted tt-mlir version",
        7: "ttmlir_git_hash and product_identifier plausible",
        8: "SystemDesc vectors present",
        9: "chip_desc_indices in range",
        10: "one capability per chip position",
        11: "capabilities use only bit 0 (HostMMIO)",
        12: "chip_descs used, indices identity",
        13: "chip_coords has 1 or chip-count entries",
        14: "chip_channels well-formed",
        15: "CPU descriptors valid",
        16: "arch is a known FlatBuffer Arch",
        17: "grids present and non-empty",
        18: "supported data types and tile sizes",
        19: "DRAM bank to worker maps",
        20: "unreserved regions ordered",
        21: "sizes fit MLIR's 32-bit unsigned",
        22: "alignments are powers of two",
        23: "DST size and kernel counts",
        24: "device chip ids and mesh shape",
        25: "printable as #ttcore.system_desc",
        26: "counts and sizes a real chip can have",
        27: "runnable on Tilewright's virtual device",
    }
)


def rule_id(rule: int) -> str:
    """The ``rule`` string carried by errors: ``system-desc.<n>``."""
    return f"system-desc.{rule}"


@dataclass(frozen=True, slots=True)
class Finding:
    """One broken validation rule.

    Attributes:
        severity: E (reject) or W (warn).
        rule: §11 rule number (0 = not representable).
        message: what is wrong and why it matters.
        path: field path, e.g. ``system_desc.chip_descs[0].l1_unreserved_base`` ('' = file).
        offset: byte offset for binary findings, else None.
    """

    severity: Severity
    rule: int
    message: str
    path: str = ""
    offset: int | None = None

    @property
    def rule_id(self) -> str:
        return rule_id(self.rule)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def __str__(self) -> str:
        where = f" {self.path}:" if self.path else ""
        at = f" (byte offset {self.offset})" if self.offset is not None else ""
        return f"{self.severity} [rule {self.rule}]{where} {self.message}{at}"


class SystemDescRuleError(SystemDescError):
    """A :class:`SystemDescError` raised for one §11 rule; ``finding`` holds its details."""

    def __init__(self, message: str, finding: Finding) -> None:
        super().__init__(
            message, field=finding.path or None, offset=finding.offset, rule=finding.rule_id
        )
        self.finding = finding


def error_for(finding: Finding) -> SystemDescRuleError:
    """The :class:`SystemDescError` that reports an E finding."""
    where = f"{finding.path}: " if finding.path else ""
    at = f" (byte offset {finding.offset})" if finding.offset is not None else ""
    return SystemDescRuleError(
        f"{where}{finding.message}{at} [rule {finding.rule}: {RULES[finding.rule]}]", finding
    )


def emit_warnings(findings: list[Finding], stacklevel: int = 3) -> None:
    """Issue each W finding as a :class:`SystemDescWarning`."""
    for finding in findings:
        if not finding.is_error:
            warnings.warn(str(finding), SystemDescWarning, stacklevel=stacklevel)
