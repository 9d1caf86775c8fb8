"""``ttl.raw.call`` in composed operations (reference B.8): the caller gets the callee's
call sites under its own names, with the computed effects."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.raw.conftest import SCALE_COPY, line_of
from tilewright.cli.main import cli

PROGRAM = (
    SCALE_COPY
    + """

@ttl.operation(grid=(1, 1))
def double(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    i_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    ttl.raw.call(scale_copy, i_dfb, o_dfb, 2.0, 1, kernel=ttl.KernelKind.COMPUTE)
    with i_dfb.reserve() as blk:
        ttl.copy(a[0:1, 0:1], blk).wait()
    with o_dfb.wait() as blk:
        ttl.copy(blk, out[0:1, 0:1]).wait()


@ttl.operation(grid=(1, 1))
def quad(a: ttnn.Tensor, tmp: ttnn.Tensor, out: ttnn.Tensor) -> None:
    double(a, tmp)
    double(tmp, out)


device = ttnn.open_device(device_id=0)
try:
    a_host = (4.0 * torch.rand(32, 32) - 2.0).to(torch.bfloat16)
    mk = lambda t: ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    a_t, tmp_t, out_t = mk(a_host), mk(torch.zeros(32, 32, dtype=torch.bfloat16)), mk(torch.zeros(32, 32, dtype=torch.bfloat16))
    quad(a_t, tmp_t, out_t)
    assert torch.equal(ttnn.to_torch(out_t).float(), a_host.float() * 4)
    print("PASS compose")
finally:
    ttnn.close_device(device)
"""
)


@pytest.mark.parametrize("engine", ["python", "native"])
def test_a_composed_raw_call_runs_on_both_engines(write_program, run_file, engine):
    path = write_program(PROGRAM, run=False)
    status, out, err = run_file(path, engine)
    assert status == 0, err
    assert out.strip() == "PASS compose"


def test_the_caller_lists_the_copied_sites_with_their_effects(write_program):
    path = write_program(PROGRAM, run=False)
    result = CliRunner().invoke(cli, ["explain", str(path)])
    assert result.exit_code == 0, result.output
    quad = result.output.split("operation quad")[1]
    line = line_of(path, "ttl.raw.call(")
    assert quad.count(f"ttl.raw.call(scale_copy) at prog.py:{line} on the compute kernel") == 2
    assert quad.count("effects computed from IR: 4 action(s) [wait(") == 2
