"""The error classes native code reports (libtwrt's ``ErrorClass`` in runtime/twrt.h and
compiled TT-Lang's in ttlang/support.h) are one numbering: the driver maps each number to
one Python error type, so a number used by both headers would misreport (a block-state
error once came back as a watchdog interrupt)."""

from __future__ import annotations

import re
from pathlib import Path

from tilewright import errors
from tilewright.native import driver

ROOT = Path(__file__).resolve().parents[3] / "tilewright"


def _enum(path: Path, name: str) -> dict[str, int]:
    text = path.read_text()
    body = re.search(rf"enum {name}\b[^{{]*\{{(.*?)\}};", text, re.S)
    assert body is not None, f"enum {name} not found in {path}"
    return {m[0]: int(m[1]) for m in re.findall(r"(\w+)\s*=\s*(\d+)", body.group(1))}


RUNTIME_NAME = {
    "KernelError": "ERR_KERNEL",
    "DFBContractError": "ERR_DFB",
    "NocError": "ERR_NOC",
    "BlockStateError": "ERR_BLOCK_STATE",
    "DeviceError": "ERR_DEVICE",
}


def test_compiled_tt_lang_error_classes_match_the_runtime_and_the_driver():
    runtime = _enum(ROOT / "native/runtime/twrt.h", "ErrClass")
    support = _enum(ROOT / "compiler/backend/include/ttlang/support.h", "ErrorClass")
    assert len(set(runtime.values())) == len(runtime), "two runtime classes share a number"
    for name, number in support.items():
        assert runtime[RUNTIME_NAME[name]] == number, name
        assert issubclass(driver._ERROR_CLASSES[number], getattr(errors, name)), name


def test_the_lowering_emits_exactly_the_classes_compiled_kernels_raise():
    """A rule's violation becomes a ``fail`` op only for a class ``ttlang::ErrorClass`` has
    (``lower/violations.py``); any other class makes the kernel not compilable."""
    from tilewright.compiler.backend.lower.violations import RUNTIME_CLASSES

    support = _enum(ROOT / "compiler/backend/include/ttlang/support.h", "ErrorClass")
    assert {cls.__name__ for cls in RUNTIME_CLASSES} == set(support)
