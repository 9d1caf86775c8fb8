"""The error classes native code reports (libtwrt's ``ErrClass`` and compiled TT-Lang's
``ttlang::ErrorClass``) are one numbering: the driver maps each number to one Python error
type, so a number used by both would misreport (a block-state error once came back as a
watchdog interrupt).  Both are generated into twrt_errors.h from the one table
(device/api_messages.py ERROR_CLASSES), which twrt.h and ttlang/support.h include."""

from __future__ import annotations

import re
from pathlib import Path

from tilewright import errors
from tilewright.compiler.backend.lower.violations import RUNTIME_CLASSES
from tilewright.native import driver, headers

ROOT = Path(__file__).resolve().parents[3] / "tilewright"


def _enum(text: str, name: str) -> dict[str, int]:
    body = re.search(rf"enum {name}\b[^{{]*\{{(.*?)\}};", text, re.S)
    assert body is not None, f"enum {name} not found"
    return {m[0]: int(m[1]) for m in re.findall(r"(\w+)\s*=\s*(\d+)", body.group(1))}


RUNTIME_NAME = {
    "KernelError": "ERR_KERNEL",
    "DFBContractError": "ERR_DFB",
    "NocError": "ERR_NOC",
    "BlockStateError": "ERR_BLOCK_STATE",
    "DeviceError": "ERR_DEVICE",
    "FormatError": "ERR_FORMAT",
}


def test_compiled_tt_lang_error_classes_match_the_runtime_and_the_driver():
    generated = headers.errors_header()
    for path in ("native/runtime/twrt.h", "compiler/backend/include/ttlang/support.h"):
        text = (ROOT / path).read_text()
        assert '#include "twrt_errors.h"' in text and "enum ErrorClass" not in text, path
    runtime = _enum(generated, "ErrClass")
    support = _enum(generated, "ErrorClass")
    assert len(set(runtime.values())) == len(runtime), "two runtime classes share a number"
    for name, number in support.items():
        assert runtime[RUNTIME_NAME[name]] == number, name
        assert issubclass(driver._ERROR_CLASSES[number], getattr(errors, name)), name


def test_the_lowering_emits_exactly_the_classes_compiled_kernels_raise():
    """A rule's violation becomes a ``fail`` op only for a class ``ttlang::ErrorClass`` has
    (``lower/violations.py``); any other class makes the kernel not compilable."""
    support = _enum(headers.errors_header(), "ErrorClass")
    assert {cls.__name__ for cls in RUNTIME_CLASSES} == set(support)
