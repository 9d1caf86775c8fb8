"""Staged pipes (``lower/pipes.py``): a net with a node that is a source and a destination
compiles, its sends complete without their receivers, and each engine gives the same bits."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from tests.compiler.backend.strict_build import strict_build_kernel
from tests.compiler.helpers import load, program, write
from tilewright.cli.main import cli
from tilewright.cli.runner import run_program
from tilewright.compiler.backend import engine as backend
from tilewright.errors import DeadlockError, KernelError

# Spec §Pipe scatter-gather: every node multicasts its tile to its whole column, itself
# included, waits the send, and only then receives the column's tiles.
SCATTER_GATHER = """
GX, GY = 2, 2


@ttl.operation(grid=(GX, GY), options="--tw-engine={engine}")
def op(a, out):
    net = ttl.PipeNet(
        [ttl.Pipe(src=(x, y), dst=(x, slice(0, GY))) for x in range(GX) for y in range(GY)]
    )
    own_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    got_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=GY)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

    @ttl.datamovement()
    def reader():
        x, y = ttl.node(dims=2)
        with own_dfb.reserve() as blk:
            ttl.copy(a[y, x], blk).wait()

            def pipe_src(pipe):
                ttl.copy(blk, pipe).wait()

            net.if_src(pipe_src)

        def pipe_dst(pipe):
            with got_dfb.reserve() as r:
                ttl.copy(pipe, r).wait()

        net.if_dst(pipe_dst)

    @ttl.compute()
    def compute():
        own = own_dfb.wait()
        r0 = got_dfb.wait()
        r1 = got_dfb.wait()
        with out_dfb.reserve() as o:
            o.store(r0 * 2.0 + r1 - own)
        own.pop()
        r0.pop()
        r1.pop()

    @ttl.datamovement()
    def writer():
        x, y = ttl.node(dims=2)
        with out_dfb.wait() as o:
            ttl.copy(o, out[y, x]).wait()
"""

SCATTER_GATHER_CALL = """
torch.manual_seed(7)
x = torch.randn(64, 64).to(torch.bfloat16)
out = dev(torch.zeros(64, 64))
op(dev(x), out)
result = ttnn.to_torch(out)
op(dev(x * 3), out)  # a warm call: the pipes' semaphores end as they started
again = ttnn.to_torch(out)
"""

# Two nodes swap ROUNDS tiles, one per round: each sends on its pipe and receives from the
# other's (both nodes are a source and a destination of the net), so the staged slot of a
# pipe is reused every round and the blocks must arrive in send order.
EXCHANGE = """
ROUNDS = 3


@ttl.operation(grid=(2, 1), options="--tw-engine={engine}")
def op(a, out):
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0)), ttl.Pipe(src=(1, 0), dst=(0, 0))])
    send_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    got_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def mover():
        x, _ = ttl.node(dims=2)
        for i in range(ROUNDS):
            with send_dfb.reserve() as blk:
                ttl.copy(a[0, ROUNDS * x + i], blk).wait()

                def send(pipe):
                    ttl.copy(blk, pipe).wait()

                net.if_src(send)

            def recv(pipe):
                with got_dfb.reserve() as r:
                    ttl.copy(pipe, r).wait()

            net.if_dst(recv)

    @ttl.compute()
    def compute():
        for i in range(ROUNDS):
            with send_dfb.wait() as s, got_dfb.wait() as r, out_dfb.reserve() as o:
                o.store(r - s)

    @ttl.datamovement()
    def writer():
        x, _ = ttl.node(dims=2)
        for i in range(ROUNDS):
            with out_dfb.wait() as o:
                ttl.copy(o, out[0, ROUNDS * x + i]).wait()
