"""Computed DFB effects of ``ttl.raw.call`` sites: static, expanded, opaque; the splitter and
the DFB allocation use them; ``tilewright explain`` shows them."""

from __future__ import annotations

from click.testing import CliRunner

from tests.raw.conftest import EXAMPLES, SCALE_COPY, line_of
from tilewright import ttl, ttnn
from tilewright.cli.main import cli
from tilewright.compiler.raw.frontend import RawCallSite
from tilewright.lang.extern.plan import dfb_usage

raw = ttl.raw
BLOCKS = 3


@ttl.raw.ir
def pipe(src: ttl.raw.DFB, dst: ttl.raw.DFB, n: ttl.raw.index, k: ttl.raw.i32) -> ttl.raw.i32:
    raw.dfb_wait(src, 1)  # once
    with raw.for_(n):  # n times
        raw.dfb_reserve(dst, 2)
        raw.dfb_push(dst, 2)
    raw.dfb_pop(src, 1)
    return k + 1


@ttl.operation(grid=(1, 1))
def op(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    m = ttl.node(dims=1) + 2
    ttl.raw.call(pipe, a_dfb, o_dfb, 2, 7, kernel=ttl.KernelKind.DATA_MOVEMENT)  # literal
    ttl.raw.call(pipe, a_dfb, o_dfb, BLOCKS, 0, kernel=ttl.KernelKind.DATA_MOVEMENT)  # module
    ttl.raw.call(pipe, a_dfb, o_dfb, m, 0, kernel=ttl.KernelKind.DATA_MOVEMENT)  # run time


def _sites() -> list[RawCallSite]:
    sites = [s for s in op.extern_plan.sites if isinstance(s, RawCallSite)]
    assert len(sites) == 3
    return sites


def _actions(site: RawCallSite) -> list[tuple[str, str, int]]:
    v = site.variants[None]
    return [(e.kind, v.occurrences[e.occurrence].dfb, e.tiles) for e in v.effects]


def test_static_trip_counts_expand():
    literal, module, _ = _sites()
    assert literal.computed == "expanded"
    assert _actions(literal) == [
        ("wait", "a_dfb", 1),
        ("reserve", "o_dfb", 2), ("push", "o_dfb", 2),
        ("reserve", "o_dfb", 2), ("push", "o_dfb", 2),
        ("pop", "a_dfb", 1),
    ]  # fmt: skip
    assert _actions(module) == [("wait", "a_dfb", 1)] + [
        ("reserve", "o_dfb", 2), ("push", "o_dfb", 2)
    ] * BLOCKS + [("pop", "a_dfb", 1)]  # fmt: skip
    assert literal.variants[None].opaque == ()
    assert literal.kernel_kinds == frozenset({"data_movement"})
    assert literal.title == "ttl.raw.call(pipe)"


def test_run_time_trip_counts_degrade_to_opaque_dependencies():
    *_, run_time = _sites()
    assert run_time.computed == "opaque"
    assert run_time.variants[None].effects == ()
    assert [o.dfb for o in run_time.variants[None].occurrences] == ["a_dfb", "o_dfb"]
    assert run_time.variants[None].opaque == (0, 1)  # as an undeclared external call's
    assert "opaque (DFB actions depend on run-time values)" in run_time.describe_effects()


def test_the_dfb_usage_record_is_the_one_declared_effects_give():
    usage = dfb_usage(op.extern_plan)
    literal, _, run_time = usage.calls
    assert literal.actions[0] == ("a_dfb", "wait", 1) and literal.opaque == frozenset()
    assert literal.effects["o_dfb"] == (("reserve", 2), ("push", 2)) * 2
    assert run_time.opaque == frozenset({"a_dfb", "o_dfb"})
    assert usage.conflicting == frozenset({"a_dfb", "o_dfb"})


def test_explain_shows_the_computed_effects_of_the_example():
    result = CliRunner().invoke(cli, ["explain", str(EXAMPLES / "raw_scale_copy.py")])
    assert result.exit_code == 0, result.output
    text = result.output
    assert "PASS raw_scale_copy" in text
    assert "  raw IR calls:" in text
    assert "    ttl.raw.call(scale_copy) at raw_scale_copy.py:70 on the compute kernel" in text
    assert (
        "effects computed from IR: 32 action(s) [wait(in_dfb, 1), reserve(out_dfb, 1), "
        "push(out_dfb, 1), pop(in_dfb, 1), wait(in_dfb, 1)" in text
    )
    # the split placed the call on the compute kernel (kernel=), the copies on data movement
    compute = text.split("kernel compute:")[1].split("kernel data_movement:")[0]
    assert "ttl.raw.call(scale_copy, in_dfb, out_dfb, SCALE, TILES_PER_NODE)" in compute


SHARE = (
    SCALE_COPY
    + """

@ttl.operation(grid=(1, 1))
def op(a: ttnn.Tensor, out: ttnn.Tensor) -> None:
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    b_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    c_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    d_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)
    n = ttl.node(dims=1) + 1
    with a_dfb.reserve() as blk:
        ttl.copy(a[0:1, 0:1], blk).wait()
    ttl.raw.call(scale_copy, a_dfb, b_dfb, 2.0, COUNT, kernel=ttl.KernelKind.COMPUTE)  # first
    with b_dfb.wait() as blk:
        ttl.copy(blk, out[0:1, 0:1]).wait()
    with c_dfb.reserve() as blk:
        ttl.copy(out[0:1, 0:1], blk).wait()
    ttl.raw.call(scale_copy, c_dfb, d_dfb, 2.0, 1, kernel=ttl.KernelKind.COMPUTE)
    with d_dfb.wait() as blk:
        ttl.copy(blk, out[0:1, 0:1]).wait()
"""
)

SHARE_RUN = """
device = ttnn.open_device(device_id=0)
try:
    a_host = (4.0 * torch.rand(32, 32) - 2.0).to(torch.bfloat16)
    a_t = ttnn.from_torch(a_host, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out_t = ttnn.from_torch(torch.zeros(32, 32, dtype=torch.bfloat16), dtype=ttnn.bfloat16,
                            layout=ttnn.TILE_LAYOUT, device=device)
    op(a_t, out_t)
    assert torch.equal(ttnn.to_torch(out_t).float(), a_host.float() * 4)
    print("PASS")
finally:
    ttnn.close_device(device)
"""


def _explain(path, engine="auto") -> str:
    result = CliRunner().invoke(cli, ["explain", "--engine", engine, str(path)])
    assert result.exit_code == 0, result.output
    assert "PASS" in result.output
    return result.output


def test_dfb_allocation_reuses_an_index_only_when_the_effects_are_computed(write_program):
    """With expanded effects the lifecycle proof sees b_dfb's terminal pop in the first call
    and gives d_dfb its index; with a run-time trip count the first call's DFBs are opaque
    dependencies and keep their own indices (as an undeclared external call's would)."""
    static = write_program(SHARE.replace("COUNT", "1") + SHARE_RUN, run=False, name="s.py")
    text = _explain(static)
    assert "reuses index 1 of 'b_dfb': terminal pop happens-before first use" in text
    assert "DFB indices: first-fit, 3 of 64 indices" in text
    opaque = write_program(SHARE.replace("COUNT", "n") + SHARE_RUN, run=False, name="o.py")
    text = _explain(opaque)
    first = line_of(opaque, "# first")
    assert f"'a_dfb' is an opaque dependency of the external call at line {first}" in text
    assert "DFB indices: first-fit, 4 of 64 indices" in text


def test_a_shared_index_runs_on_the_python_engine(write_program):
    static = write_program(SHARE.replace("COUNT", "1") + SHARE_RUN, run=False, name="s.py")
    text = _explain(static, "python")
    assert "reuses index 1 of 'b_dfb'" in text
