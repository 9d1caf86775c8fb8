"""Pipe nets (spec §Pipes): gather, scatter, scatter-gather, forward-to-neighbour, wait_any, errors."""

import pytest
import torch

from tests.ttl.conftest import bf16
from tilewright import ttl, ttnn
from tilewright.errors import DeadlockError, InterfaceError, KernelError

N = 4  # nodes in a row


def tile(t, i):
    return t[:, 32 * i : 32 * (i + 1)].float()


# -- gather: many sources, one destination ----------------------------------------------------


@ttl.operation(grid=(N, 1))
def gather_sum(inp, out):
    net = ttl.PipeNet([ttl.Pipe(src=(i, 0), dst=(0, 0)) for i in range(1, N)])
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    recv_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=N)
    acc_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

    @ttl.datamovement()
    def mover():
        x, _ = ttl.node(dims=2)
        if x == 0:
            with recv_dfb.reserve() as own:
                ttl.copy(inp[0, 0], own).wait()

        def send(pipe):
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0, x], blk).wait()
                ttl.copy(blk, pipe).wait()

        def recv(pipe):
            with recv_dfb.reserve() as blk:
                ttl.copy(pipe, blk).wait()

        net.if_src(send)
        net.if_dst(recv)
        if x == 0:
            with acc_dfb.wait() as total:
                ttl.copy(total, out[0, 0]).wait()

    @ttl.compute()
    def adder():
        if net.is_dst():
            with acc_dfb.reserve() as total:
                with recv_dfb.wait() as own:
                    total.store(own)
                for _ in range(net.destination_count()):
                    with recv_dfb.wait() as part:
                        total += part


def test_gather(to_dev):
    x = bf16(32, 32 * N, seed=1)
    out = to_dev(torch.zeros(32, 32))
    gather_sum(to_dev(x), out)
    want = sum(tile(x, i) for i in range(N))
    assert torch.allclose(ttnn.to_torch(out).float(), want, atol=3e-2)


# -- scatter: one source, a different tile to each destination --------------------------------


@ttl.operation(grid=(N, 1))
def scatter_tiles(inp, out):
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(i, 0)) for i in range(1, N)])
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=N)  # no consumer
    recv_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def mover():
        x, _ = ttl.node(dims=2)

        def send(pipe):
            dst_x = pipe.dst[0]
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0, dst_x], blk).wait()
                ttl.copy(blk, pipe).wait()

        def recv(pipe):
            with recv_dfb.reserve() as blk:
                ttl.copy(pipe, blk).wait()
                ttl.copy(blk, out[0, x]).wait()

        net.if_src(send)
        net.if_dst(recv)


def test_scatter(to_dev):
    x = bf16(32, 32 * N, seed=2)
    out = to_dev(torch.zeros(32, 32 * N))
    scatter_tiles(to_dev(x), out)
    got = ttnn.to_torch(out)
    assert torch.equal(got[:, 32:], x[:, 32:])  # delivered bit-exact
    assert torch.equal(got[:, :32], torch.zeros(32, 32, dtype=torch.bfloat16))


# -- scatter-gather: node 0 scatters, every node squares its tile, node 0 gathers ------------


@ttl.operation(grid=(N, 1))
def scatter_square_gather(inp, out):
    down = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(i, 0)) for i in range(1, N)])
    up = ttl.PipeNet([ttl.Pipe(src=(i, 0), dst=(0, 0)) for i in range(1, N)])
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    sq_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    fwd_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=N)
    back_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=N)  # no consumer

    @ttl.datamovement()
    def reader():
        x, _ = ttl.node(dims=2)
        if x == 0:
            with in_dfb.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()

        def scatter(pipe):
            with fwd_dfb.reserve() as blk:
                ttl.copy(inp[0, pipe.dst[0]], blk).wait()
                ttl.copy(blk, pipe).wait()

        def receive(pipe):
            with in_dfb.reserve() as blk:
                ttl.copy(pipe, blk).wait()

        down.if_src(scatter)
        down.if_dst(receive)

    @ttl.compute()
    def square():
        with in_dfb.wait() as a, sq_dfb.reserve() as s:
            s.store(a * a)

    @ttl.datamovement()
    def writer():
        x, _ = ttl.node(dims=2)

        def send_back(pipe):
            with sq_dfb.wait() as s:
                ttl.copy(s, pipe).wait()

        def collect(pipe):
            with back_dfb.reserve() as blk:
                ttl.copy(pipe, blk).wait()
                ttl.copy(blk, out[0, pipe.src[0]]).wait()

        up.if_src(send_back)
        if x == 0:
            with sq_dfb.wait() as s:
                ttl.copy(s, out[0, 0]).wait()
        up.if_dst(collect)


def test_scatter_gather(to_dev):
    x = bf16(32, 32 * N, seed=3)
    out = to_dev(torch.zeros(32, 32 * N))
    scatter_square_gather(to_dev(x), out)
    want = (x.float() ** 2).to(torch.bfloat16)
    assert torch.equal(ttnn.to_torch(out), want)


