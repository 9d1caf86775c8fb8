"""The MathFidelity values are named by one text (``numerics.FIDELITY_CHOICES``) in every
guard: the Python kernel API's ``check_fidelity``, the host ``ComputeConfig`` and the native
runtime's ``fpu_product`` (through the generated ``twrt_fidelity.h``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tilewright.device.ops.numerics import FIDELITY_CHOICES, check_fidelity
from tilewright.device.program import ComputeConfig, MathFidelity
from tilewright.errors import DeviceError
from tilewright.native import headers


def test_choices_list_every_math_fidelity():
    assert FIDELITY_CHOICES == "(" + ", ".join(f"{f.name} {int(f)}" for f in MathFidelity) + ")"


def test_every_guard_names_the_same_values():
    with pytest.raises(ValueError) as python_api:
        check_fidelity(1)
    with pytest.raises(DeviceError) as host:
        ComputeConfig(math_fidelity=5)
    assert str(python_api.value) == f"math_fidelity 1 is not a MathFidelity {FIDELITY_CHOICES}"
    assert str(host.value).endswith(f"expected a MathFidelity {FIDELITY_CHOICES}")
    text = re.search(r'#define TW_FIDELITY_CHOICES "(.*)"', headers.fidelity_header())
    assert text is not None and text.group(1) == FIDELITY_CHOICES
    runtime = (Path(headers.__file__).parent / "runtime" / "compute.cpp").read_text()
    assert '"math_fidelity %d is not a MathFidelity " TW_FIDELITY_CHOICES' in runtime
