"""``ttl.math.typecast`` to bfloat16 compiled: tt-metal's ``typecast_tile<Float32, Float16_b>``
rounds DST's float32 values to nearest even as the interpreter's typecast does (one
definition, ``tile_ops.typecast_tile_values``), bit for bit on every engine."""

from __future__ import annotations

import pytest
import torch

from tests.compiler.backend.strict_build import strict_build_kernel
from tests.compiler.helpers import load, program, write
from tilewright.compiler.backend import engine as backend

# float32 in, float32 out: the store keeps what the typecast rounded.
TYPECAST = """
@ttl.operation(grid=(1, 1), options="--tw-engine={engine}")
def op(a, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=2)

    @ttl.datamovement()
    def reader():
        with a_dfb.reserve() as blk:
            ttl.copy(a[0:1, 0:2], blk).wait()

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, o_dfb.reserve() as y:
            y.store({expr})

    @ttl.datamovement()
    def writer():
        with o_dfb.wait() as blk:
            ttl.copy(blk, out[0:1, 0:2]).wait()
"""

CALL = """
def dev32(t):
    return ttnn.from_torch(t, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)

torch.manual_seed(11)
x = torch.randn(32, 64) * 100.0
flat = x.view(-1)
# ties (an odd and an even bf16 below, exactly halfway), the carry into the exponent, the
# largest finite float32 (rounds to inf), signed zeros, infinities, NaNs of both signs
flat[:8] = torch.tensor([1.00390625, 1.01171875, 1.9999999, 3.4028235e38, -0.0, 0.0,
                         float("inf"), float("-inf")])
flat[8:10] = torch.tensor([0x7FC00001, 0xFFC00000], dtype=torch.int64).to(torch.int32).view(torch.float32)
flat[10] = 1e-40  # a subnormal
out = dev32(torch.zeros(32, 64))
op(dev32(x), out)
result = ttnn.to_torch(out)
"""

CASES = {
    "of a float32 block": "ttl.math.typecast(x, ttnn.bfloat16)",
    "of a computed expression": "ttl.math.typecast(x * 1.0009765625 + x, 'bf16') - x",
}


def _run(tmp_path, expr: str, engine: str) -> tuple[torch.Tensor, list]:
    kernels: list = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: kernels.extend(c.kernels))
    try:
        ns = load(write(tmp_path, program(TYPECAST.format(engine=engine, expr=expr), CALL)))
    finally:
        backend.COMPILE_OBSERVERS.pop()
    return ns["result"], kernels


@pytest.mark.parametrize("expr", list(CASES.values()), ids=list(CASES))
def test_typecast_to_bfloat16_compiles_with_the_interpreters_bits(tmp_path, expr):
    interpreted, none = _run(tmp_path, expr, "python")
    compiled, kernels = _run(tmp_path, expr, "native")
    assert none == [] and [k.name for k in kernels] == ["reader", "compute", "writer"]
    assert torch.equal(compiled.view(torch.int32), interpreted.view(torch.int32))


def test_typecast_rounds_to_nearest_even(tmp_path):
    result, _ = _run(tmp_path, CASES["of a float32 block"], "native")
    flat = result.view(-1)
    bits = flat.view(torch.int32)
    assert flat[:8].tolist() == [1.0, 1.015625, 2.0, float("inf"), -0.0, 0.0] + [
        float("inf"),
        float("-inf"),
    ]
    assert bits[4] < 0  # -0.0 keeps its sign
    # a NaN becomes the quiet NaN with its sign (the registry's typecast, ml_dtypes' cast)
    assert [int(b) & 0xFFFFFFFF for b in bits[8:10]] == [0x7FC00000, 0xFFC00000]
    torch.manual_seed(11)
    x = torch.randn(32, 64) * 100.0
    rest = slice(16, None)
    assert torch.equal(flat[rest], x.view(-1)[rest].to(torch.bfloat16).float())


def test_typecast_is_tt_metals_template_call_and_builds_strictly(tmp_path):
    _, kernels = _run(tmp_path, CASES["of a computed expression"], "native")
    compute = next(k for k in kernels if k.name == "compute")
    from tilewright.compiler.backend.emit import emit_kernel

    text = emit_kernel(compute)
    assert "typecast_tile_init<0u, 5u>();" in text and "typecast_tile<0u, 5u>(" in text
    built = strict_build_kernel(tmp_path, "compute", compute)
    assert built.returncode == 0, built.stderr
