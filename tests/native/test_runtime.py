"""The native runtime library: its interface tables, its codecs (bit-identical to the Python
codecs) and its SFPU ops (against the Python compute API)."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np
import pytest

from tilewright.device.coords import CoreCoord
from tilewright.device.formats import DataFormat, TILE_32x32, decode_block, encode_block
from tilewright.device.kernel_api import compute as compute_api
from tilewright.native import include_dir, requests
from tilewright.native.runtime import SFPU_OPS, SOURCE_DIR, library

INCLUDE = Path(include_dir())


@pytest.fixture(scope="module")
def rt():
    return library()


# -- interface tables ------------------------------------------------------------------------------


def test_every_runtime_function_the_headers_declare_is_exported(rt):
    declared = set(re.findall(r"\btwrt_(\w+)\s*\(", (INCLUDE / "tilewright/runtime.h").read_text()))
    missing = sorted(n for n in declared if not hasattr(rt.lib, f"twrt_{n}"))
    assert not missing, missing


def test_every_request_native_code_makes_has_a_handler():
    names = set()
    for path in [*INCLUDE.rglob("*.h"), *SOURCE_DIR.glob("*.cpp")]:
        text = path.read_text()
        names |= set(re.findall(r'request\(\s*(?:r,\s*)?"(\w+)"', text))
        names |= set(re.findall(r'twrt_request\(\s*"(\w+)"', text))
        names |= set(re.findall(r'TW_CALL\(\s*"(\w+)"', text))
    assert names, "no requests found"
    assert {n.encode() for n in names} <= set(requests.HANDLERS), sorted(names)


def test_sfpu_ops_of_headers_runtime_and_python_kernels_agree():
    text = (INCLUDE / "api/compute/eltwise_unary/sfpu.h").read_text()
    header = set(re.findall(r"^\s*[XP]\((\w+)\)", text, re.M)) | {"softplus", "round"}
    assert header == set(SFPU_OPS)
    python = {
        n[: -len("_tile")] for n in (*compute_api.SFPU_UNARY, *compute_api.SFPU_UNARY_SPECIAL)
    }
    python |= {n[: -len("_tile")] for n in compute_api.SFPU_UNARY_PARAM}
    assert python == set(SFPU_OPS)


# -- codecs ----------------------------------------------------------------------------------------

FLOAT_FORMATS = [
    DataFormat.Float16_b,
    DataFormat.Float32,
    DataFormat.Float16,
    DataFormat.Bfp8_b,
    DataFormat.Bfp4_b,
    DataFormat.Bfp2_b,
    DataFormat.Bfp8,
    DataFormat.Bfp4,
    DataFormat.Bfp2,
]
INT_FORMATS = [
    DataFormat.Int32,
    DataFormat.UInt32,
    DataFormat.UInt16,
    DataFormat.UInt8,
    DataFormat.Int8,
]


def special_values(rng, n=1024) -> np.ndarray:
    """Random float32 bit patterns mixed with NaN, +-inf, +-0, denormals and huge / tiny values."""
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32).copy()
    normal = rng.standard_normal(n).astype(np.float32) * rng.choice([1e-3, 1, 1e3], n).astype(
        np.float32
    )
    x[: n // 2] = normal[: n // 2]
    specials = np.array(
        [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-42, 3.4e38, -3.4e38, 1.0, -1.5],
        dtype=np.float32,
    )
    x[rng.choice(n, 64, replace=False)] = rng.choice(specials, 64)
    return x.reshape(32, 32)


def c_encode(rt, fmt, matrix) -> bytes:
    out = np.zeros(4096, dtype=np.uint8)
    vals = np.ascontiguousarray(matrix, dtype=np.float32)
    rc = rt.test_encode(int(fmt), vals.ctypes.data, out.ctypes.data)
    assert rc == -1, rc
    return out


def c_decode(rt, fmt, data) -> np.ndarray:
    out = np.zeros((32, 32), dtype=np.float32)
    buf = np.ascontiguousarray(data, dtype=np.uint8)
    assert rt.test_decode(int(fmt), buf.ctypes.data, out.ctypes.data) == 0
    return out


@pytest.mark.parametrize("fmt", FLOAT_FORMATS, ids=lambda f: f.name)
def test_float_codecs_are_bit_identical_to_python(rt, fmt):
    rng = np.random.default_rng(int(fmt))
    for _ in range(20):
        m = special_values(rng)
        py = encode_block(m, fmt, TILE_32x32)
        c = c_encode(rt, fmt, m)[: py.size]
        assert np.array_equal(c, py), f"{fmt.name} encode differs"
        back_py = decode_block(py, fmt, TILE_32x32, 1, 1)
        back_c = c_decode(rt, fmt, py)
        assert np.array_equal(back_c.view(np.uint32), back_py.view(np.uint32)), f"{fmt.name} decode"


@pytest.mark.parametrize("fmt", INT_FORMATS, ids=lambda f: f.name)
def test_integer_codecs_are_bit_identical_to_python(rt, fmt):
    dtype = {
        DataFormat.Int32: np.int32,
        DataFormat.UInt32: np.uint32,
        DataFormat.UInt16: np.uint16,
        DataFormat.UInt8: np.uint8,
        DataFormat.Int8: np.int8,
    }[fmt]
    info = np.iinfo(dtype)
    rng = np.random.default_rng(7)
    lo, hi = max(info.min, -(2**24)), min(info.max, 2**24)
    m = rng.integers(lo, hi, (32, 32), endpoint=True).astype(np.float32)
    py = encode_block(m, fmt, TILE_32x32)
    assert np.array_equal(c_encode(rt, fmt, m)[: py.size], py)
    raw = rng.integers(0, 256, py.size, dtype=np.uint8)
    assert np.array_equal(c_decode(rt, fmt, raw), decode_block(raw, fmt, TILE_32x32, 1, 1))


def test_integer_pack_of_a_fraction_is_refused_by_both(rt):
    m = np.zeros((32, 32), dtype=np.float32)
    m[3, 17] = 1.5
    out = np.zeros(4096, dtype=np.uint8)
    rc = rt.test_encode(int(DataFormat.Int32), m.ctypes.data, out.ctypes.data)
    assert rc == 1 * 256 + 3 * 16 + 1  # device order index of (3, 17): face 1, row 3, column 1
    with pytest.raises(Exception, match="is not an integer"):
        encode_block(m, DataFormat.Int32, TILE_32x32)


def test_bf16_rounding_matches_python_on_every_upper_half(rt):
    """All 2**16 upper halves with a tie, a just-below and a just-above lower half."""
    hi = np.arange(2**16, dtype=np.uint32) << 16
    for low in (0x7FFF, 0x8000, 0x8001):
        x = (hi | low).view(np.float32)
        for chunk in range(0, x.size, 1024):
            m = x[chunk : chunk + 1024].reshape(32, 32)
            py = encode_block(m, DataFormat.Float16_b, TILE_32x32)
            assert np.array_equal(c_encode(rt, DataFormat.Float16_b, m)[:2048], py)


# -- SFPU ops: native vs the Python compute API ------------------------------------------------------

SFPU_SOURCE = r"""
#include <cstdint>
#include "api/compute/eltwise_unary/sfpu.h"
void kernel_main() {
    const int32_t op = get_arg_val<int32_t>(0);
    cb_wait_front(0, 1);
    cb_reserve_back(16, 1);
    tile_regs_acquire();
    copy_tile(0, 0, 0);
    twrt_sfpu(op, 0, get_arg_val<uint32_t>(1), get_arg_val<uint32_t>(2), get_arg_val<uint32_t>(3), TW_HERE);
    tile_regs_commit();
    tile_regs_wait();
    pack_tile(0, 16);
    tile_regs_release();
    cb_push_back(16, 1);
    cb_pop_front(0, 1);
}
"""

# Parameters (float values, or an int for power_iterative / round) per op with parameters.
SFPU_PARAMS = {
    "leaky_relu": (0.1,),
    "elu": (0.5,),
    "prelu": (0.25,),
    "relu_max": (0.7,),
    "relu_min": (-0.3,),
    "rsub": (2.5,),
    "power": (1.5,),
    "power_iterative": (3,),
    "round": (1,),
    "add_unary": (0.75,),
    "sub_unary": (0.75,),
    "mul_unary": (1.25,),
    "div_unary": (0.5,),
    "rsub_unary": (1.0,),
    "softplus": (1.5, 1 / 1.5, 5.0),
    "hardtanh": (-0.5, 0.8),
    "clamp": (-0.2, 0.3),
    "threshold": (0.1, -7.0),
    "selu": (1.05, 1.67),
    "celu": (0.8, 1.25),
}
INT_PARAMS = {"power_iterative", "round"}
# Exact in float32 (a handful of IEEE operations): the engines agree bit for bit.
EXACT = {
    "sqrt", "rsqrt", "recip", "relu", "abs", "negative", "square", "floor", "ceil", "sign",
    "hardsigmoid", "softsign", "signbit", "trunc", "frac", "leaky_relu", "prelu", "relu_max",
    "relu_min", "rsub", "add_unary", "sub_unary", "mul_unary", "div_unary", "rsub_unary",
    "hardtanh", "clamp", "threshold", "round", "gelu", "erf", "erfc",
}  # fmt: skip
# Transcendental float32 ops: the native runtime rounds the double-precision result once;
# numpy's float32 loops (SIMD exp / log, ...) are within ~2.5 ulp of that.
TRANSCENDENTAL_ULPS = 3


def _param_bits(op: str) -> list[int]:
    values = SFPU_PARAMS.get(op, ())
    out = [v if op in INT_PARAMS else struct.unpack("<I", struct.pack("<f", v))[0] for v in values]
    return (out + [0, 0, 0])[:3]


def _sfpu_inputs() -> np.ndarray:
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(1024) * 2).astype(np.float32)
    x[:8] = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 3.0, -3.0]
    x[8:12] = [np.nan, np.inf, -np.inf, 0.999]
    return x.reshape(32, 32)


def _run_sfpu(device, compute, op_args) -> np.ndarray:
    from tilewright.device.formats import DataFormat as DF
    from tilewright.device.kernel_api import (
        cb_pop_front,
        cb_push_back,
        cb_reserve_back,
        cb_wait_front,
        get_read_ptr,
        get_write_ptr,
        read_l1,
        write_l1,
    )
    from tilewright.device.program import (
        CircularBufferConfig,
        ComputeConfig,
        Program,
        ReaderDataMovementConfig,
        WriterDataMovementConfig,
    )

    core = CoreCoord(0, 0)
    program = Program("sfpu")
    for index in (0, 16):
        program.create_circular_buffer(
            core, CircularBufferConfig(4096, {index: DF.Float32}).set_page_size(index, 4096)
        )
    data = encode_block(_sfpu_inputs(), DF.Float32, TILE_32x32)
    out: list[np.ndarray] = []

    def reader():
        cb_reserve_back(0, 1)
        write_l1(get_write_ptr(0), data)
        cb_push_back(0, 1)

    def writer():
        cb_wait_front(16, 1)
        out.append(read_l1(get_read_ptr(16), 4096))
        cb_pop_front(16, 1)

    program.create_kernel(reader, core, ReaderDataMovementConfig())
    k = program.create_kernel(compute, core, ComputeConfig(fp32_dest_acc_en=True), name="sfpu")
    if op_args is not None:
        program.set_runtime_args(k, core, op_args)
    program.create_kernel(writer, core, WriterDataMovementConfig())
    device.command_queue.enqueue_program(program)
    return decode_block(out[0], DF.Float32, TILE_32x32, 1, 1)


@pytest.mark.parametrize("op", SFPU_OPS)
def test_native_sfpu_ops_match_the_python_engine(device, op):
    """Exact ops (and erf-based ones) bit for bit; transcendental ops within 3 float32 ulps."""
    from tilewright.device.kernel_api import compute as api
    from tilewright.native.kernels import NativeKernel

    native = _run_sfpu(
        device,
        NativeKernel(source=SFPU_SOURCE, name="sfpu"),
        [SFPU_OPS.index(op), *_param_bits(op)],
    )
    fn = getattr(api, f"{op}_tile")
    params = SFPU_PARAMS.get(op, ())

    from tilewright.device import kernel_api as k

    def python_kernel():
        k.cb_wait_front(0, 1)
        k.cb_reserve_back(16, 1)
        api.tile_regs_acquire()
        api.copy_tile(0, 0, 0)
        fn(0, *params)
        api.pack_tile(0, 16)
        api.tile_regs_release()
        k.cb_push_back(16, 1)
        k.cb_pop_front(0, 1)

    python = _run_sfpu(device, python_kernel, None)
    a, b = native.view(np.int32), python.view(np.int32)
    both_nan = np.isnan(native) & np.isnan(python)
    if op in EXACT:
        assert np.array_equal(a[~both_nan], b[~both_nan]), op
    else:
        diff = np.abs(a.astype(np.int64) - b.astype(np.int64))
        assert (diff[~both_nan] <= TRANSCENDENTAL_ULPS).all(), (op, int(diff[~both_nan].max()))
    assert np.array_equal(np.isnan(native), np.isnan(python)), op
