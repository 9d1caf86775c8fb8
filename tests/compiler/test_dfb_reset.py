"""Synchronized DFB resets and reconfiguration boundaries at run time (reference A.8, G.19)."""

from tests.compiler.helpers import expect_error, load, program, write
from tilewright.errors import DFBContractError

PARTICIPANTS = "(ttl.KernelKind.COMPUTE, ttl.KernelKind.DATA_MOVEMENT, ttl.PIPE_SOURCE_KERNEL)"

UNIFIED = f"""
def make():
    reset = ttl.DFBReset(participants={PARTICIPANTS})
    keep = ttl.DFBReconfiguration(participants={PARTICIPANTS})
    discard = ttl.DFBReconfiguration(participants={PARTICIPANTS}, discard_dfb_state=True)

    @ttl.operation(grid=(2, 1))
    def op(a, b, out):
        x = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        o = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
        n = ttl.node(dims=1)
        with x.reserve() as stale:
            ttl.copy(a[0:1, n:n + 1], stale).wait()
{{sync}}
        with x.reserve() as fresh:
            ttl.copy(b[0:1, n:n + 1], fresh).wait()
        with x.wait() as xw, o.reserve() as ob:
            ob.store(xw)
        with o.wait() as ow:
            ttl.copy(ow, out[0:1, n:n + 1]).wait()
    return op

op = make()
"""

CALL = """
ah, bh = torch.rand(32, 64).to(torch.bfloat16), torch.rand(32, 64).to(torch.bfloat16)
out = dev(torch.zeros(32, 64))
op(dev(ah), dev(bh), out)
got_b = torch.equal(ttnn.to_torch(out), bh)
got_a = torch.equal(ttnn.to_torch(out), ah)
"""


def run(tmp_path, sync: str) -> dict:
    return load(write(tmp_path, program(UNIFIED.replace("{sync}", sync), CALL)))


def test_reset_discards_the_pushed_block(tmp_path):
    ns = run(tmp_path, "        ttl.reset_dfbs(reset, dfbs=[x])")
    assert ns["got_b"]
    kernels = dict(ns["op"].split_plan.kernel_sources)
    assert all(
        "ttl.reset_dfbs(reset, dfbs=[x])" in kernels[k]
        for k in ("compute", "data_movement", "pipe_source")
    )


def test_without_a_reset_the_stale_block_is_consumed(tmp_path):
    ns = run(tmp_path, "        pass")
    assert ns["got_a"]


def test_reset_all_dfbs(tmp_path):
    assert run(tmp_path, "        ttl.reset_all_dfbs(reset)")["got_b"]


def test_reconfiguration_discarding_state(tmp_path):
    assert run(tmp_path, "        ttl.reconfigure_dfbs(discard)")["got_b"]


def test_reconfiguration_keeping_state_needs_empty_dfbs(tmp_path):
    expect_error(
        tmp_path,
        program(UNIFIED.replace("{sync}", "        ttl.reconfigure_dfbs(keep)  # <-"), CALL),
        DFBContractError,
        "ttl.reconfigure_dfbs: DFB 'x' still has 1 filled block(s) at the epoch boundary; consume it before "
        "the boundary or declare the boundary with discard_dfb_state=True",
    )


def test_reset_while_a_block_is_held(tmp_path):
    source = UNIFIED.replace("{sync}", "").replace(
        """        with x.reserve() as fresh:
            ttl.copy(b[0:1, n:n + 1], fresh).wait()""",
        """        fresh = x.reserve()
        ttl.copy(b[0:1, n:n + 1], fresh).wait()
        ttl.reset_dfbs(reset, dfbs=[x])  # <-
        fresh.push()""",
    )
    expect_error(
        tmp_path,
        program(source, CALL),
        DFBContractError,
        "ttl.reset_dfbs: DFB 'x' is reset while block 'fresh' (reserved from DFB 'x') held by kernel "
        "'data_movement'; release blocks before the reset",
    )


def test_explicit_kernels_synchronise_by_slot(tmp_path):
    ns = load(
        write(
            tmp_path,
            program(
                f"""
        def make():
            reset = ttl.DFBReset(participants={PARTICIPANTS})

            @ttl.operation(grid=(1, 1))
            def op(a, b, out):
                x = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
                o = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

                @ttl.datamovement()
                def reader():
                    with x.reserve() as stale:
                        ttl.copy(a[0:1, 0:1], stale).wait()
                    ttl.reset_dfbs(reset, dfbs=[x])
                    with x.reserve() as fresh:
                        ttl.copy(b[0:1, 0:1], fresh).wait()

                @ttl.compute()
                def compute():
                    ttl.reset_dfbs(reset, dfbs=[x])
                    with x.wait() as xw, o.reserve() as ob:
                        ob.store(xw)

                @ttl.datamovement()
                def writer():
                    ttl.reset_dfbs(reset, dfbs=[x])
                    with o.wait() as ow:
                        ttl.copy(ow, out[0:1, 0:1]).wait()
            return op

        op = make()
        """,
                """
        ah, bh = torch.rand(32, 32).to(torch.bfloat16), torch.rand(32, 32).to(torch.bfloat16)
        out = dev(torch.zeros(32, 32))
        op(dev(ah), dev(bh), out)
        got_b = torch.equal(ttnn.to_torch(out), bh)
        """,
            ),
        )
    )
    assert ns["got_b"]
