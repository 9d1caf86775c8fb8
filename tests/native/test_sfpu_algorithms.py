"""The SFPU's programs (exp, recip, sqrt, rsqrt, log, sigmoid, tanh) on both kernel APIs.

``device/ops/sfpu_algorithms.py`` defines each op's precise and approximate program as
tt-metal's LLK runs it; the native runtime's ``runtime/sfpu_math.h`` is its C++ twin.  Each
case runs ``<op>_tile`` on one tile of a sweep (seven decades each way, zeros, infinities,
NaN, denormals, the clamp edges of exp) under ``math_approx_mode`` x ``fp32_dest_acc_en``,
once as a native C++ kernel (``<op>_tile<APPROX>(0)``, tt-metal's spelling: the macro is the
kernel's ``math_approx_mode``) and once through the Python kernel API, and compares bits.  The
error against float64 is checked against the bounds docs/device.md ("SFPU algorithms")
states, and the approximate programs are shown to be the worse ones where the LLK's are.
"""

from __future__ import annotations

import numpy as np
import pytest

from tilewright.device import kernel_api as k
from tilewright.device.coords import CoreCoord
from tilewright.device.formats import DataFormat, TILE_32x32, decode_block, encode_block
from tilewright.device.ops import REGISTRY
from tilewright.device.ops.sfpu_algorithms import (
    ALGORITHMS,
    APPROX_AS_PRECISE,
    sfpu_value,
    to_bf16,
)
from tilewright.device.ops.tile_ops import SFPU_OPS
from tilewright.device.program import (
    CircularBufferConfig,
    ComputeConfig,
    Program,
    ReaderDataMovementConfig,
    WriterDataMovementConfig,
)
from tilewright.native.kernels import NativeKernel

OPS = tuple(ALGORITHMS)
MODES = [(approx, fp32) for approx in (False, True) for fp32 in (True, False)]
MODE_IDS = [f"{'approx' if a else 'precise'}-{'fp32' if f else 'bf16'}" for a, f in MODES]


