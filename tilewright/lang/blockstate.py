"""The block state machine (TT-Lang spec §Block states; reference D.2), as tables.

A block acquired from a DFB is in one of six states:

====  =========================================================================
MW    must write: freshly reserved, holds garbage
MR    must read: freshly waited, or just written
RW    read-write: read at least once since MR
ROR   read-only while N asynchronous copies read it
NAW   no access while an asynchronous copy writes it
OS    out of scope: pushed or popped
====  =========================================================================

What is allowed next depends on the state and on the *context* (the kind of
kernel that holds the block and how it was acquired).  ``ALLOWED`` lists, per
context and state, the operations that may follow; ``TRANSITIONS`` gives the next
state.  Every rejection names the block, its DFB, the state and what is allowed
next, in the user's names.
"""

from __future__ import annotations

from enum import IntEnum

from tilewright.errors import BlockStateError
from tilewright.lang.rules.registry import rule

__all__ = [
    "declared_unused",
    "State",
    "Op",
    "Context",
    "ALLOWED",
    "check_and_apply",
    "BLOCK_STATE",
    "STATE_MEANING",
    "OP_TEXT",
]


BLOCK_STATE = rule(
    "block-state",
    BlockStateError,
    "D.2",
    "a block is used only as its state (MW, MR, RW, ROR, NAW, OS) and context allow",
)


class State(IntEnum):
    MW = 0
    MR = 1
    RW = 2
    ROR = 3
    NAW = 4
    OS = 5


class Op(IntEnum):
    COPY_DST = 0  # the block is the destination of ttl.copy (tensor or pipe → block)
    COPY_SRC = 1  # the block is the source of ttl.copy (block → tensor or pipe)
    TX_WAIT = 2  # a transfer on the block completed (handle.wait())
    STORE_DST = 3  # block.store(...) / the write half of +=
    STORE_SRC = 4  # the block is read: operand of an expression or source of a store
    PUSH = 5
    POP = 6


class Context(IntEnum):
    """(kernel kind, acquisition)."""

    DM_RESERVE = 0
    DM_WAIT = 1
    CK_RESERVE = 2
    CK_WAIT = 3


STATE_MEANING = {
    State.MW: "must-write: reserved, not written yet",
    State.MR: "must-read: filled, not read yet",
    State.RW: "read-write",
    State.ROR: "read-only: copies are reading it",
    State.NAW: "no access: a copy is writing it",
    State.OS: "out of scope: already released",
}

OP_TEXT = {
    Op.COPY_DST: "ttl.copy into the block",
    Op.COPY_SRC: "ttl.copy from the block",
    Op.TX_WAIT: "waiting for a transfer",
    Op.STORE_DST: "store() into the block",
    Op.STORE_SRC: "reading the block",
    Op.PUSH: "push()",
    Op.POP: "pop()",
}

_O = Op
ALLOWED: dict[Context, dict[State, frozenset[Op]]] = {
    Context.DM_RESERVE: {
        State.MW: frozenset({_O.COPY_DST}),
        State.NAW: frozenset({_O.TX_WAIT}),
        State.MR: frozenset({_O.PUSH, _O.COPY_SRC}),
        State.ROR: frozenset({_O.TX_WAIT, _O.COPY_SRC}),
        State.RW: frozenset({_O.COPY_DST, _O.COPY_SRC, _O.PUSH}),
    },
    Context.DM_WAIT: {
        State.MR: frozenset({_O.COPY_SRC}),
        State.ROR: frozenset({_O.TX_WAIT, _O.COPY_SRC}),
        State.RW: frozenset({_O.COPY_DST, _O.COPY_SRC, _O.POP}),
        State.NAW: frozenset({_O.TX_WAIT}),
    },
    Context.CK_RESERVE: {
        State.MW: frozenset({_O.STORE_DST}),
        State.MR: frozenset({_O.STORE_SRC, _O.PUSH}),
        State.RW: frozenset({_O.STORE_SRC, _O.STORE_DST, _O.PUSH}),
    },
    Context.CK_WAIT: {
        State.MR: frozenset({_O.STORE_SRC}),
        State.RW: frozenset({_O.STORE_SRC, _O.STORE_DST, _O.POP}),
    },
}