"""

EXCHANGE_CALL = """
torch.manual_seed(3)
x = torch.randn(32, 6 * 32).to(torch.bfloat16)
out = dev(torch.zeros(32, 6 * 32))
op(dev(x), out)
result = ttnn.to_torch(out)
"""


def _run(tmp_path, definitions: str, call: str, engine: str) -> tuple[torch.Tensor, list[str]]:
    """The program's result (and a second call's, if it makes one) under ``engine``, and
    the operations the compiler built."""
    compiled: list[str] = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: compiled.append(r.name))
    try:
        ns = load(write(tmp_path, program(definitions.format(engine=engine), call)))
    finally:
        backend.COMPILE_OBSERVERS.pop()
    if "again" in ns:
        return torch.stack([ns["result"], ns["again"]]), compiled
    return ns["result"], compiled


@pytest.mark.parametrize(
    "definitions, call",
    [(SCATTER_GATHER, SCATTER_GATHER_CALL), (EXCHANGE, EXCHANGE_CALL)],
    ids=["scatter_gather", "exchange"],
)
def test_a_dual_role_net_compiles_with_the_interpreters_bits(tmp_path, definitions, call):
    interpreted, none = _run(tmp_path, definitions, call, "python")
    compiled, built = _run(tmp_path, definitions, call, "native")
    assert none == [] and built == ["op"] * call.count("op(dev(")  # every call compiled
    assert torch.equal(compiled.view(torch.int16), interpreted.view(torch.int16))


def test_scatter_gather_gets_the_columns_tiles(tmp_path):
    results, _ = _run(tmp_path, SCATTER_GATHER, SCATTER_GATHER_CALL, "native")
    torch.manual_seed(7)
    host = torch.randn(64, 64).to(torch.bfloat16)
    for result, x in zip(results, (host, host * 3)):
        tiles = x.float().reshape(2, 32, 2, 32)
        want = torch.empty_like(tiles)
        for y in range(2):  # node y receives row 0's tile first, then row 1's
            want[y] = tiles[0] * 2.0 + tiles[1] - tiles[y]
        assert torch.equal(result.float(), want.reshape(64, 64).to(torch.bfloat16).float())


def test_exchanged_tiles_arrive_in_send_order(tmp_path):
    result, _ = _run(tmp_path, EXCHANGE, EXCHANGE_CALL, "native")
    torch.manual_seed(3)
    host = torch.randn(32, 6 * 32).to(torch.bfloat16)
    tiles = host.float().reshape(32, 2, 3, 32)  # node x's own tile i is tiles[:, x, i]
    want = (tiles.flip(1) - tiles).to(torch.bfloat16)
    assert torch.equal(result.reshape(32, 2, 3, 32), want)


# Node (1, 0) never receives what node (0, 0) sends on the staged net.
UNMATCHED = """
@ttl.operation(grid=(2, 1), options="--tw-engine={engine}")
def op(a, out):
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0)), ttl.Pipe(src=(1, 0), dst=(0, 0))])
    send_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    got_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    o_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)

    @ttl.datamovement()
    def mover():
        x, _ = ttl.node(dims=2)
        with send_dfb.reserve() as blk:
            ttl.copy(a[0, x], blk).wait()

            def send(pipe):
                ttl.copy(blk, pipe).wait()

            net.if_src(send)

        def recv(pipe):
            with got_dfb.reserve() as r:
                ttl.copy(pipe, r).wait()

        if x == 0:
            net.if_dst(recv)

    @ttl.compute()
    def compute():
        with send_dfb.wait() as s, o_dfb.reserve() as o:
            o.store(s)

    @ttl.datamovement()
    def writer():
        x, _ = ttl.node(dims=2)
        with o_dfb.wait() as o:
            ttl.copy(o, out[0, x]).wait()
"""

UNMATCHED_CALL = """
out = dev(torch.zeros(32, 64))
op(dev(torch.ones(32, 64)), out)
result = ttnn.to_torch(out)
"""


def test_an_unmatched_staged_send_is_a_deadlock_naming_the_pipe(tmp_path):
    """Interpreted, the send completes and the operation's end reports it (rule
    ``pipe-unmatched``); compiled, the sending kernel waits at its end for the staged
    block to be taken, so the run is a deadlock that names the pipe and the receiver."""
    with pytest.raises(KernelError, match=r"never received \(unmatched send\)"):
        _run(tmp_path, UNMATCHED, UNMATCHED_CALL, "python")
    with pytest.raises(DeadlockError) as info:
        _run(tmp_path, UNMATCHED, UNMATCHED_CALL, "native")
    assert "node (0, 0), kernel mover (ncrisc): blocked at " in str(info.value)
    assert (
        "ttl.copy(block, pipe Pipe((0, 0) -> (1, 0))).wait() on node (0, 0): waiting for "
        "node(s) (1, 0) to receive" in str(info.value)
    )


def test_staged_kernels_build_with_strict_warnings(tmp_path):
    kernels: list = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: kernels.extend(c.kernels))
    try:
        load(write(tmp_path, program(SCATTER_GATHER.format(engine="native"), SCATTER_GATHER_CALL)))
    finally:
        backend.COMPILE_OBSERVERS.pop()
    kernels = kernels[:3]  # the first call's (the warm call installs the same kernels)
    assert [k.name for k in kernels] == ["reader", "compute", "writer"]
    reader = kernels[0]
    assert "staging" in [cb.role for cb in reader.cbs]
    failed = {}
    for k in kernels:
        built = strict_build_kernel(tmp_path, k.name, k)
        if built.returncode:
            failed[k.name] = built.stderr
    assert not failed, failed


def test_emit_reruns_the_scatter_gather(tmp_path):
    """`tilewright emit` of the spec's scatter-gather: its generic_op rerun (the emitted
    C++ and host description, semaphores at their initial values) gives the same bits."""
    src = Path(__file__).parents[2] / "ttlang_compiler" / "programs" / "scatter_gather.py"
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["emit", "-o", str(out), str(src)])
    assert result.exit_code == 0, result.output
    folder = out / "scatter_gather"
    desc = json.loads((folder / "program.json").read_text())
    assert sorted(s["initial"] for s in desc["semaphores"]) == [0, 0, 0, 0, 2, 2, 2, 2]
    text = io.StringIO()
    cwd = os.getcwd()
    try:
        os.chdir(folder)
        with contextlib.redirect_stdout(text):
            assert run_program(str(folder / "run.py"), []) == 0
    finally:
        os.chdir(cwd)
    assert text.getvalue().splitlines() == ["PASS scatter_gather"]
