"""ttnn's ``fast_and_approximate_mode``: the SFPU's approximate program (exp, tanh), else precise.

tt-metal's ttnn passes the flag to ``exp_tile<approx>`` / ``tanh_tile<approx>``; the virtual
device runs ``device/ops/sfpu_algorithms``' approximate program on the float32 values and
rounds once on store.  Off (the default), the op is the registry's precise program.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tilewright import ttnn
from tilewright.device.ops import REGISTRY
from tilewright.device.ops.sfpu_algorithms import sfpu_value


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


def _values() -> np.ndarray:
    return np.random.default_rng(5).uniform(-4.0, 4.0, size=(32, 64)).astype(np.float32)


@pytest.mark.parametrize("name", ["exp", "tanh"])
def test_fast_and_approximate_mode_runs_the_approximate_program(device, name):
    x = _values()
    tensor = ttnn.from_torch(
        torch.from_numpy(x), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device
    )
    fast = ttnn.to_torch(getattr(ttnn, name)(tensor, fast_and_approximate_mode=True)).numpy()
    precise = ttnn.to_torch(getattr(ttnn, name)(tensor)).numpy()
    assert np.array_equal(fast, sfpu_value(name, x, approx=True, fp32_dest=True))
    assert np.array_equal(precise, REGISTRY[name].apply(x))
    reference = getattr(np, name)(x.astype(np.float64))
    fast_err = np.abs(fast - reference).max()
    precise_err = np.abs(precise - reference).max()
    assert fast_err > 100 * precise_err, (fast_err, precise_err)


def test_the_flag_does_not_change_ops_without_an_approximate_program(device):
    x = np.abs(_values()) + np.float32(0.5)
    tensor = ttnn.from_torch(
        torch.from_numpy(x), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device
    )
    fast = ttnn.to_torch(ttnn.log(tensor, fast_and_approximate_mode=True)).numpy()
    assert np.array_equal(fast, REGISTRY["log"].apply(x))
