"""ttnn.matmul / ttnn.linear honour compute_kernel_config's math_fidelity (issue 23)."""

import numpy as np
import pytest
import torch

from tilewright import ttnn
from tilewright.device.ops import OpParamError
from tilewright.device.ops.numerics import fidelity_product


@pytest.fixture
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


def _operands():
    g = torch.Generator().manual_seed(23)
    a = (torch.rand(64, 96, generator=g) * 1.5 + 0.5).to(torch.bfloat16)
    b = (torch.rand(96, 64, generator=g) * 1.5 + 0.5).to(torch.bfloat16)
    return a, b


def _config(fidelity):
    return ttnn.WormholeComputeKernelConfig(math_fidelity=fidelity, fp32_dest_acc_en=True)


def _matmul(device, a, b, config, op=ttnn.matmul):
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out = op(
        ttnn.from_torch(a, **kw),
        ttnn.from_torch(b, **kw),
        dtype=ttnn.float32,
        compute_kernel_config=config,
    )
    return ttnn.to_torch(out).numpy()


FIDELITIES = ("LoFi", "HiFi2", "HiFi3", "HiFi4")


def test_lofi_is_visibly_worse_than_hifi4(device):
    a, b = _operands()
    exact = a.double().numpy() @ b.double().numpy()
    err = {}
    for name in FIDELITIES:
        got = _matmul(device, a, b, _config(getattr(ttnn.MathFidelity, name)))
        err[name] = float((np.abs(got - exact) / np.abs(exact)).max())
    assert err["LoFi"] > err["HiFi2"] > err["HiFi3"] >= err["HiFi4"], err
    assert 1e-2 < err["LoFi"] < 5e-2, err  # SrcA keeps 4 of bf16's 7 mantissa bits
    assert err["HiFi4"] < 1e-6, err  # exact bf16 products, float32 sums
    assert err["LoFi"] > 1000 * err["HiFi4"], err


def test_the_slicing_is_the_kernel_apis(device):
    """ttnn.matmul's LoFi is numerics.fidelity_product (in0 = SrcB, in1 = SrcA)."""
    a, b = _operands()
    got = _matmul(device, a, b, _config(ttnn.MathFidelity.LoFi))
    want = fidelity_product(a.float().numpy(), b.float().numpy(), 0, matmul=True)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_hifi4_and_no_config_are_today_bits(device):
    """No result change at the default: no config is HiFi4, the unsliced float32 product."""
    a, b = _operands()
    none = _matmul(device, a, b, None)
    hifi4 = _matmul(device, a, b, _config(ttnn.MathFidelity.HiFi4))
    plain = np.matmul(a.float().numpy(), b.float().numpy())
    assert np.array_equal(none.view(np.uint32), plain.view(np.uint32))
    assert np.array_equal(hifi4.view(np.uint32), plain.view(np.uint32))


def test_linear_honours_the_fidelity(device):
    a, b = _operands()
    lofi = _matmul(device, a, b, _config(ttnn.MathFidelity.LoFi), ttnn.linear)
    hifi4 = _matmul(device, a, b, _config(ttnn.MathFidelity.HiFi4), ttnn.linear)
    assert not np.array_equal(lofi, hifi4)
    assert np.array_equal(lofi, _matmul(device, a, b, _config(ttnn.MathFidelity.LoFi)))


def test_a_config_without_fidelity_has_tt_metals_default_lofi(device):
    a, b = _operands()
    default = _matmul(device, a, b, ttnn.WormholeComputeKernelConfig(fp32_dest_acc_en=True))
    lofi = _matmul(device, a, b, _config(ttnn.MathFidelity.LoFi))
    assert np.array_equal(default, lofi)


def test_a_bad_fidelity_is_rejected(device):
    a, b = _operands()

    class Config:
        math_fidelity = 7

    with pytest.raises(OpParamError, match=r"ttnn.matmul: compute_kernel_config.math_fidelity=7"):
        _matmul(device, a, b, Config())


def _reduce(device, op, x, config, dim=-1):
    kw = dict(dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    return ttnn.to_torch(op(ttnn.from_torch(x, **kw), dim, compute_kernel_config=config)).numpy()


@pytest.mark.parametrize("op", [ttnn.sum, ttnn.mean], ids=["sum", "mean"])
def test_sum_and_mean_honour_the_fidelity(device, op):
    """reduce SUM / AVG: the input is SrcA (sliced), the scaler (1.0, 1/N) SrcB."""
    g = torch.Generator().manual_seed(5)
    x = (torch.rand(32, 96, generator=g) * 1.5 + 0.5).to(torch.bfloat16).float()
    exact = x.double().numpy().sum(axis=-1) / (96 if op is ttnn.mean else 1)
    err = {}
    for name in FIDELITIES:
        got = _reduce(device, op, x, _config(getattr(ttnn.MathFidelity, name)))
        err[name] = float((np.abs(got - exact) / np.abs(exact)).max())
    assert err["LoFi"] > err["HiFi2"] >= err["HiFi3"] >= err["HiFi4"], err
    assert 2e-3 < err["LoFi"] < 6e-2, err
    assert err["HiFi4"] < 1e-6, err
    plain = (np.mean if op is ttnn.mean else np.sum)(x.numpy(), axis=-1)
    hifi4 = _reduce(device, op, x, _config(ttnn.MathFidelity.HiFi4))
    assert np.array_equal(hifi4, plain) and np.array_equal(_reduce(device, op, x, None), plain)


def test_max_runs_no_fidelity_phases(device):
    x = torch.rand(32, 64) + 0.5
    lofi = _reduce(device, ttnn.max, x, _config(ttnn.MathFidelity.LoFi))
    assert np.array_equal(lofi, x.numpy().max(axis=-1))
