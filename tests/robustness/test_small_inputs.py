"""Small inputs to ttnn: zero-length tensors, bad arguments, errors at the user's line.

Before: zero-length tensors ended in a numpy ValueError; about 10 of 24 ttnn error sites
had no file:line; bad dtype/layout/shape arguments escaped as ValueError; ``full`` /
``zeros`` / ``empty`` built a float32 host copy of the whole tensor first.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from tilewright import ttnn
from tilewright.cli.main import cli
from tilewright.errors import TilewrightError
from tilewright.ttnn.convert import from_torch as raw_from_torch


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


def here() -> int:
    """The line of the caller (where the test calls the failing function)."""
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno


def raises_here(call, match: str) -> None:
    """``call()`` raises a Tilewright error whose location is the lambda's line here."""
    line = inspect.getsourcelines(call)[1]
    with pytest.raises(TilewrightError, match=match) as e:
        call()
    assert e.value.loc is not None, e.value
    assert (e.value.loc.file, e.value.loc.line) == (__file__, line)


@pytest.mark.parametrize(
    "shape", [(0,), (0, 32), (32, 0), (0, 0), (2, 0, 32), (0, 64, 64)], ids=str
)
@pytest.mark.parametrize("layout", ["ROW_MAJOR_LAYOUT", "TILE_LAYOUT"])
@pytest.mark.parametrize("on_device", [False, True])
def test_zero_length_tensors_are_refused_at_the_users_line(device, shape, layout, on_device):
    kw = dict(dtype=ttnn.bfloat16, layout=getattr(ttnn, layout))
    if on_device:
        kw["device"] = device
    raises_here(lambda: ttnn.from_torch(torch.zeros(shape), **kw), r"has no elements")
    raises_here(lambda: ttnn.zeros(shape, **kw), r"ttnn.zeros: shape .* has no elements")
    raises_here(lambda: ttnn.full(shape, 2.0, **kw), r"ttnn.full: shape .* has no elements")


CASES = {
    "from_torch of a list": (lambda d: ttnn.from_torch([1, 2, 3]), "got list"),
    "complex dtype": (
        lambda d: ttnn.from_torch(torch.zeros(2, 2, dtype=torch.complex64)),
        "complex64 has no ttnn data type",
    ),
    "tile rank 1": (
        lambda d: ttnn.from_torch(torch.zeros(32), layout=ttnn.TILE_LAYOUT),
        "rank 2 or more",
    ),
    "bfp8 row major": (
        lambda d: ttnn.from_torch(torch.zeros(32, 32), dtype=ttnn.bfloat8_b),
        "needs TILE layout",
    ),
    "int from floats": (
        lambda d: ttnn.from_torch(torch.rand(4, 4) + 0.5, dtype=ttnn.int32),
        "non-integer values",
    ),
    "bad dtype": (lambda d: ttnn.from_torch(torch.zeros(2, 2), dtype="f16"), "dtype must be"),
    "bad layout": (lambda d: ttnn.zeros((2, 2), layout="tiled"), "layout must be"),
    "negative shape": (lambda d: ttnn.full((-1, 4), 1.0), "negative dimension"),
    "shape not ints": (lambda d: ttnn.ones(("a", 2)), "shape must be a sequence of ints"),
    "sharded without spec": (
        lambda d: ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1),
        "needs a shard_spec",
    ),
    "to_memory_config on host": (
        lambda d: ttnn.to_memory_config(ttnn.zeros((2, 2)), ttnn.DRAM_MEMORY_CONFIG),
        "needs a device tensor",
    ),
    "too many cores": (
        lambda d: ttnn.num_cores_to_corerangeset(1000, ttnn.CoreCoord(8, 8)),
        "do not fit",
    ),
    "split_work bad grid": (lambda d: ttnn.split_work_to_cores("x", 10), "takes a CoreCoord"),
    "buffer of a host tensor": (lambda d: ttnn.zeros((2, 2)).buffer, "on the host"),
    "to(None)": (lambda d: ttnn.zeros((2, 2)).to(None), "must be an open ttnn device"),
    "to a closed device": (
        lambda d: ttnn.to_device(ttnn.zeros((2, 2)), _closed_device()),
        "is closed",
    ),
    "open twice": (lambda d: ttnn.open_device(device_id=0), "already open"),
    "open a missing chip": (lambda d: ttnn.open_device(device_id=999), "does not exist"),
    "typecast bad dtype": (lambda d: ttnn.typecast(ttnn.zeros((2, 2)), "nope"), "dtype must"),
    "to_layout bad": (lambda d: ttnn.to_layout(ttnn.zeros((2, 2)), "nope"), "layout must"),
    "add shapes": (
        lambda d: ttnn.add(ttnn.zeros((2, 2)), ttnn.zeros((3, 3))),
        "do not broadcast",
    ),
    "add host and device": (
        lambda d: ttnn.add(ttnn.zeros((2, 2)), ttnn.zeros((2, 2), device=d)),
        "must be on one device",
    ),
    "matmul shapes": (
        lambda d: ttnn.matmul(ttnn.zeros((2, 3)), ttnn.zeros((2, 3))),
        "do not conform",
    ),
    "sum dim": (lambda d: ttnn.sum(ttnn.zeros((2, 2)), dim=5), "out of range"),
}


def _closed_device():
    dev = ttnn.open_device(device_id=1, board="n300")
    ttnn.close_device(dev)
    return dev


@pytest.mark.parametrize("name", list(CASES))
def test_ttnn_errors_point_at_the_users_line(device, name):
    call, match = CASES[name]
    line = inspect.getsourcelines(call)[1]
    with pytest.raises(TilewrightError, match=match) as e:
        call(device)
    assert e.value.loc is not None, f"{name}: no location"
    assert (e.value.loc.file, e.value.loc.line) == (__file__, line)


SHAPES = [(1,), (5,), (32, 32), (33, 31), (3, 64, 40), (2, 3, 1, 1)]
DTYPES = [ttnn.bfloat16, ttnn.float32, ttnn.bfloat8_b, ttnn.int32, ttnn.uint8]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("layout", [ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT], ids=str)
def test_constant_tensors_match_from_torch_byte_for_byte(device, shape, dtype, layout):
    np_type = np.float32 if ttnn.types.is_float(dtype) else np.int64
    for value in (0, 1, -3):
        for tile in (None, (16, 32)):
            try:
                expected = raw_from_torch(
                    np.full(shape, value, dtype=np_type),
                    dtype=dtype,
                    layout=layout,
                    device=device,
                    tile=tile,
                )
            except TilewrightError as err:  # same refusal (e.g. bfp8 in ROW_MAJOR)
                with pytest.raises(type(err)):
                    ttnn.full(shape, value, dtype=dtype, layout=layout, device=device, tile=tile)
                continue
            got = ttnn.full(shape, value, dtype=dtype, layout=layout, device=device, tile=tile)
            assert got.shape == expected.shape
            assert np.array_equal(got.host_pages(), expected.host_pages())
            host = ttnn.full(shape, value, dtype=dtype, layout=layout, tile=tile)
            assert np.array_equal(host.host_pages(), expected.host_pages())
            assert host.host_pages().flags.writeable


def test_the_runner_locates_an_error_raised_anywhere(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text("import ttnn\n\nt = ttnn.zeros((2, 2))\nt.buffer_address()\n")
    result = CliRunner().invoke(cli, ["run", str(prog)])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"DeviceError: {prog}:4: error: the tensor is on the host")