def _sweep() -> np.ndarray:
    """1024 float32 lanes: specials first, then +-logspace and uniform values."""
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 2.0, 0.5, 1e-40, -1e-40]
    special += [88.0, 88.5, 88.75, 89.0, -88.0, -88.5, -89.0, -87.0, 126.0, -126.0, 3.4e38]
    rng = np.random.default_rng(23)
    rest = 1024 - len(special)
    mags = np.exp(rng.uniform(-16.0, 16.0, rest // 2))
    values = np.concatenate(
        [special, mags, -mags[: rest // 4], rng.uniform(-10.0, 10.0, rest - rest // 2 - rest // 4)]
    )
    return values.astype(np.float32).reshape(32, 32)


SOURCE = "\n".join(
    [
        "#include <cstdint>",
        '#include "api/compute/compute_kernel_api.h"',
        "void kernel_main() {",
        "    const uint32_t which = get_arg_val<uint32_t>(0);",
        "    cb_wait_front(0, 1);",
        "    cb_reserve_back(16, 1);",
        "    tile_regs_acquire();",
        "    copy_tile(0, 0, 0);",
        "    switch (which) {",
        *(
            f"        case {i}: {SFPU_OPS[op].init}(); {SFPU_OPS[op].function}<APPROX>(0); break;"
            for i, op in enumerate(OPS)
        ),
        "        default: break;",
        "    }",
        "    tile_regs_commit();",
        "    tile_regs_wait();",
        "    pack_tile(0, 16);",
        "    tile_regs_release();",
        "    cb_push_back(16, 1);",
        "    cb_pop_front(0, 1);",
        "}",
    ]
)


def _python_kernel(op: str):
    sfpu = SFPU_OPS[op]

    def kernel():
        k.cb_wait_front(0, 1)
        k.cb_reserve_back(16, 1)
        k.tile_regs_acquire()
        k.copy_tile(0, 0, 0)
        getattr(k, sfpu.init)()
        getattr(k, sfpu.function)(0)
        k.tile_regs_commit()
        k.tile_regs_wait()
        k.pack_tile(0, 16)
        k.tile_regs_release()
        k.cb_push_back(16, 1)
        k.cb_pop_front(0, 1)

    return kernel


def _run(device, compute, args, *, approx: bool, fp32: bool) -> np.ndarray:
    """Output bits (uint32) of one compute kernel on the sweep tile (float32 CBs)."""
    core = CoreCoord(0, 0)
    program = Program("sfpu_algorithms")
    f32 = DataFormat.Float32
    for index in (0, 16):
        program.create_circular_buffer(
            core, CircularBufferConfig(4096, {index: f32}).set_page_size(index, 4096)
        )
    tile = encode_block(_sweep(), f32, TILE_32x32)
    out: list[np.ndarray] = []

    def reader():
        k.cb_reserve_back(0, 1)
        k.write_l1(k.get_write_ptr(0), tile)
        k.cb_push_back(0, 1)

    def writer():
        k.cb_wait_front(16, 1)
        out.append(k.read_l1(k.get_read_ptr(16), 4096))
        k.cb_pop_front(16, 1)

    program.create_kernel(reader, core, ReaderDataMovementConfig())
    config = ComputeConfig(fp32_dest_acc_en=fp32, math_approx_mode=approx)
    kernel = program.create_kernel(compute, core, config, name="sfpu")
    if args is not None:
        program.set_runtime_args(kernel, core, args)
    program.create_kernel(writer, core, WriterDataMovementConfig())
    device.command_queue.enqueue_program(program)
    return decode_block(out[0], f32, TILE_32x32, 1, 1).view(np.uint32)


@pytest.mark.parametrize(("approx", "fp32"), MODES, ids=MODE_IDS)
@pytest.mark.parametrize("op", OPS)
def test_both_engines_give_the_same_bits(device, op, approx, fp32):
    native = _run(
        device, NativeKernel(source=SOURCE, name="sfpu"), [OPS.index(op)], approx=approx, fp32=fp32
    )
    python = _run(device, _python_kernel(op), None, approx=approx, fp32=fp32)
    differ = np.flatnonzero(native != python)
    assert differ.size == 0, (op, _sweep().reshape(-1)[differ[:5]], native.reshape(-1)[differ[:5]])
    # ... and they are the module's values on what copy_tile put in DST (bf16-rounded in a
    # 16-bit DST, where the DST write rounds the op's result too).
    lanes = _sweep() if fp32 else to_bf16(_sweep())
    expected = sfpu_value(op, lanes, approx=approx, fp32_dest=fp32)
    expected = expected if fp32 else to_bf16(expected)
    assert np.array_equal(python, expected.view(np.uint32))


# -- error against float64 ------------------------------------------------------------------------

_DOMAIN = {
    "exp": (-80.0, 80.0),
    "recip": (1e-30, 1e30),
    "sqrt": (1e-30, 1e30),
    "rsqrt": (1e-30, 1e30),
    "log": (1e-30, 1e30),
    "sigmoid": (-80.0, 80.0),
    "tanh": (-10.0, 10.0),
}
_REFERENCE = {
    "exp": np.exp,
    "recip": lambda x: 1.0 / x,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "log": np.log,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "tanh": np.tanh,
}

BOUNDS = {
    # (op, approx, fp32 DST): the largest relative error over the domain (log and sigmoid:
    # absolute -- log crosses 0 at 1, sigmoid's LUT tail is 0.4998 for every |x| >= 4).  docs/device.md, "SFPU algorithms", has the same table.
    ("exp", False, True): 1.5e-7,
    ("exp", False, False): 7.9e-3,
    ("exp", True, True): 3.5e-2,
    ("recip", False, True): 1.2e-7,
    ("recip", False, False): 4.0e-3,
    ("recip", True, True): 1.1e-4,
    ("sqrt", False, True): 1.2e-7,
    ("sqrt", False, False): 4.0e-3,
    ("sqrt", True, True): 9.0e-4,
    ("rsqrt", False, True): 1.2e-7,
    ("rsqrt", False, False): 4.0e-3,
    ("rsqrt", True, True): 9.0e-4,
    ("log", False, True): 1.0e-5,
    ("log", False, False): 0.27,
    ("log", True, True): 1.0e-5,
    ("sigmoid", False, True): 1.0e-7,
    ("sigmoid", False, False): 2.5e-3,
    ("sigmoid", True, True): 1.8e-2,
    ("tanh", False, True): 2.5e-7,
    ("tanh", False, False): 4.8e-3,
    ("tanh", True, True): 0.2,
}


def _error(op: str, approx: bool, fp32: bool) -> float:
    low, high = _DOMAIN[op]
    if low > 0:
        x = np.geomspace(low, high, 20001).astype(np.float32)
    else:
        x = np.linspace(low, high, 20001).astype(np.float32)
    got = sfpu_value(op, x, approx=approx, fp32_dest=fp32).astype(np.float64)
    want = _REFERENCE[op](x.astype(np.float64))
    err = np.abs(got - want)
    if op not in ("log", "sigmoid"):
        err = err / np.maximum(np.abs(want), 1e-30)  # tanh(0) = 0 exactly
    return float(err.max())


@pytest.mark.parametrize(("op", "approx", "fp32"), list(BOUNDS))
def test_error_against_float64_is_within_the_documented_bound(op, approx, fp32):
    assert _error(op, approx, fp32) <= BOUNDS[(op, approx, fp32)]


@pytest.mark.parametrize("op", [op for op in OPS if op not in APPROX_AS_PRECISE])
def test_approximate_mode_is_visibly_worse(op):
    """With a float32 DST the approximate program loses at least 100x the precise one's."""
    precise, approx = _error(op, False, True), _error(op, True, True)
    assert approx > 100 * precise, (op, precise, approx)


@pytest.mark.parametrize("op", sorted(APPROX_AS_PRECISE))
def test_ops_without_an_approximate_program_run_the_precise_one(op):
    x = _sweep()
    for fp32 in (True, False):
        same = sfpu_value(op, x, approx=True, fp32_dest=fp32)
        assert np.array_equal(
            same.view(np.uint32), sfpu_value(op, x, approx=False, fp32_dest=fp32).view(np.uint32)
        )


def test_special_values_of_the_precise_programs():
    inf, nan = np.inf, np.nan
    x = np.array([0.0, -0.0, inf, -inf, nan, -1.0], dtype=np.float32)
    want = {
        "exp": [1.0, 1.0, inf, 0.0, nan, np.exp(np.float32(-1.0))],
        "recip": [inf, -inf, 0.0, -0.0, 0.0, -1.0],  # NaN's exponent makes the scale 0
        "sqrt": [0.0, nan, inf, nan, nan, nan],  # -0 and -NaN: the sign bit is "< 0"
        "rsqrt": [inf, nan, 0.0, nan, nan, nan],
        "log": [-inf, nan, inf, nan, nan, nan],
        "sigmoid": [0.5, 0.5, 1.0, 0.0, -0.0, 1.0 / (1.0 + np.e)],
        "tanh": [0.0, 0.0, 1.0, -1.0, -1.0, np.tanh(-1.0)],  # NaN: the sigmoid branch
    }
    for op, values in want.items():
        got = sfpu_value(op, x, approx=False, fp32_dest=True)
        np.testing.assert_allclose(got, np.array(values, np.float32), rtol=2e-7, err_msg=op)


def test_approximate_exp_saturates_as_the_llk_does():
    """Schraudolph's uint16 saturates: inputs below -88.5 give -88.5's value (~0); from ~88.72
    up the exponent field is 255 and the result a NaN pattern."""
    x = np.array([-1000.0, -88.5, 88.0, 88.5, 89.0, 1000.0], dtype=np.float32)
    got = sfpu_value("exp", x, approx=True, fp32_dest=True)
    assert got[0] == got[1] and got[1] < 1e-38
    assert np.isfinite(got[2:4]).all() and np.isnan(got[4:]).all()


@pytest.mark.parametrize("op", OPS)
def test_the_block_op_is_the_precise_fp32_program(op):
    """ttl.math's block op and compiled TT-Lang (precise, fp32 DST) share the program."""
    name = {"recip": "recip"}.get(op, op)
    x = _sweep()
    block = REGISTRY[name].apply(x)
    assert np.array_equal(
        block.view(np.uint32), sfpu_value(op, x, approx=False, fp32_dest=True).view(np.uint32)
    )
