"""ttnn host-API inputs the hostile-input driver found (benchmarks/bench_hostile_inputs.py):
each is a Tilewright error at the user's line, not a numpy or Python exception."""

from __future__ import annotations

import inspect

import pytest
import torch

from tilewright import ttnn
from tilewright.device.ops import OpParamError, OpShapeError
from tilewright.errors import DeviceError


@pytest.fixture(scope="module")
def tensor():
    device = ttnn.open_device(device_id=0, board="n150")
    yield ttnn.from_torch(torch.rand(64, 64), layout=ttnn.TILE_LAYOUT, device=device)
    ttnn.close_device(device)


CASES = {
    "index with a string": (lambda t: t["a"], OpParamError, "an index is an int, a slice or ..."),
    "slice past the end": (lambda t: t[70:80, 0], OpShapeError, "selects no elements"),
    "reversed slice": (lambda t: t[9:5, 0], OpShapeError, "selects no elements"),
    "index out of range": (lambda t: t[64, 0], OpParamError, "out of bounds"),
    "device id a string": (
        lambda t: ttnn.open_device(device_id="a"),
        DeviceError,
        "device_id must be an int",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_odd_host_api_arguments_are_located_errors(tensor, name):
    call, cls, text = CASES[name]
    with pytest.raises(cls, match=text) as info:
        call(tensor)
    assert info.value.loc is not None and info.value.loc.file == __file__
    assert info.value.loc.line == inspect.getsourcelines(call)[1]