# (op, from-state) -> to-state; ROR counting is handled in check_and_apply.
TRANSITIONS: dict[tuple[Op, State], State] = {
    (Op.COPY_DST, State.MW): State.NAW,
    (Op.COPY_DST, State.RW): State.NAW,
    (Op.TX_WAIT, State.NAW): State.MR,
    (Op.COPY_SRC, State.MR): State.ROR,
    (Op.COPY_SRC, State.RW): State.ROR,
    (Op.COPY_SRC, State.ROR): State.ROR,
    (Op.STORE_DST, State.MW): State.MR,
    (Op.STORE_DST, State.RW): State.MR,
    (Op.STORE_SRC, State.MR): State.RW,
    (Op.STORE_SRC, State.RW): State.RW,
    (Op.PUSH, State.MR): State.OS,
    (Op.PUSH, State.RW): State.OS,
    (Op.POP, State.RW): State.OS,
}

_WRONG_RELEASE = {
    (Op.PUSH, True): "push() is for reserve() blocks; a wait() block is closed with pop()",
    (Op.POP, False): "pop() is for wait() blocks; a reserve() block is closed with push()",
}


def _explain(block, op: Op, state: State) -> str:
    desc = block.describe()
    if state == State.OS:
        return f"{OP_TEXT[op]} on {desc}: the block is no longer active (it was pushed or popped)"
    if op == Op.STORE_SRC and state == State.MW:
        return (
            f"{desc} is read while in state MW ({STATE_MEANING[State.MW]}); "
            "store into it before reading it"
        )
    if op in (Op.STORE_SRC, Op.COPY_SRC) and state == State.NAW:
        return f"{desc} is read while a copy is still writing it (state NAW); wait for the transfer first"
    if op in (Op.STORE_DST, Op.COPY_DST) and state in (State.NAW, State.ROR):
        return (
            f"copy lock error: {desc} is written while a transfer is still "
            f"{'writing' if state == State.NAW else 'reading'} it (state {state.name}); "
            "wait for the transfer first"
        )
    allowed = ALLOWED[block.context].get(state, frozenset())
    nxt = ", ".join(OP_TEXT[o] for o in sorted(allowed)) or "nothing"
    return (
        f"{OP_TEXT[op]} is not allowed on {desc} in state {state.name} ({STATE_MEANING[state]}); "
        f"next allowed: {nxt}"
    )


def declared_unused(state: State, is_reserve: bool) -> State:
    """The state of a block whose pop names its kernel (``blk.pop(kernel=...)``, reference
    C.10): a waited block still to be read (MR) is declared unused, nothing to read (RW),
    so it may be popped unread.  Used by the interpreter and the compiled engine alike."""
    return State.RW if state == State.MR and not is_reserve else state


def check_and_apply(block, op: Op) -> None:
    """Validate ``op`` on ``block`` (its ``state``, ``ror``, ``context``) and advance it."""
    state = block.state
    is_wait = block.context in (Context.DM_WAIT, Context.CK_WAIT)
    wrong = _WRONG_RELEASE.get((op, is_wait))
    if wrong is not None and state != State.OS:
        raise BLOCK_STATE.violation(f"{wrong} ({block.describe()})")
    allowed = ALLOWED[block.context].get(state)
    if allowed is None or op not in allowed:
        raise BLOCK_STATE.violation(_explain(block, op, state))
    if op == Op.COPY_SRC:
        block.ror = block.ror + 1 if state == State.ROR else 1
        block.state = State.ROR
        return
    if op == Op.TX_WAIT and state == State.ROR:
        block.ror -= 1
        if block.ror == 0:
            block.state = State.RW
        return
    block.state = TRANSITIONS[(op, state)]