# -- forward to the neighbour: a ring ---------------------------------------------------------


@ttl.operation(grid=(N, 1))
def ring_shift(inp, out):
    net = ttl.PipeNet([ttl.Pipe(src=(i, 0), dst=((i + 1) % N, 0)) for i in range(N)])
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    recv_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def sender():
        x, _ = ttl.node(dims=2)

        def send(pipe):
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0, x], blk).wait()
                ttl.copy(blk, pipe).wait()

        net.if_src(send)

    @ttl.datamovement()
    def receiver():
        x, _ = ttl.node(dims=2)

        def recv(pipe):
            with recv_dfb.reserve() as blk:
                ttl.copy(pipe, blk).wait()
                ttl.copy(blk, out[0, x]).wait()

        net.if_dst(recv)


def test_forward_to_neighbour(to_dev):
    x = bf16(32, 32 * N, seed=4)
    out = to_dev(torch.zeros(32, 32 * N))
    ring_shift(to_dev(x), out)
    got = ttnn.to_torch(out)
    for i in range(N):
        assert torch.equal(
            got[:, 32 * i : 32 * (i + 1)], x[:, 32 * ((i - 1) % N) : 32 * ((i - 1) % N + 1)]
        )


# -- wait_any: first completed receive in cyclic order -------------------------------------


def make_wait_any_op(start, stagger):
    @ttl.operation(grid=(3, 1))
    def wait_any_op(inp, out):
        net = ttl.PipeNet([ttl.Pipe(src=(1, 0), dst=(0, 0)), ttl.Pipe(src=(2, 0), dst=(0, 0))])
        go = ttl.Semaphore()  # staggered: node 1 sends only after node 0 saw the first arrival
        go_node1 = go.get_remote((1, 0))
        sent = ttl.Semaphore()  # not staggered: node 0 waits until both sends were delivered
        sent_root = sent.get_remote((0, 0))
        send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        ra = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
        rb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)

        @ttl.datamovement()
        def mover():
            x, _ = ttl.node(dims=2)

            def send(pipe):
                if stagger and x == 1:
                    go.wait_eq(1)
                with send_dfb.reserve() as blk:
                    ttl.copy(inp[0, x], blk).wait()
                    ttl.copy(blk, pipe).wait()
                sent_root.inc(1)

            net.if_src(send)
            if x == 0:
                with ra.reserve() as a, rb.reserve() as b:
                    blocks = [a, b]
                    requests = []

                    def recv(pipe):
                        requests.append(ttl.copy(pipe, blocks[len(requests)]))

                    net.if_dst(recv)
                    if not stagger:
                        sent.wait_eq(2)
                    first = ttl.wait_any(tuple(requests), start=start).index()
                    ttl.copy(blocks[first], out[0, 0]).wait()
                    if stagger:
                        go_node1.set(1)
                    requests[1 - first].wait()
                    ttl.copy(blocks[1 - first], out[0, 1]).wait()

    return wait_any_op


@pytest.mark.parametrize(
    "start, stagger, first_src",
    [(0, True, 2), (1, True, 2), (0, False, 1), (1, False, 2)],
)
def test_wait_any_ordering(to_dev, start, stagger, first_src):
    x = bf16(32, 96, seed=5)
    out = to_dev(torch.zeros(32, 64))
    make_wait_any_op(start, stagger)(to_dev(x), out)
    got = ttnn.to_torch(out)
    other = 3 - first_src
    assert torch.equal(got[:, :32], x[:, 32 * first_src : 32 * (first_src + 1)])
    assert torch.equal(got[:, 32:], x[:, 32 * other : 32 * (other + 1)])


def test_missing_receive_is_reported_naming_the_pipe(to_dev):
    @ttl.operation(grid=(2, 1))
    def lonely_send(inp):
        net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def mover():
            def send(pipe):
                with dfb.reserve() as blk:
                    ttl.copy(inp[0, 0], blk).wait()
                    ttl.copy(blk, pipe).wait()

            net.if_src(send)  # node 1 never calls if_dst: nobody receives

    # A send completes without its receivers (spec §Pipe): interpreted, the unmatched send
    # is reported when the operation ends; compiled (a rendezvous), its wait never returns.
    with pytest.raises((KernelError, DeadlockError)) as info:
        lonely_send(to_dev(bf16(32, 32)))
    msg = str(info.value)
    assert "Pipe((0, 0) -> (1, 0))" in msg and "node (0, 0)" in msg
    if isinstance(info.value, DeadlockError):
        assert "waiting for node(s) (1, 0) to receive" in msg
    else:
        assert "never received (unmatched send)" in msg


