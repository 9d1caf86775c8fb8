"""The math-fidelity matrix: every FPU op x every MathFidelity x both DST modes, both engines.

1. Same bits: each case runs through the Python kernel API and the native runtime (one C++
   kernel with a switch over the cases, from ``test_op_differential``'s machinery) on the
   same input tiles -- random float32 values with NaN, infinities and signed zeros -- at
   LoFi, HiFi2, HiFi3 and HiFi4, with fp32 and with bf16 DST; the output bits must be equal.
   The ops the fidelity does not touch (add, reduce MAX) are in the matrix too: they must
   not change with it.
2. Error against float64 on well-conditioned operands (bf16 values in [0.5, 2)): ordered
   LoFi > HiFi2 > HiFi3 >= HiFi4 with the magnitudes the slicing implies (SrcA keeps 4 of
   bf16's 7 mantissa bits at LoFi, SrcB 6), and HiFi4 is today's result, bit for bit: the
   float32 product of the unsliced operands.
3. ttnn.matmul honours compute_kernel_config: LoFi visibly worse than HiFi4.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.native.test_op_differential import COPY_A, Call, _python_kernel, _run, _source
from tilewright.device.kernel_api import (
    EltwiseBinaryReuseDestType,
    EltwiseBinaryType,
    PoolType,
    ReduceDim,
)
from tilewright.device.ops.numerics import fidelity_product
from tilewright.device.program import MathFidelity
from tilewright.native.kernels import NativeKernel

FIDELITIES = (MathFidelity.LoFi, MathFidelity.HiFi2, MathFidelity.HiFi3, MathFidelity.HiFi4)

_REUSE = (EltwiseBinaryReuseDestType.DEST_TO_SRCA, EltwiseBinaryReuseDestType.DEST_TO_SRCB)


def _cases() -> dict[str, tuple[tuple[Call, ...], int]]:
    cases: dict[str, tuple[tuple[Call, ...], int]] = {
        "mul_tiles": ((Call("mul_tiles", (0, 1, 0, 0, 0)),), 0),
        "add_tiles": ((Call("add_tiles", (0, 1, 0, 0, 0)),), 0),  # no fidelity
    }
    for kind in ("rows", "cols", "scalar"):
        cases[f"mul_bcast_{kind}"] = ((Call(f"mul_tiles_bcast_{kind}", (0, 1, 0, 0, 0)),), 0)
    for reuse in _REUSE:
        calls = (
            Call("copy_tile", (1, 0, 0)),
            Call("binary_dest_reuse_tiles", (0, 0, 0), (EltwiseBinaryType.ELWMUL, reuse)),
        )
        cases[f"mul_reuse_{reuse.name.lower()}"] = (calls, 0)
    for transpose in (0, 1):
        cases[f"matmul_tiles:transpose={transpose}"] = (
            (
                Call("mm_init_short", (0, 1, transpose)),
                Call("matmul_tiles", (0, 1, 0, 0, 0, transpose)),
                Call("matmul_tiles", (1, 0, 0, 0, 0, transpose)),  # accumulates in DST
            ),
            0,
        )
    cases["matmul_block"] = (
        (
            Call("mm_block_init_short", (0, 1, 0, 1, 1, 1)),
            Call("matmul_block", (0, 1, 0, 0, 0, 0, 1, 1, 1)),
        ),
        0,
    )
    for pool in (PoolType.SUM, PoolType.AVG, PoolType.MAX):
        for dim in ReduceDim:
            calls = (COPY_A, Call("reduce_tile", (0, 1, 0, 0, 0), (pool, dim)))
            cases[f"reduce:{pool.name}:{dim.name}"] = (calls, 0)
    return cases


CASES = _cases()
SOURCE = _source(CASES)


def _both(device, case: str, fidelity, fp32_dest: bool, inputs=None):
    calls, _ = CASES[case]
    index = list(CASES).index(case)
    native = _run(
        device, NativeKernel(source=SOURCE, name="ops"), [index], fp32_dest, fidelity, inputs
    )
    python = _run(device, _python_kernel(calls), None, fp32_dest, fidelity, inputs)
    return native, python


def _same_bits(native: np.ndarray, python: np.ndarray) -> bool:
    return bool(np.array_equal(native.view(np.uint32), python.view(np.uint32)))


@pytest.mark.parametrize("fp32_dest", [True, False], ids=["dst-fp32", "dst-bf16"])
@pytest.mark.parametrize("fidelity", FIDELITIES, ids=[f.name for f in FIDELITIES])
@pytest.mark.parametrize("case", list(CASES))
def test_both_engines_same_bits(device, case, fidelity, fp32_dest):
    native, python = _both(device, case, fidelity, fp32_dest)
    assert _same_bits(native, python), (case, fidelity.name, fp32_dest)


@pytest.mark.parametrize("case", ["add_tiles", "reduce:MAX:REDUCE_ROW", "reduce:MAX:REDUCE_SCALAR"])
def test_ops_without_fidelity_phases_do_not_change(device, case):
    """add / sub run one pass of full operands; reduce MAX runs no fidelity phases."""
    lofi, _ = _both(device, case, MathFidelity.LoFi, True)
    hifi4, _ = _both(device, case, MathFidelity.HiFi4, True)
    assert _same_bits(lofi, hifi4), case


@pytest.mark.parametrize("case", ["mul_tiles", "matmul_tiles:transpose=0", "reduce:SUM:REDUCE_ROW"])
def test_lower_fidelities_change_the_multiplies(device, case):
    """The FPU multiplies do depend on the fidelity (the matrix above is not vacuous)."""
    outs = [_both(device, case, f, True, _well_conditioned())[0] for f in FIDELITIES]
    for i in range(len(outs)):
        for j in range(i + 1, len(outs)):
            assert not _same_bits(outs[i], outs[j]), (case, FIDELITIES[i].name, FIDELITIES[j].name)


# -- error against float64 -------------------------------------------------------------------


def _bf16(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)


def _well_conditioned() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(23)
    a = _bf16(rng.uniform(0.5, 2.0, (32, 32)))
    b = _bf16(rng.uniform(0.5, 2.0, (32, 32)))
    b[0, 0] = _bf16(np.array([0.7]))[0]  # the scaler: low mantissa bits set, as 1/N often has
    return a, b


def _exact(case: str, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(float64 result, mask of the elements the op computes)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if case == "mul_tiles":
        return a64 * b64, np.ones_like(a, dtype=bool)
    if case == "matmul_tiles:transpose=0":  # A @ B + B @ A
        return a64 @ b64 + b64 @ a64, np.ones_like(a, dtype=bool)
    assert case == "reduce:SUM:REDUCE_ROW"  # column 0: a[i, 0] + scaler * sum of row i
    out = a64.copy()
    out[:, 0] += a64.sum(axis=1) * b64[0, 0]
    mask = np.zeros_like(a, dtype=bool)
    mask[:, 0] = True
    return out, mask


# Max relative error vs float64 (fp32 DST, fp32 output CB), measured on these operands:
# (LoFi, HiFi2, HiFi3, HiFi4) lower and upper bounds.  LoFi keeps 4 of SrcA's 7 bf16
# mantissa bits and 6 of SrcB's (error ~2**-5); HiFi2 keeps all of SrcA (~2**-7, SrcB's
# LSB); HiFi3 drops only A_lo x B_lo (~2**-11); HiFi4 is exact products in float32.
BOUNDS = {
    "mul_tiles": ((2e-2, 8e-2), (2e-3, 1.2e-2), (5e-5, 1e-3), (0.0, 0.0)),
    "matmul_tiles:transpose=0": ((1e-2, 5e-2), (1e-3, 8e-3), (2e-5, 3e-4), (0.0, 1e-6)),
    "reduce:SUM:REDUCE_ROW": ((1e-2, 5e-2), (1e-3, 8e-3), (1e-5, 3e-4), (0.0, 1e-6)),
}


@pytest.mark.parametrize("case", list(BOUNDS))
def test_error_vs_float64_is_ordered_by_fidelity(device, case):
    a, b = _well_conditioned()
    exact, mask = _exact(case, a, b)
    errors = []
    for fidelity in FIDELITIES:
        native, python = _both(device, case, fidelity, True, (a, b))
        assert _same_bits(native, python), (case, fidelity.name)
        rel = np.abs(native.astype(np.float64) - exact) / np.abs(exact)
        errors.append(float(rel[mask].max()))
    lofi, hifi2, hifi3, hifi4 = errors
    assert lofi > hifi2 > hifi3 >= hifi4, (case, errors)
    for fidelity, err, (lo, hi) in zip(FIDELITIES, errors, BOUNDS[case]):
        assert lo <= err <= hi, (case, fidelity.name, err, (lo, hi))


def test_hifi4_is_the_unsliced_float32_product(device):
    """No result changes at the default: HiFi4 is the plain float32 product (of the registry)."""
    a, b = _well_conditioned()
    native, python = _both(device, "mul_tiles", MathFidelity.HiFi4, True, (a, b))
    assert _same_bits(native, a * b) and _same_bits(python, a * b)
    native, _ = _both(device, "mul_tiles", MathFidelity.HiFi3, True, (a, b))
    assert _same_bits(native, fidelity_product(b, a, 3, matmul=False))


def test_bf16_dst_keeps_the_lofi_loss_visible(device):
    """With a bf16 DST (rounding to 2**-9) LoFi's ~2**-5 error still dominates."""
    a, b = _well_conditioned()
    exact, _ = _exact("mul_tiles", a, b)
    err = {}
    for fidelity in (MathFidelity.LoFi, MathFidelity.HiFi4):
        native, python = _both(device, "mul_tiles", fidelity, False, (a, b))
        assert _same_bits(native, python)
        err[fidelity] = float((np.abs(native - exact) / exact).max())
    assert err[MathFidelity.LoFi] > 8 * err[MathFidelity.HiFi4], err
    assert err[MathFidelity.HiFi4] <= 2.0**-8, err
