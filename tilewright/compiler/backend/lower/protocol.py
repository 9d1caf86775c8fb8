"""DFB acquisitions, releases and stores in kernel code (spec §Dataflow buffers, §Blocks).

``dfb.reserve()`` / ``dfb.wait()`` become ``cb_reserve_back`` / ``cb_wait_front`` of one
more block than the kernel already holds (cumulative page counts, as the interpreter
asks the CB); ``push()`` / ``pop()`` release the oldest held block with
``cb_push_back`` / ``cb_pop_front``; a ``with`` releases at its end; a kernel releases
what it still holds when it ends (the compiler's auto-sync).  Every rule the
interpreter checks at these points -- one held block per DFB on data-movement kernels,
the DFB's capacity, release order, block states, store shapes -- is the interpreter's
own function (``lang.rules.dfb``, ``lang.blockstate``), decided here at compile time
(``violations.holds``); one producer and one consumer per DFB is checked across
kernels (``compile._check_roles``).
"""

from __future__ import annotations

import ast
from dataclasses import replace

from tilewright.compiler.backend.lower import compute as C
from tilewright.compiler.backend.lower import scalars as S
from tilewright.compiler.backend.lower.blocks import Handle, Held, probe
from tilewright.compiler.backend.lower.exprs import build_node, emit_store
from tilewright.compiler.backend.lower.values import (
    BlockRef,
    DFBInfo,
    ExprRef,
    Scalar,
    Static,
    Value,
    python_type_name,
    slice_text,
)
from tilewright.compiler.backend.lower.violations import holds, violated
from tilewright.errors import TilewrightError
from tilewright.kir.ir import Ty, Var, WaitNote
from tilewright.lang import blockstate
from tilewright.lang.blockstate import BLOCK_STATE, Op, State
from tilewright.lang.rules import copy as copy_rules
from tilewright.lang.rules import dfb as rules
from tilewright.lang.rules.registry import printf_format

__all__ = [
    "acquire",
    "release",
    "exit_block",
    "release_all",
    "name_block",
    "block_of",
    "apply_state",
    "block_op",
    "store",
    "accumulate",
    "wait_handle",
]

_MW = frozenset({(State.MW, 0)})
_MR = frozenset({(State.MR, 0)})


def block_of(lw, ref: BlockRef) -> Held:
    held = lw.tracker.held.get(ref.site) or lw.extra.setdefault("released", {}).get(ref.site)
    if held is None:
        raise lw.fail("a block that is not acquired on every path here")
    return held


def name_block(lw, site: int, name: str) -> None:
    held = lw.tracker.held.get(site)
    if held is not None and held.name is None:
        lw.tracker.update(site, name=name)


def _roles(lw) -> dict[int, set[str]]:
    return lw.extra.setdefault("roles", {})


def apply_state(lw, ref: BlockRef, op: Op) -> bool:
    """Apply a block-state transition; False when it fails (a ``fail`` op was emitted)."""
    released = lw.extra.setdefault("released", {})
    held = lw.tracker.held.get(ref.site)
    if held is None:
        gone = released.get(ref.site)
        if gone is None:
            raise lw.fail("a block that is not acquired on every path here")
        outcome = probe(gone, op, lw.tracker.active)
    else:
        outcome = probe(held, op, lw.tracker.active)
    if outcome.mixed:
        who = (held or released[ref.site]).describe()
        raise lw.fail(
            f"the state of {who} depends on the path taken before this point; the compiled "
            "engine checks block states statically"
        )
    if outcome.states is None:
        violated(lw, BLOCK_STATE.violation(outcome.error or "block state error"))
        return False
    if held is not None:
        lw.tracker.update(ref.site, states=outcome.states)
    return True