def test_unwaited_unmatched_send_is_reported_at_the_end(to_dev):
    @ttl.operation(grid=(2, 1))
    def fire_and_forget(inp):
        net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def mover():
            def send(pipe):
                blk = dfb.reserve()
                ttl.copy(inp[0, 0], blk).wait()
                ttl.copy(blk, pipe)  # never waited, never received

            net.if_src(send)

    with pytest.raises((KernelError, DeadlockError)) as info:
        fire_and_forget(to_dev(bf16(32, 32)))
    assert "Pipe((0, 0) -> (1, 0))" in str(info.value)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: ttl.PipeNet([]), "needs at least one pipe"),
        (
            lambda: ttl.PipeNet([ttl.Pipe((0, 0), (1, 0)), ttl.Pipe((0, 0), (slice(1, 3), 0))]),
            "one kind",
        ),
        (lambda: ttl.PipeNet([ttl.Pipe((0, 0), (1, 0)), ttl.Pipe(0, 1)]), "different ranks"),
        (lambda: ttl.Pipe((0, 0), (slice(3, 1), 0)), "start < stop"),
        (lambda: ttl.Pipe((0, 0), (slice(1, 3, 2), 0)), "step 1"),
        (lambda: ttl.Pipe((slice(0, 2), 0), (1, 0)), "src must be one node"),
    ],
)
def test_pipe_and_pipenet_validation(make, message):
    with pytest.raises(InterfaceError, match=message):
        make()


def test_pipe_outside_the_grid_is_rejected(to_dev):
    @ttl.operation(grid=(2, 1))
    def off_grid(inp):
        ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(5, 0))])

        @ttl.datamovement()
        def mover():
            pass

    with pytest.raises(InterfaceError, match=r"node \(5, 0\) is outside the 2x1 grid"):
        off_grid(to_dev(bf16(32, 32)))


def test_pipe_copy_outside_its_role_is_an_error(to_dev):
    @ttl.operation(grid=(2, 1))
    def wrong_role(inp):
        net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def mover():
            def recv(pipe):
                with dfb.reserve() as blk:
                    ttl.copy(blk, pipe)  # a receiving end used to send

            net.if_dst(recv)

    with pytest.raises(KernelError, match="is a receiving end"):
        wrong_role(to_dev(bf16(32, 32)))


def test_inactive_nodes_run_but_callbacks_do_not_fire(to_dev):
    seen = []

    @ttl.operation(grid=(3, 1))
    def partly_active(inp):
        net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def mover():
            x, _ = ttl.node(dims=2)
            seen.append((x, net.is_active(), net.is_src(), net.is_dst()))

            def send(pipe):
                with dfb.reserve() as blk:
                    ttl.copy(inp[0, 0], blk).wait()
                    ttl.copy(blk, pipe).wait()

            def recv(pipe):
                with dfb.reserve() as blk:
                    ttl.copy(pipe, blk).wait()

            net.if_src(send)
            net.if_dst(recv)

    partly_active(to_dev(bf16(32, 32)))
    assert sorted(seen) == [
        (0, True, True, False),
        (1, True, False, True),
        (2, False, False, False),
    ]


# -- spec §Pipe scatter-gather: a multicast whose sender is also a destination ----------------

GX, GY = 2, 2


@ttl.operation(grid=(GX, GY))
def column_scatter_gather(a, out):
    # Every node multicasts its tile to its whole column, itself included, and only then
    # receives the column's tiles: the spec's example, with overlapping destinations.
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
            o.store(r0 + r1 - own)
        own.pop()
        r0.pop()
        r1.pop()

    @ttl.datamovement()
    def writer():
        x, y = ttl.node(dims=2)
        with out_dfb.wait() as o:
            ttl.copy(o, out[y, x]).wait()


def test_scatter_gather_with_a_loopback_multicast_runs_as_the_spec_shows(to_dev):
    host = torch.randint(0, 8, (GY * 32, GX * 32)).to(torch.bfloat16)
    out = to_dev(torch.zeros_like(host))
    column_scatter_gather(to_dev(host), out)
    tiles = host.float().reshape(GY, 32, GX, 32)
    want = (tiles.sum(dim=0, keepdim=True) - tiles).reshape(GY * 32, GX * 32)
    assert torch.equal(ttnn.to_torch(out).float(), want)


def test_scatter_gather_compiles_with_staged_pipes(to_dev):
    """Compiled, the net's pipes are staged (a node is a source and a destination):
    sends complete without their receivers, as interpreted (tests/compiler/backend/
    test_pipes_staged.py compares the engines bit for bit)."""
    from tilewright.device import session

    host = torch.randint(0, 8, (GY * 32, GX * 32)).to(torch.bfloat16)
    out = to_dev(torch.zeros_like(host))
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = "native"
    try:
        column_scatter_gather(to_dev(host), out)
    finally:
        session.OPTIONS.engine = saved
    tiles = host.float().reshape(GY, 32, GX, 32)
    want = (tiles.sum(dim=0, keepdim=True) - tiles).reshape(GY * 32, GX * 32)
    assert torch.equal(ttnn.to_torch(out).float(), want)
