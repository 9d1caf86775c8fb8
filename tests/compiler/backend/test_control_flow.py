"""Control flow the lowering follows exactly: ``continue`` in ``while``, the block states at
``break``, and the code after a ``fail`` (each compiled and run on both engines)."""

from __future__ import annotations

import pytest
import torch

from tests.compiler.helpers import line_of, load, program, write
from tilewright.device import session
from tilewright.errors import BlockStateError, NotCompilableError

WHILE_CONTINUE = """
@ttl.operation(grid=(1, 1), options="--tw-engine={engine}")
def op(a, out):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        i = 0
        while i < 2:
            i += 1
            if i == 2:
                continue  # the condition is evaluated again here: the loop ends
            with d.reserve() as blk:
                ttl.copy(a[0, i], blk).wait()

    @ttl.datamovement()
    def writer():
        with d.wait() as blk:
            ttl.copy(blk, out[0, 0]).wait()
"""

CALL = """
x = torch.rand(32, 64).to(torch.bfloat16)
out = dev(torch.zeros(32, 32))
op(dev(x), out)
result = ttnn.to_torch(out)
expected = x[:, 32:64]
"""


@pytest.mark.parametrize("engine", ["python", "native"])
def test_continue_in_while_evaluates_the_condition(tmp_path, engine):
    """A ``continue`` re-evaluates the ``while`` condition (it used to keep the stale flag and
    run one more iteration: here a copy from outside the tensor)."""
    from tilewright.compiler.backend import engine as backend

    seen: list[str] = []
    backend.COMPILE_OBSERVERS.append(lambda r, c, p: seen.append(r.name))
    try:
        ns = load(write(tmp_path, program(WHILE_CONTINUE.format(engine=engine), CALL)))
    finally:
        backend.COMPILE_OBSERVERS.pop()
    assert torch.equal(ns["result"], ns["expected"])
    assert seen == ([] if engine == "python" else ["op"])


BREAK_STATE = """
@ttl.operation(grid=(1, 1))
def op(a, out):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        with d.reserve() as blk:
            ttl.copy(a[0, 0], blk).wait()

    @ttl.compute()
    def c():
        with d.wait() as x:  # <-
            for i in range(2):
                if i == 0:
                    break
                y = x + x
"""


def test_a_break_keeps_its_block_states(tmp_path):
    """After a loop, a block is in any state a ``break`` left it in: here the break leaves
    ``x`` unread, which its pop rejects -- a state the path decides, so the compiled engine
    does not compile it and ``auto`` interprets (it used to compile the loop as if it always
    ended normally, and pop the unread block without a word)."""
    path = write(
        tmp_path, program(BREAK_STATE, "op(dev(torch.ones(32, 32)), dev(torch.zeros(32, 32)))")
    )
    saved = session.OPTIONS.engine
    try:
        session.OPTIONS.engine = "native"
        with pytest.raises(NotCompilableError) as info:
            load(path)
        assert "depends on the path taken" in info.value.message
        session.OPTIONS.engine = "auto"
        with pytest.raises(BlockStateError) as state:
            load(path)
        assert "pop() is not allowed on block 'x'" in state.value.message
        assert state.value.loc is not None and state.value.loc.line == line_of(path)
    finally:
        session.OPTIONS.engine = saved


AFTER_FAIL = """
@ttl.operation(grid=(1, 1))
def op(a, out):
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def k():
        for i in range(1):
            with d.reserve() as blk:
                ttl.copy(a[0:1, 0:2], blk).wait()  # <-
"""


def test_the_code_after_a_fail_is_not_lowered(tmp_path):
    """A rule broken inside a ``with`` in a loop: the compiled kernel raises the rule's error
    at that line; what follows on the path (the block's release, the loop's end) is never
    reached, so it cannot make the kernel not compilable (it used to: the unwritten block
    was still held at the end of the iteration)."""
    from tilewright.errors import KernelError

    path = write(
        tmp_path, program(AFTER_FAIL, "op(dev(torch.ones(32, 64)), dev(torch.zeros(32, 32)))")
    )
    saved = session.OPTIONS.engine
    try:
        session.OPTIONS.engine = "native"
        with pytest.raises(KernelError) as info:
            load(path)
    finally:
        session.OPTIONS.engine = saved
    assert info.value.rule == "copy-covers-block"
    assert info.value.loc is not None and info.value.loc.line == line_of(path)