def acquire(lw, dfb: DFBInfo, reserve: bool, node: ast.AST) -> Value:
    """``dfb.reserve()`` / ``dfb.wait()``: the acquired block."""
    compute = lw.kin.kind == "compute"
    side = rules.RESERVE if reserve else rules.WAIT
    _roles(lw).setdefault(dfb.index, set()).add(side.role)
    queue = lw.tracker.queue(dfb, reserve)
    held_now = [lw.tracker.held[site] for site in queue]
    need = (len(queue) + 1) * dfb.block_pages
    # a violation fails here; what follows is never reached but keeps the lowering going
    holds(lw, rules.check_acquire, dfb, side, lw.kin.name, compute, held_now, need, dfb.num_pages)
    need = min(need, dfb.num_pages)
    _note_wait(lw, dfb, need)
    site = lw.new_site()
    addr = None if compute else lw.temp("blk", Ty.U32)  # data movement: the block's L1 address
    # in blocks: the `cb` pass writes the cumulative pages and the address (passes/cbproto.py)
    lw.emit("dfb.reserve" if reserve else "dfb.wait", dfb.index, need // dfb.block_pages, addr)
    held = Held(site, dfb, reserve, compute, lw.tracker.uniform(_MW if reserve else _MR), addr=addr)
    lw.tracker.acquire(held)
    lw.extra.setdefault("cbs", set()).add(dfb.index)
    return BlockRef(site)


def _note_wait(lw, dfb: DFBInfo, pages: int) -> None:
    """What the kernel holds while it may block here (the interpreter's deadlock report)."""
    holds: list[str] = []
    for d in lw.world.dfbs:
        for reserve in (True, False):
            for site in lw.tracker.queue(d, reserve):
                held = lw.tracker.held[site]
                states = {s for on, s in zip(lw.tracker.active, held.states) if on}
                if len(states) != 1 or len(next(iter(states))) != 1:
                    return
                ((state, _ror),) = next(iter(states))
                holds.append(f"holds {held.describe()} in state {state.name}")
    line = lw.loc.line if lw.loc is not None else 0
    notes = lw.extra.setdefault("waits", {})
    key = (line, dfb.index, pages)
    note = WaitNote(line, dfb.index, pages, dfb.position, tuple(holds))
    if notes.get(key, note) != note:
        notes[key] = None  # two sites on one line that hold different blocks: say nothing
    else:
        notes[key] = note


def _complete(lw, held: Held) -> bool:
    """Wait the transfers still pending on a block (the interpreter does it at release)."""
    ok = True
    for hid in held.pending:
        ok = wait_handle(lw, hid) and ok
    return ok


def copy_start(lw, hid: int) -> Var:
    """The local holding the clock at which copy ``hid`` was issued (its trace span's start)."""
    return lw.local(f"tw_copy{hid}", Ty.U64)


def _trace_copy(lw, h: Handle, hid: int) -> None:
    """The interpreter's ``copy`` trace span (``lang.copy``): issue to wait, what it moved."""
    text, values = slice_text(h.slice)  # type: ignore[arg-type]
    block = block_of(lw, BlockRef(h.site)).describe() if h.site is not None else "a block"
    what = copy_rules.transfer_what(h.direction, text, block)
    wide = tuple(S.to_type(v, Ty.I64) for v in values)
    lw.emit("trace.span", "copy", copy_start(lw, hid), "what", printf_format(what), wide)


def wait_handle(lw, hid: int, node: ast.AST | None = None) -> bool:
    """``handle.wait()``: the NoC barrier, then the block's TX_WAIT transition."""
    h = lw.tracker.handles.get(hid)
    if h is None:
        return True  # a copy that already failed
    if h.waited:
        _waited_twice(lw, h)
        return False
    lw.tracker.handles[hid] = replace(h, waited=True)
    if h.direction == "read":
        lw.emit("noc.read_barrier")
    elif h.direction == "write":
        lw.emit("noc.write_barrier")
    else:
        lw.hooks.finish_send(lw, h)
    if h.site is None:
        if h.direction in ("read", "write"):
            _trace_copy(lw, h, hid)
        return True
    if h.site in lw.tracker.held:
        held = lw.tracker.held[h.site]
        lw.tracker.update(h.site, pending=tuple(p for p in held.pending if p != hid))
    ok = apply_state(lw, BlockRef(h.site), Op.TX_WAIT)
    if ok and h.direction in ("read", "write"):
        _trace_copy(lw, h, hid)
    return ok


def _waited_twice(lw, h: Handle) -> None:
    """The interpreter's error for a handle waited again (``lang.rules.copy``)."""
    if h.direction == "send":
        holds(lw, copy_rules.check_not_waited, True, copy_rules.PIPE_SEND_WAITED)
        return
    if h.direction == "recv":
        holds(lw, copy_rules.check_not_waited, True, copy_rules.RECEIVE_WAITED)
        return
    text, values = slice_text(h.slice)  # type: ignore[arg-type]
    block = block_of(lw, BlockRef(h.site)).describe() if h.site is not None else "a block"
    what = copy_rules.transfer_what(h.direction, text, block)
    try:
        copy_rules.check_not_waited(True, copy_rules.handle_waited(what))
    except TilewrightError as exc:
        violated(lw, exc, values)


def release(lw, ref: BlockRef, push: bool, *, declared_unused: bool = False) -> None:
    """``blk.push()`` / ``blk.pop()`` (``declared_unused``: ``pop(kernel=...)``, see
    ``lang.blockstate.declared_unused``)."""
    held = block_of(lw, ref)
    if declared_unused and ref.site in lw.tracker.held:
        states = tuple(
            frozenset((blockstate.declared_unused(st, held.reserve), n) for st, n in node)
            for node in held.states
        )
        lw.tracker.update(ref.site, states=states)
    if ref.site in lw.tracker.held:
        queue = lw.tracker.queue(held.dfb, held.reserve)
        position = queue.index(ref.site) if held.reserve == push else None
        oldest = lw.tracker.held[queue[0]]
        if not holds(lw, rules.check_release_order, held, position, oldest, push):
            return
        _complete(lw, held)
    if not apply_state(lw, ref, Op.PUSH if push else Op.POP):
        return
    held = lw.tracker.held[ref.site]
    lw.emit("dfb.push" if push else "dfb.pop", held.dfb.index)
    lw.tracker.release(ref.site)
    lw.extra.setdefault("released", {})[ref.site] = Held(
        held.site,
        held.dfb,
        held.reserve,
        held.compute,
        lw.tracker.uniform(frozenset({(State.OS, 0)})),
        held.name,
    )


def exit_block(lw, ref: BlockRef) -> None:
    """The end of ``with dfb.reserve() / wait() as blk``: release unless already released
    (or the path ended inside the ``with``)."""
    if ref.site not in lw.tracker.held or lw.tracker.dead:
        return
    held = lw.tracker.held[ref.site]
    release(lw, ref, held.reserve)


def release_all(lw) -> None:
    """At the kernel's end: release what it holds (DFB order, reserved then waited)."""
    if lw.tracker.dead:  # the kernel raised on every path: it never gets here
        return
    for dfb in lw.world.dfbs:
        for reserve in (True, False):
            while lw.tracker.queue(dfb, reserve):
                site = lw.tracker.queue(dfb, reserve)[0]
                before = len(lw.region)
                release(lw, BlockRef(site), reserve)
                if site in lw.tracker.held:  # a failed release: the kernel stops there
                    del lw.region[before + 1 :]
                    return


def legacy_release(lw, dfb: DFBInfo, push: bool) -> None:
    """Legacy ``dfb.push()`` / ``dfb.pop()``: the oldest held block of that side."""
    queue = lw.tracker.queue(dfb, push)
    if holds(lw, rules.check_legacy_release, dfb, push, len(queue)):
        release(lw, BlockRef(queue[0]), push)


# -- block expressions ------------------------------------------------------------------------


def _read(lw, v: Value) -> C.Node:
    """A block-expression operand (reading a block is the STORE_SRC transition)."""
    if isinstance(v, ExprRef):
        return v.node  # type: ignore[return-value]
    if isinstance(v, BlockRef):
        if not _compute_only(lw, rules.READ):
            raise _Stop()
        held = block_of(lw, v)
        _check_compute_dfb(lw, held.dfb)
        if not apply_state(lw, v, Op.STORE_SRC):
            raise _Stop()
        held = lw.tracker.held.get(v.site, held)
        return C.Leaf(held.dfb.shape, v.site, held.dfb.index, held.version)
    if isinstance(v, Scalar) and v.expr.ty is not Ty.BOOL:
        return C.Lit((), v.expr)
    kind = python_type_name(v)
    if kind is None:
        raise lw.fail("a block expression operand that is not a block, expression or number")
    violated(lw, rules.operand_violation(kind))
    raise _Stop()


_COMPUTE_FORMATS = frozenset({"Float16_b", "Float32", "Float16", "Bfp8_b", "Bfp4_b", "Bfp2_b"})


def _check_compute_dfb(lw, dfb: DFBInfo) -> None:
    """Block math runs on 32x32 tiles of float formats in the compiled engine."""
    if not dfb.tiled or tuple(dfb.tile) != (32, 32):
        raise lw.fail(
            f"block math on DFB '{dfb.name}' ({'row-major' if not dfb.tiled else f'{dfb.tile[0]}x{dfb.tile[1]} tiles'}); "
            "the compiled engine computes on 32x32 tiles"
        )
    if dfb.data_format not in _COMPUTE_FORMATS:
        raise lw.fail(f"block math on DFB '{dfb.name}' of format {dfb.data_format}")


class _Stop(Exception):
    """A fail op was emitted: the rest of the expression never runs."""


def block_op(lw, name: str, operands: list[Value], extra: list[Value], params: dict, node) -> Value:
    """Apply registry op ``name`` (reads, shape rule, parameter binding) -> an ExprRef."""
    if not _compute_only(lw, rules.expression(name)):
        return ExprRef(None)
    try:
        nodes = [_read(lw, v) for v in operands]
    except _Stop:
        return ExprRef(None)
    return build_node(lw, name, nodes, extra, params, node)


def _compute_only(lw, what: str) -> bool:
    return holds(lw, rules.check_compute_only, what, lw.kin.name, lw.kin.kind == "compute")


def _dead(value: Value) -> bool:
    return isinstance(value, ExprRef) and value.node is None


def store(lw, ref: BlockRef, value: Value, node: ast.AST, *, acc: bool = False) -> None:
    """``blk.store(expr)``."""
    if not _compute_only(lw, rules.STORE):
        return
    if _dead(value):
        return
    if isinstance(value, BlockRef):
        try:
            tree = _read(lw, value)
        except _Stop:
            return
    elif isinstance(value, ExprRef):
        tree = value.node  # type: ignore[assignment]
    else:
        kind = python_type_name(value)
        if kind is None:
            raise lw.fail("store() of something that is not a block expression", node)
        violated(lw, rules.operand_violation(kind, stored=True))
        return
    held = block_of(lw, ref)
    _check_compute_dfb(lw, held.dfb)
    if not holds(lw, rules.check_store_shape, held, tree.shape, held.dfb.shape):
        return
    l1_acc = acc
    if not acc and isinstance(tree, C.Binary) and tree.op == "add":
        # blk.store(blk + e) / blk.store(e + blk): packer accumulation into the block
        for mine, other in ((tree.a, tree.b), (tree.b, tree.a)):
            if (
                isinstance(mine, C.Leaf)
                and mine.site == ref.site
                and ref.site not in {leaf.site for leaf in C.leaves(other)}
            ):
                tree, l1_acc = other, True
                break
    if not apply_state(lw, ref, Op.STORE_DST):
        return
    held = lw.tracker.held[ref.site]
    if not held.reserve:
        raise lw.fail(
            f"storing into {held.describe()} (a waited block); the compiled engine packs only "
            "into reserved blocks"
        )

    emit_store(lw, tree, held, l1_acc, node)
    lw.tracker.update(ref.site, version=held.version + 1)


def accumulate(lw, ref: BlockRef, rhs: Value, node: ast.AST) -> None:
    """``blk += expr``: the interpreter reads blk, adds, and stores; here: packer L1
    accumulation into the reserved block."""
    if not _compute_only(lw, rules.expression("add")):
        return
    if _dead(rhs):
        return
    total = block_op(lw, "add", [ref, rhs], [], {}, node)
    if _dead(total):
        return
    assert isinstance(total, ExprRef)
    tree = total.node
    assert isinstance(tree, C.Binary)
    store(lw, ref, ExprRef(tree), node)


def static_obj(value: Value) -> object:
    return value.obj if isinstance(value, Static) else None
