"""Math fidelity mantissa slices (numerics.fidelity_product): error ordering vs float64."""

import numpy as np
import pytest

from tilewright.device.ops.numerics import FIDELITY_PHASES, fidelity_product


def _bf16(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)


def _operands(bf16: bool):
    rng = np.random.default_rng(23)
    a = rng.uniform(0.5, 2.0, (32, 32)).astype(np.float32)
    b = rng.uniform(0.5, 2.0, (32, 32)).astype(np.float32)
    return (_bf16(a), _bf16(b)) if bf16 else (a, b)


def _errors(matmul: bool, bf16: bool) -> dict[int, float]:
    a, b = _operands(bf16)
    exact = a.astype(np.float64) @ b.astype(np.float64) if matmul else a.astype(np.float64) * b
    out = {}
    for fid in FIDELITY_PHASES:
        got = fidelity_product(a, b, fid, matmul=matmul).astype(np.float64)
        out[fid] = float(np.max(np.abs(got - exact) / np.abs(exact)))
    return out


@pytest.mark.parametrize("matmul", [True, False], ids=["matmul", "mul"])
@pytest.mark.parametrize("bf16", [True, False], ids=["bf16-in", "fp32-in"])
def test_error_ordering_lofi_worst_hifi4_best(matmul, bf16):
    e = _errors(matmul, bf16)
    assert e[0] > e[2] > e[3] >= e[4], e
    # Measured max relative errors (matmul / mul): LoFi 2.9e-2..6.8e-2 (A keeps 4 mantissa
    # bits, B 6), HiFi2 4.1e-3..1.6e-2, HiFi3 9.5e-5..2.6e-3, HiFi4 0 (bf16) / 1.3e-3..2.4e-3.
    assert 2.0**-9 < e[0] < 2.0**-3, e
    assert e[0] > 3 * e[2] and e[2] > 2 * e[3], e
    # HiFi4: bf16 inputs are exact products (float32 accumulation only); fp32 inputs keep
    # TF32 with SrcA's last mantissa bit dropped: about 2**-10.
    assert e[4] < (2.0**-20 if bf16 else 2.0**-8), e


def test_slices_of_one_product_are_the_masked_operands():
    a = np.array([1.0 + 2.0**-4 + 2.0**-7], dtype=np.float32)  # A_hi keeps 4 mantissa bits
    b = np.array([1.0 + 2.0**-6 + 2.0**-7], dtype=np.float32)  # B_hi keeps 6
    assert fidelity_product(b, a, 0, matmul=False)[0] == np.float32((1 + 2**-4) * (1 + 2**-6))
    assert fidelity_product(b, a, 2, matmul=False)[0] == np.float32(
        (1 + 2**-4 + 2**-7) * (1 + 2**-6)
    )
    assert fidelity_product(b, a, 4, matmul=False)[0] == a[0] * b[0]


def test_unknown_fidelity_is_rejected():
    with pytest.raises(ValueError, match="math_fidelity 1 is not a MathFidelity"):
        fidelity_product(np.ones((2, 2)), np.ones((2, 2)), 1, matmul=True)


def test_compute_config_refuses_a_value_that_is_not_a_math_fidelity():
    from tilewright.device.program import ComputeConfig, MathFidelity
    from tilewright.errors import DeviceError

    assert ComputeConfig(math_fidelity=2).math_fidelity is MathFidelity.HiFi2
    with pytest.raises(
        DeviceError, match=r"ComputeConfig\(math_fidelity=1\): expected a MathFidelity"
    ):
        ComputeConfig(math_fidelity=1)


def test_non_finite_operands_keep_their_value_below_hifi4():
    a = np.array([np.inf, -np.inf, np.nan, 1.5], dtype=np.float32)
    b = np.array([1.25, 1.25, 1.25, np.inf], dtype=np.float32)
    for fid in (0, 2, 3):
        got = fidelity_product(b, a, fid, matmul=False)
        assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2]) and got[3] == np.inf
