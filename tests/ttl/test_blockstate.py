"""The block state machine: every transition of the spec's table, every rejection (reference D.2)."""

import itertools

import pytest

from tilewright.errors import BlockStateError
from tilewright.lang.blockstate import ALLOWED, Context, Op, State, check_and_apply


class FakeBlock:
    def __init__(self, context, state, ror=0):
        self.context = context
        self.state = state
        self.ror = ror

    def describe(self):
        return "block 'b' (reserved from DFB 'd')"


# (context, from state, op) -> to state: the spec's table, written out independently.
EXPECTED = {
    (Context.DM_RESERVE, State.MW, Op.COPY_DST): State.NAW,
    (Context.DM_RESERVE, State.NAW, Op.TX_WAIT): State.MR,
    (Context.DM_RESERVE, State.MR, Op.PUSH): State.OS,
    (Context.DM_RESERVE, State.MR, Op.COPY_SRC): State.ROR,
    (Context.DM_RESERVE, State.ROR, Op.COPY_SRC): State.ROR,
    (Context.DM_RESERVE, State.ROR, Op.TX_WAIT): State.RW,  # the last reader finished
    (Context.DM_RESERVE, State.RW, Op.COPY_DST): State.NAW,
    (Context.DM_RESERVE, State.RW, Op.COPY_SRC): State.ROR,
    (Context.DM_RESERVE, State.RW, Op.PUSH): State.OS,
    (Context.DM_WAIT, State.MR, Op.COPY_SRC): State.ROR,
    (Context.DM_WAIT, State.ROR, Op.COPY_SRC): State.ROR,
    (Context.DM_WAIT, State.ROR, Op.TX_WAIT): State.RW,
    (Context.DM_WAIT, State.RW, Op.COPY_DST): State.NAW,
    (Context.DM_WAIT, State.RW, Op.COPY_SRC): State.ROR,
    (Context.DM_WAIT, State.RW, Op.POP): State.OS,
    (Context.DM_WAIT, State.NAW, Op.TX_WAIT): State.MR,
    (Context.CK_RESERVE, State.MW, Op.STORE_DST): State.MR,
    (Context.CK_RESERVE, State.MR, Op.STORE_SRC): State.RW,
    (Context.CK_RESERVE, State.MR, Op.PUSH): State.OS,
    (Context.CK_RESERVE, State.RW, Op.STORE_SRC): State.RW,
    (Context.CK_RESERVE, State.RW, Op.STORE_DST): State.MR,
    (Context.CK_RESERVE, State.RW, Op.PUSH): State.OS,
    (Context.CK_WAIT, State.MR, Op.STORE_SRC): State.RW,
    (Context.CK_WAIT, State.RW, Op.STORE_SRC): State.RW,
    (Context.CK_WAIT, State.RW, Op.STORE_DST): State.MR,
    (Context.CK_WAIT, State.RW, Op.POP): State.OS,
}


@pytest.mark.parametrize(
    "key", sorted(EXPECTED), ids=lambda k: f"{k[0].name}-{k[1].name}-{k[2].name}"
)
def test_every_allowed_transition(key):
    context, state, op = key
    block = FakeBlock(context, state, ror=1 if state == State.ROR else 0)
    check_and_apply(block, op)
    assert block.state == EXPECTED[key]


def test_the_allowed_table_is_exactly_the_spec_table():
    table = {(c, s, o) for c, states in ALLOWED.items() for s, ops in states.items() for o in ops}
    assert table == set(EXPECTED)


ALL = list(itertools.product(Context, State, Op))


@pytest.mark.parametrize(
    "key",
    [k for k in ALL if k not in EXPECTED],
    ids=lambda k: f"{k[0].name}-{k[1].name}-{k[2].name}",
)
def test_every_other_combination_is_rejected_with_a_message(key):
    context, state, op = key
    block = FakeBlock(context, state, ror=1 if state == State.ROR else 0)
    with pytest.raises(BlockStateError) as info:
        check_and_apply(block, op)
    msg = str(info.value)
    assert "block 'b'" in msg
    assert block.state == state  # a rejection changes nothing


def test_ror_counts_concurrent_readers():
    block = FakeBlock(Context.DM_WAIT, State.MR)
    check_and_apply(block, Op.COPY_SRC)
    check_and_apply(block, Op.COPY_SRC)
    assert (block.state, block.ror) == (State.ROR, 2)
    check_and_apply(block, Op.TX_WAIT)
    assert (block.state, block.ror) == (State.ROR, 1)
    check_and_apply(block, Op.TX_WAIT)
    assert (block.state, block.ror) == (State.RW, 0)


@pytest.mark.parametrize(
    "context, state, op, text",
    [
        (Context.CK_RESERVE, State.MW, Op.STORE_SRC, "is read while in state MW (must-write"),
        (
            Context.CK_WAIT,
            State.RW,
            Op.PUSH,
            "push() is for reserve() blocks; a wait() block is closed with pop()",
        ),
        (Context.DM_RESERVE, State.MR, Op.POP, "pop() is for wait() blocks"),
        (Context.DM_RESERVE, State.OS, Op.PUSH, "no longer active"),
        (Context.DM_RESERVE, State.NAW, Op.COPY_DST, "copy lock error"),
        (Context.DM_RESERVE, State.ROR, Op.COPY_DST, "copy lock error"),
        (Context.DM_WAIT, State.NAW, Op.COPY_SRC, "still writing it (state NAW)"),
        (Context.DM_WAIT, State.MR, Op.POP, "next allowed: ttl.copy from the block"),
        (Context.CK_WAIT, State.MR, Op.POP, "next allowed: reading the block"),
        (Context.CK_RESERVE, State.MR, Op.STORE_DST, "store() into the block is not allowed"),
        (
            Context.DM_RESERVE,
            State.MW,
            Op.PUSH,
            "push() is not allowed on block 'b' (reserved from DFB 'd') in state MW",
        ),
    ],
)
def test_rejection_messages(context, state, op, text):
    with pytest.raises(BlockStateError) as info:
        check_and_apply(FakeBlock(context, state, ror=1), op)
    assert text in str(info.value)
