"""The native runtime library: its interface tables, its generated headers, its codecs
(bit-identical to the Python codecs) and its SFPU ops (against the Python compute API, op by
op of the op registry's table)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tilewright import device
from tilewright.device import kernel_api
from tilewright.device.formats import DataFormat, TILE_32x32, decode_block, encode_block
from tilewright.device.ops.sfpu_algorithms import to_bf16
from tilewright.device.ops.tile_ops import SFPU_OPS as SFPU_TABLE
from tilewright.native import headers, include_dir, requests
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


def test_every_sfpu_op_of_the_table_is_declared_in_cpp_and_bound_in_python(rt):
    """One list (device/ops/tile_ops.py): the runtime's op codes, the generated C++ functions
    and the Python kernel API's functions are all made from it."""
    assert SFPU_OPS == tuple(SFPU_TABLE)
    api = (rt.directory / "twrt_sfpu_api.h").read_text()
    for op in SFPU_TABLE.values():
        assert f" {op.function}(uint32_t idst" in api, op.name
        assert f" {op.init}(" in api, op.name
        assert getattr(kernel_api, op.function).__name__ == op.function
        assert callable(getattr(kernel_api, op.init))


def test_the_generated_headers_are_the_ones_the_runtime_was_built_with(rt):
    for name, text in headers.generated().items():
        assert (rt.directory / name).read_text() == text, name


def test_no_hand_kept_copy_of_the_generated_tables_is_left():
    """The error classes, tt::DataFormat and the SFPU op lists exist only as generated headers."""
    common = (INCLUDE / "tilewright/common.h").read_text()
    assert "Float16_b = 5" not in common and '#include "twrt_dataformat.h"' in common
    twrt = (SOURCE_DIR / "twrt.h").read_text()
    assert "ERR_KERNEL = 1" not in twrt
    sfpu = (INCLUDE / "api/compute/eltwise_unary/sfpu.h").read_text()
    assert "X(exp)" not in sfpu and '#include "twrt_sfpu_api.h"' in sfpu
    support = (
        Path(device.__file__).parents[1] / "compiler/backend/include/ttlang/support.h"
    ).read_text()
    assert "KernelError = 1" not in support


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


@pytest.fixture(params=[0, 1], ids=["baseline", "avx2"])
def codec_copy(rt, request):
    """Each copy of the runtime's tile codecs (formats.cpp: baseline x86-64 and AVX2, one
    chosen per CPU at load time); the AVX2 one is skipped on a CPU without it."""
    before = rt.test_codec_simd(-1)
    if rt.test_codec_simd(request.param) != request.param:
        rt.test_codec_simd(before)
        pytest.skip("this CPU (or build) has no AVX2 copy of the codecs")
    yield request.param
    rt.test_codec_simd(before)


@pytest.mark.parametrize("fmt", FLOAT_FORMATS, ids=lambda f: f.name)
def test_float_codecs_are_bit_identical_to_python(rt, fmt, codec_copy):
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
def test_integer_codecs_are_bit_identical_to_python(rt, fmt, codec_copy):
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


def _every_upper_half():
    """All 2**16 upper halves with a tie, a just-below and a just-above lower half, as
    32x32 tiles."""
    hi = np.arange(2**16, dtype=np.uint32) << 16
    for low in (0x7FFF, 0x8000, 0x8001):
        x = (hi | low).view(np.float32)
        for chunk in range(0, x.size, 1024):
            yield np.ascontiguousarray(x[chunk : chunk + 1024].reshape(32, 32))


def test_bf16_rounding_matches_python_on_every_upper_half(rt, codec_copy):
    for m in _every_upper_half():
        py = encode_block(m, DataFormat.Float16_b, TILE_32x32)
        assert np.array_equal(c_encode(rt, DataFormat.Float16_b, m)[:2048], py)


def test_dst_rounding_matches_python_on_every_upper_half(rt, codec_copy):
    """DST's bf16 precision (write_dst: every write rounds) on the same 3 x 2**16 values."""
    for m in _every_upper_half():
        out = np.empty_like(m)
        rt.test_dst_round(out.ctypes.data, m.ctypes.data)
        assert np.array_equal(out.view(np.uint32), to_bf16(m).view(np.uint32))


@pytest.mark.parametrize("bf16", [0, 1], ids=["fp32_dest", "bf16_dest"])
def test_dst_accumulation_matches_python(rt, codec_copy, bf16):
    """DST += a tile of a wider row (a matmul block's product): float32 sums, rounded to
    bf16 unless fp32_dest_acc_en, on values with NaN, infinities and denormals."""
    rng = np.random.default_rng(17)
    for _ in range(20):
        d = special_values(rng)
        wide = np.concatenate([special_values(rng), special_values(rng)], axis=1)  # 32 x 64
        with np.errstate(all="ignore"):
            want = d + wide[:, 32:]
        if bf16:
            want = to_bf16(want)
        rt.test_dst_accumulate(d.ctypes.data, wide[:, 32:].ctypes.data, 64, bf16)
        assert np.array_equal(d.view(np.uint32), want.view(np.uint32))


def test_a_runtime_source_that_does_not_compile_fails_the_build_naming_it(tmp_path, monkeypatch):
    """The runtime's sources compile side by side (one compiler per source): a failing one
    is a NativeBuildError with the compiler's message, and no build is left behind."""
    import shutil

    from tilewright.errors import NativeBuildError
    from tilewright.native import runtime, toolchain

    sources = tmp_path / "runtime"
    shutil.copytree(SOURCE_DIR, sources)
    (sources / "perf.cpp").write_text((sources / "perf.cpp").read_text() + "\nint broken = ;\n")
    monkeypatch.setattr(runtime, "SOURCE_DIR", sources)
    cache = tmp_path / "cache"
    with pytest.raises(NativeBuildError, match="building the native runtime failed") as info:
        runtime._build(toolchain.OPTIONS.resolved_compiler(), cache)
    assert "perf.cpp" in str(info.value) and "broken" in str(info.value)
    assert not list((cache / "runtime").iterdir())
