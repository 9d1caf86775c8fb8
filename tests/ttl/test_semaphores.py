"""ttl.Semaphore (spec §Semaphore): barriers, remote set/inc, multicast reach, and the rules."""

import pytest
import torch

from tests.ttl.conftest import bf16
from tilewright import ttl, ttnn
from tilewright.errors import DeadlockError, InterfaceError, KernelError

N = 4


@ttl.operation(grid=(N, 1))
def one_to_many(flag_out):
    # Spec example: node 0 releases every other node with a whole-grid multicast set.
    node_num = ttl.node(dims=1)
    my_barrier = ttl.Semaphore()
    all_barrier = my_barrier.get_remote_multicast()
    dfb = ttl.make_dataflow_buffer_like(flag_out, shape=(1, 1), block_count=1)

    @ttl.datamovement()
    def dm():
        if node_num == 0:
            all_barrier.set(1)
        else:
            my_barrier.wait_eq(1)
            with dfb.reserve() as blk:
                ttl.raw_element_write(blk, 0, 0, float(my_barrier.value()))
                ttl.copy(blk, flag_out[0, node_num]).wait()


def test_one_to_many_barrier_reaches_everyone_but_the_sender(to_dev):
    out = to_dev(torch.zeros(32, 32 * N), ttnn.float32)
    one_to_many(out)
    got = ttnn.to_torch(out)
    assert [got[0, 32 * i].item() for i in range(N)] == [0.0, 1.0, 1.0, 1.0]


@ttl.operation(grid=(N, 1))
def many_to_one(count_out):
    node_num = ttl.node(dims=1)
    my_barrier = ttl.Semaphore()
    node_0_barrier = my_barrier.get_remote((0, 0))
    non_0_count = ttl.grid_size(dims=1) - 1
    dfb = ttl.make_dataflow_buffer_like(count_out, shape=(1, 1), block_count=1)

    @ttl.datamovement()
    def dm():
        if node_num != 0:
            node_0_barrier.inc(1)
        else:
            my_barrier.wait_ge(non_0_count)
            with dfb.reserve() as blk:
                ttl.raw_element_write(blk, 0, 0, float(my_barrier.value()))
                ttl.copy(blk, count_out[0, 0]).wait()


def test_many_to_one_barrier_counts_every_increment(to_dev):
    out = to_dev(torch.zeros(32, 32), ttnn.float32)
    many_to_one(out)
    assert ttnn.to_torch(out)[0, 0].item() == N - 1


def test_semaphore_wait_that_never_completes_is_a_deadlock(to_dev):
    @ttl.operation(grid=(2, 1))
    def never(t):
        sem = ttl.Semaphore(initial=5)

        @ttl.datamovement()
        def dm():
            sem.wait_eq(6)

    with pytest.raises(DeadlockError) as info:
        never(to_dev(bf16(32, 32)))
    msg = str(info.value)
    assert "waits for value == 6, value is 5" in msg and "node (1, 0)" in msg


def test_semaphore_calls_on_compute_kernels_are_rejected(to_dev):
    @ttl.operation(grid=(1, 1))
    def on_compute(t):
        sem = ttl.Semaphore()

        @ttl.compute()
        def c():
            sem.set(1)

    with pytest.raises(KernelError, match="runs on data-movement kernels"):
        on_compute(to_dev(bf16(32, 32)))


@pytest.mark.parametrize(
    "body, error, message",
    [
        ("ttl.Semaphore(initial=-1)", KernelError, "32-bit unsigned"),
        ("ttl.Semaphore(initial=2**32)", KernelError, "32-bit unsigned"),
        ("ttl.Semaphore().get_remote((5, 0))", InterfaceError, r"node \(5, 0\) is outside"),
        ("ttl.Semaphore().get_remote_multicast((slice(0, 9), 0))", InterfaceError, "leaves the"),
    ],
)
def test_semaphore_argument_rules(to_dev, tmp_path, body, error, message):
    src = tmp_path / "prog.py"
    src.write_text(
        "from tilewright import ttl\n"
        "@ttl.operation(grid=(2, 1))\n"
        "def op(t):\n"
        f"    x = {body}\n"
        "    @ttl.datamovement()\n"
        "    def dm():\n"
        "        pass\n"
    )
    ns: dict = {}
    exec(compile(src.read_text(), str(src), "exec"), ns)
    with pytest.raises(error, match=message) as info:
        ns["op"](to_dev(bf16(32, 32)))
    assert info.value.loc is not None and info.value.loc.line == 4


def test_multicast_to_only_the_sender_is_an_error(to_dev):
    @ttl.operation(grid=(2, 1))
    def self_only(t):
        sem = ttl.Semaphore()
        me = sem.get_remote_multicast((0, 0))

        @ttl.datamovement()
        def dm():
            x = ttl.node(dims=1)
            if x == 0:
                me.set(1)

    with pytest.raises(KernelError, match="only the sender"):
        self_only(to_dev(bf16(32, 32)))


def test_semaphore_outside_an_operation_is_rejected():
    with pytest.raises(InterfaceError, match="in the body of an @ttl.operation"):
        ttl.Semaphore()
