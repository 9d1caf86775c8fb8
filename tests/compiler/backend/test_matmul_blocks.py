"""Block matmuls, compiled: ``x @ y`` of multi-tile blocks runs ``matmul_block`` with
several rows and columns of tiles, whose tile products the native runtime computes in one
BLAS call per block (runtime/compute.cpp, ``gemm_k32``).  Each case runs under ``--engine
python`` (one tile product at a time, the reference) and ``--engine native``; the results
must be equal bit for bit, at every math fidelity and both DST precisions.
"""

from __future__ import annotations

import pytest
import torch

from tests.compiler.helpers import load_compiling, program, write

OP = """
@ttl.operation(grid=(1, 1), options="--tw-engine={engine}", math_fidelity="{fidelity}",
               fp32_dest_acc_en={fp32})
def op(a, b, out):
    da = ttl.make_dataflow_buffer_like(a, shape=({m}, {k}), block_count=2)
    db = ttl.make_dataflow_buffer_like(b, shape=({k}, {n}), block_count=2)
    do = ttl.make_dataflow_buffer_like(out, shape=({m}, {n}), block_count=2)

    @ttl.datamovement()
    def reader():
        with da.reserve() as x:
            ttl.copy(a[0:{m}, 0:{k}], x).wait()
        with db.reserve() as y:
            ttl.copy(b[0:{k}, 0:{n}], y).wait()

    @ttl.compute()
    def compute():
        with da.wait() as x, db.wait() as y, do.reserve() as o:
            o.store(x @ y)

    @ttl.datamovement()
    def writer():
        with do.wait() as o:
            ttl.copy(o, out[0:{m}, 0:{n}]).wait()
"""

CALL = """
g = torch.Generator().manual_seed(11)
a = (torch.randn({m} * 32, {k} * 32, generator=g) * 3).to(torch.bfloat16)
b = (torch.randn({k} * 32, {n} * 32, generator=g) * 3).to(torch.bfloat16)
out = dev(torch.zeros({m} * 32, {n} * 32))
op(dev(a), dev(b), out)
result = ttnn.to_torch(out)
"""


def run(tmp_path, engine: str, fidelity: str, fp32: bool, m: int, k: int, n: int):
    fields = dict(engine=engine, fidelity=fidelity, fp32=fp32, m=m, k=k, n=n)
    ns, compiled = load_compiling(
        write(tmp_path, program(OP.format(**fields), CALL.format(**fields)))
    )
    return ns["result"], compiled


@pytest.mark.parametrize("fp32", [True, False], ids=["dst-fp32", "dst-bf16"])
@pytest.mark.parametrize("fidelity", ["LoFi", "HiFi2", "HiFi3", "HiFi4"])
@pytest.mark.parametrize("shape", [(2, 3, 2), (4, 2, 4), (1, 2, 4), (3, 1, 2)], ids=str)
def test_block_matmul_compiles_bit_identically(tmp_path, fidelity, fp32, shape):
    ref, compiled_ref = run(tmp_path, "python", fidelity, fp32, *shape)
    got, compiled = run(tmp_path, "native", fidelity, fp32, *shape)
    assert compiled_ref == [] and compiled == ["op"]
    assert torch.equal(ref.view(torch.int16), got.view(torch.int16)), (fidelity, fp32, shape)


def test_the_runtime_batches_a_blocks_tile_products():
    """numpy's BLAS (OpenBLAS) computes a block's tiles as it computes each alone, so the
    test above exercises the batched path (one BLAS call per block), not the fallback."""
    import numpy as np

    from tilewright.native.runtime import library

    if "openblas" not in str(np.show_config(mode="dicts")).lower():
        pytest.skip("another BLAS: the runtime checks it and may compute tile by tile")
    assert library().matmul_batched() == 1
