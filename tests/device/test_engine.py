"""Engine: scheduling, blocking, wake-ups, deadlock reports, error propagation."""

from types import SimpleNamespace

import pytest

from tilewright.device.cb import CircularBuffer
from tilewright.device.coords import CoreCoord
from tilewright.device.engine import ACTIVE, Engine, KernelRun
from tilewright.errors import DeadlockError, DFBContractError


def fake_core(x=0, y=0):
    return SimpleNamespace(logical=CoreCoord(x, y))


def test_producer_consumer_round_trips_in_fifo_order():
    core = fake_core()
    cb = CircularBuffer(core, 0, fifo_addr=0x1000, fifo_size=2 * 64, page_size=64, name="cb0")
    log = []

    def producer():
        for i in range(5):
            cb.reserve_back(1)
            log.append(("push", i, cb.wr_ptr))
            cb.push_back(1)

    def consumer():
        for i in range(5):
            cb.wait_front(1)
            log.append(("pop", i, cb.rd_ptr))
            cb.pop_front(1)

    engine = Engine()
    engine.run(
        [
            KernelRun(core, "producer", "ncrisc", producer),
            KernelRun(core, "consumer", "trisc", consumer),
        ]
    )
    pushes = [e for e in log if e[0] == "push"]
    pops = [e for e in log if e[0] == "pop"]
    assert [p[2] for p in pushes] == [0x1000, 0x1040, 0x1000, 0x1040, 0x1000]
    assert [p[2] for p in pops] == [0x1000, 0x1040, 0x1000, 0x1040, 0x1000]
    # The producer fills both pages before the consumer first runs (deterministic order).
    assert log[:2] == [("push", 0, 0x1000), ("push", 1, 0x1040)]
    assert cb.pages_filled == 0 and ACTIVE.run is None


def test_same_program_same_interleaving():
    def run_once():
        core = fake_core()
        cb = CircularBuffer(core, 0, 0, 3 * 16, 16)
        order = []

        def a():
            for i in range(7):
                cb.reserve_back(1)
                order.append(f"a{i}")
                cb.push_back(1)

        def b():
            for i in range(7):
                cb.wait_front(1)
                order.append(f"b{i}")
                cb.pop_front(1)

        Engine().run([KernelRun(core, "a", "x", a), KernelRun(core, "b", "y", b)])
        return order

    assert run_once() == run_once()


def test_deadlock_names_every_blocked_kernel_and_its_wait():
    core = fake_core()
    cb_in = CircularBuffer(core, 0, 0, 2 * 32, 32, name="in_cb")
    cb_out = CircularBuffer(core, 1, 64, 2 * 32, 32, name="out_cb")

    def compute():
        cb_in.wait_front(1)
        cb_out.reserve_back(1)
        cb_out.push_back(1)

    def mover():
        cb_out.wait_front(1)

    def idle():
        pass

    with pytest.raises(DeadlockError) as info:
        Engine().run(
            [
                KernelRun(core, "compute", "trisc", compute),
                KernelRun(core, "mover", "ncrisc", mover),
                KernelRun(core, "idle", "brisc", idle),
            ]
        )
    msg = str(info.value)
    assert "deadlock" in msg
    assert "2 of 3 kernels blocked" in msg
    assert "kernel compute (trisc)" in msg and "cb_wait_front(in_cb, 1): 0 of 2 pages filled" in msg
    assert "kernel mover (ncrisc)" in msg and "cb_wait_front(out_cb, 1)" in msg
    assert "test_engine.py:" in msg  # the user's source line of each wait


def test_kernel_error_keeps_type_and_names_kernel_and_cleans_up():
    core = fake_core(1, 2)
    cb = CircularBuffer(core, 0, 0, 2 * 32, 32, name="cb")
    cleaned = []

    def bad():
        cb.pop_front(1)  # never pushed

    def waiter():
        try:
            cb.wait_front(2)
        finally:
            cleaned.append(True)

    with pytest.raises(DFBContractError) as info:
        Engine().run(
            [KernelRun(core, "waiter", "trisc", waiter), KernelRun(core, "bad", "ncrisc", bad)]
        )
    assert "pops pages that were never pushed" in str(info.value)
    assert any("core (1, 2), kernel bad" in n for n in info.value.__notes__)
    assert info.value.loc is not None and info.value.loc.file.endswith("test_engine.py")
    assert cleaned == [True]


@pytest.mark.parametrize(
    "action, message",
    [
        (lambda cb: cb.reserve_back(3), "can never succeed"),
        (lambda cb: (cb.reserve_back(2), cb.push_back(2), cb.push_back(1)), "overflows"),
        (
            lambda cb: (cb.reserve_back(1), cb.push_back(1), cb.wait_front(1), cb.pop_front(2)),
            "never pushed",
        ),
    ],
)
def test_circular_buffer_misuse_is_an_error(action, message):
    core = fake_core()
    cb = CircularBuffer(core, 0, 0, 2 * 32, 32)
    with pytest.raises(DFBContractError, match=message):
        Engine().run([KernelRun(core, "k", "s", lambda: action(cb))])


def test_push_across_fifo_end_is_an_error():
    core = fake_core()
    cb = CircularBuffer(core, 0, 0, 3 * 32, 32)

    def k():
        cb.reserve_back(2)
        cb.push_back(2)
        cb.wait_front(2)
        cb.pop_front(2)
        cb.reserve_back(2)
        cb.push_back(2)  # wr_ptr at page 2 + 2 pages crosses the limit

    with pytest.raises(DFBContractError, match="crosses the end of the FIFO"):
        Engine().run([KernelRun(core, "k", "s", k)])
