"""Pipes and pipe nets in kernel code (spec §Pipes): roles, callbacks and pipe copies.

``net.if_src(cb)`` / ``net.if_dst(cb)`` become, per pipe of the net, ``if`` the running
node is the pipe's source / one of its destinations (known per node, so the block
states of each node are followed exactly): the callback is inlined there with that
pipe.  A pipe transfer is a rendezvous, as in the interpreter:

* the receiver's ``ttl.copy(pipe, blk)`` posts its block's L1 address into the
  sender's mailbox word for this (pipe, destination) and increments the sender's
  *posted* semaphore of the pipe; its ``wait()`` waits for its *done* semaphore and
  clears it;
* the sender's ``wait()`` (or the block's release) waits until every destination has
  posted, writes the block into each destination's block (``noc_async_write`` to the
  posted address), waits for the writes, and increments each destination's *done*
  semaphore.

Each pipe uses two program semaphores (within the target's 16) and one mailbox word
per destination in a compiler L1 region.  One transfer per pipe and kernel may be in
flight at a time (wait it before the next copy on that pipe).  A multicast pipe is
delivered as one write per destination (the interpreter issues one multicast: the
bytes are the same, the trace shows more events).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass

from tilewright.compiler.backend.lower import scalars as S
from tilewright.compiler.backend.lower.blocks import Handle
from tilewright.compiler.backend.lower.protocol import apply_state, block_of, copy_start
from tilewright.compiler.backend.lower.resources import mailbox_cb
from tilewright.compiler.backend.lower.values import (
    BlockRef,
    FuncRef,
    HandleRef,
    NetRef,
    PipeRef,
    Scalar,
    Static,
    Value,
)
from tilewright.compiler.backend.lower.violations import holds
from tilewright.device.device import NUM_SEMAPHORES
from tilewright.kir.ir import Const, Expr, Intrinsic, SemNote, Ty, u32
from tilewright.lang.blockstate import Op
from tilewright.lang.pipes import receive_wait_text, send_wait_text
from tilewright.lang.rules import copy as copy_rules
from tilewright.lang.rules import sync as sync_rules
from tilewright.lang.rules.registry import printf_format

__all__ = ["PipeSync", "pipe_copy", "finish_send", "net_method", "pipe_sync", "plan_pipes"]

_MAIL_STRIDE = 16


@dataclass(frozen=True, slots=True)
class PipeSync:
    """The synchronisation words of one pipe: two semaphores and the mailbox slots."""

    posted: int  # semaphore id at the source: receives posted
    done: int  # semaphore id at each destination: deliveries
    slot: int  # the first destination's mailbox word (index into the mailbox CB)


def _pipes(net: NetRef) -> list:
    return list(net.net.pipes)  # type: ignore[attr-defined]


def plan_pipes(world) -> None:
    """Semaphores and mailbox slots for every pipe of the operation's nets (before lowering)."""
    nets = sorted({ref.position: ref.net for ref in world.nets.values()}.items())
    if not nets:
        return
    used = {int(s.sem_id) for s in world.setups[0].semaphores}
    free = [i for i in range(NUM_SEMAPHORES) if i not in used]
    table: dict[tuple[int, int], PipeSync] = {}
    slots = 0
    for position, net in nets:
        for index, pipe in enumerate(net.pipes):
            if len(free) < 2:
                world.options["pipe_error"] = (
                    f"pipe synchronisation needs two semaphores per pipe; the {NUM_SEMAPHORES} "
                    "semaphores of a node are used up"
                )
                return
            table[(position, index)] = PipeSync(free.pop(0), free.pop(0), slots)
            slots += len(pipe.dst_nodes())
    world.options["pipe_sync"] = table
    world.options["mail_slots"] = slots


def pipe_sync(lw, net: int, index: int) -> PipeSync:
    """The semaphores and mailbox slots of pipe ``index`` of net ``net``."""
    error = lw.world.options.get("pipe_error")
    if error is not None:
        raise lw.fail(error)
    mailbox_cb(lw)
    return lw.world.options["pipe_sync"][(net, index)]


def _mailbox(lw, slot: Expr) -> Expr:
    """The L1 address of mailbox word ``slot`` (the same on every node)."""
    base = S.to_type(Intrinsic("write_ptr", (u32(mailbox_cb(lw)),), Ty.U32), Ty.I64)
    return S.to_type(
        S.binary("add", base, S.binary("mul", slot, Const(_MAIL_STRIDE, Ty.I64))), Ty.U32
    )


def _net_of(world, position: int):
    for ref in world.nets.values():
        if ref.position == position:
            return ref.net
    raise KeyError(position)


def _me(lw) -> tuple[Expr, Expr]:
    cols, rows = lw.world.grid
    x: Expr = (
        Const(0, Ty.I64) if cols == 1 else S.to_type(Intrinsic("logical_x", (), Ty.U32), Ty.I64)
    )
    y: Expr = (
        Const(0, Ty.I64) if rows == 1 else S.to_type(Intrinsic("logical_y", (), Ty.U32), Ty.I64)
    )
    return x, y


def _at(lw, xy: tuple[int, int]) -> Expr:
    x, y = _me(lw)
    return S.logical(
        "and", S.compare("eq", x, Const(xy[0], Ty.I64)), S.compare("eq", y, Const(xy[1], Ty.I64))
    )


def _within(lw, lo: tuple[int, int], hi: tuple[int, int]) -> Expr:
    x, y = _me(lw)
    parts = [
        S.compare("le", Const(lo[0], Ty.I64), x),
        S.compare("le", x, Const(hi[0], Ty.I64)),
        S.compare("le", Const(lo[1], Ty.I64), y),
        S.compare("le", y, Const(hi[1], Ty.I64)),
    ]
    out = parts[0]
    for p in parts[1:]:
        out = S.logical("and", out, p)
    return out


def _ref(net: NetRef, index: int, pipe, role: str) -> PipeRef:
    nodes = pipe.dst_nodes()
    lo = (min(n[0] for n in nodes), min(n[1] for n in nodes))
    hi = (max(n[0] for n in nodes), max(n[1] for n in nodes))
    return PipeRef(net.position, index, role, pipe.src_node(), lo, hi, bool(pipe.multicast))


def net_method(lw, net: NetRef, name: str, node: ast.Call) -> Value:
    pipes = _pipes(net)
    if name in ("is_src", "is_dst", "is_active", "destination_count"):
        if node.args or node.keywords:
            raise lw.fail(f"net.{name}() takes no arguments", node)
        src = [_at(lw, p.src_node()) for p in pipes]
        dst = [_within(lw, *_rect(p)) for p in pipes]
        if name == "destination_count":
            total: Expr = Const(0, Ty.I64)
            for d in dst:
                total = S.binary("add", total, S.to_type(d, Ty.I64))
            return Scalar(total)
        terms = src if name == "is_src" else dst if name == "is_dst" else src + dst
        out: Expr = Const(False, Ty.BOOL)
        for t in terms:
            out = S.logical("or", out, t)
        return Scalar(out)
    compute = lw.kin.kind == "compute"
    if not holds(lw, copy_rules.check_dm_only, f"net.{name}", lw.kin.name, compute):
        return Static(None)
    if len(node.args) != 1 or node.keywords:
        raise lw.fail(f"net.{name} takes one callback", node)
    callback = lw.expr(node.args[0])
    if not isinstance(callback, FuncRef):
        raise lw.fail(f"a net.{name} callback that is not a function defined in the kernel", node)
    role = "src" if name == "if_src" else "dst"
    for index, pipe in enumerate(pipes):
        cond = _at(lw, pipe.src_node()) if role == "src" else _within(lw, *_rect(pipe))
        ref = _ref(net, index, pipe, role)
        lw.branch(
            cond,
            lambda ref=ref: lw.inline(callback, [ref], node),
            None,
            node,
            set(),
        )
    return Static(None)


def _rect(pipe) -> tuple[tuple[int, int], tuple[int, int]]:
    nodes = pipe.dst_nodes()
    return (min(n[0] for n in nodes), min(n[1] for n in nodes)), (
        max(n[0] for n in nodes),
        max(n[1] for n in nodes),
    )


def _pipe_obj(lw, ref: PipeRef):
    return _net_of(lw.world, ref.net).pipes[ref.index]


def _sites(lw) -> dict:
    return lw.extra.setdefault("pipe_sites", {})


def pipe_copy(lw, src: Value, dst: Value, node: ast.AST) -> Value:
    """``ttl.copy(block, pipe)`` (send) / ``ttl.copy(pipe, block)`` (receive)."""
    if isinstance(dst, PipeRef) and isinstance(src, BlockRef):
        return _send(lw, src, dst, node)
    if isinstance(src, PipeRef) and isinstance(dst, BlockRef):
        return _receive(lw, src, dst, node)
    raise lw.fail("a pipe copy whose other side is not a block", node)


def _open(lw, ref: PipeRef, node: ast.AST) -> None:
    for h in lw.tracker.handles.values():
        if (
            not h.waited
            and isinstance(h.pipe, PipeRef)
            and (h.pipe.net, h.pipe.index) == (ref.net, ref.index)
        ):
            raise lw.fail(
                "a second transfer on a pipe before the first one is waited (wait each pipe copy "
                "before the next one on that pipe)",
                node,
            )


def _send(lw, blk: BlockRef, ref: PipeRef, node: ast.AST) -> Value:
    pipe = _pipe_obj(lw, ref)
    if not holds(lw, sync_rules.check_pipe_end, pipe, True, ref.role == "src"):
        return HandleRef(-1)
    _open(lw, ref, node)
    if not apply_state(lw, blk, Op.COPY_SRC):
        return HandleRef(-1)
    held = block_of(lw, blk)
    _sites(lw).setdefault((ref.net, ref.index, "send"), set()).add(
        (held.dfb.shape, held.dfb.data_format)
    )
    pipe_sync(lw, ref.net, ref.index)
    return _handle(lw, blk, "send", ref)


def _receive(lw, ref: PipeRef, blk: BlockRef, node: ast.AST) -> Value:
    pipe = _pipe_obj(lw, ref)
    if not holds(lw, sync_rules.check_pipe_end, pipe, False, ref.role == "src"):
        return HandleRef(-1)
    held = block_of(lw, blk)
    construct = copy_rules.RECEIVE_INTO_BLOCK
    if not holds(lw, copy_rules.check_copy_into, construct, held, held.reserve):
        return HandleRef(-1)
    net = _net_of(lw.world, ref.net)
    roles = {p.src_node() for p in net.pipes} & {n for p in net.pipes for n in p.dst_nodes()}
    if roles and any(k[0] == ref.net and k[2] == "send" for k in _sites(lw)):
        # Spec §Pipe (scatter-gather): a send completes without its receivers, so a kernel
        # may send and then receive on one net; the rendezvous protocol would hang there.
        raise lw.fail(
            f"a receive after a send on one pipe net whose node {min(roles)} is a source and a "
            "destination: its send must not wait for receivers (spec §Pipe scatter-gather), "
            "which the compiled rendezvous protocol does",
            node,
        )
    _open(lw, ref, node)
    if not apply_state(lw, blk, Op.COPY_DST):
        return HandleRef(-1)
    _sites(lw).setdefault((ref.net, ref.index, "recv"), set()).add(
        (held.dfb.shape, held.dfb.data_format)
    )
    sync = pipe_sync(lw, ref.net, ref.index)
    device = lw.world.device
    src = device.core(*ref.src)
    x, y = _me(lw)
    width = ref.dst_hi[0] - ref.dst_lo[0] + 1
    d = S.binary(
        "add",
        S.binary("mul", S.binary("sub", y, Const(ref.dst_lo[1], Ty.I64)), Const(width, Ty.I64)),
        S.binary("sub", x, Const(ref.dst_lo[0], Ty.I64)),
    )
    mailbox = _mailbox(lw, S.binary("add", Const(sync.slot, Ty.I64), d))
    assert held.addr is not None
    lw.emit("noc.inline_write", u32(src.noc_x), u32(src.noc_y), mailbox, held.addr)
    lw.emit(
        "sem.inc",
        u32(src.noc_x),
        u32(src.noc_y),
        Intrinsic("semaphore", (u32(sync.posted),), Ty.U32),
        u32(1),
    )
    return _handle(lw, blk, "recv", ref)


def _handle(lw, blk: BlockRef, direction: str, ref: PipeRef) -> Value:
    lw.handles += 1
    hid = lw.handles
    if direction == "send":  # the trace's pipe-write span starts at the send
        lw.emit("trace.clock", copy_start(lw, hid))
    lw.tracker.handles[hid] = Handle(hid, blk.site, direction, False, ref)
    if blk.site in lw.tracker.held:
        lw.tracker.update(blk.site, pending=(*lw.tracker.held[blk.site].pending, hid))
    return HandleRef(hid)


def _note(lw, sem: int, value: int, text: str) -> None:
    line = lw.loc.line if lw.loc is not None else 0
    addr = lw.world.device.semaphore_address(sem)
    lw.extra.setdefault("sem_notes", {})[(line, addr, value)] = SemNote(line, addr, value, text)


def finish_send(lw, h: Handle) -> None:
    """The wait of a pipe copy: the sender delivers, the receiver waits for the delivery."""
    ref = h.pipe
    assert isinstance(ref, PipeRef)
    pipe = _pipe_obj(lw, ref)
    sync = pipe_sync(lw, ref.net, ref.index)
    device = lw.world.device
    if h.direction == "recv":
        _note(lw, sync.done, 1, receive_wait_text(pipe, "{node}"))
        done = Intrinsic("semaphore", (u32(sync.done),), Ty.U32)
        lw.emit("sem.wait", done, u32(1), "ge")
        lw.emit("sem.set", done, u32(0))
        return
    dests = pipe.dst_nodes()
    _note(lw, sync.posted, len(dests), send_wait_text(pipe, "{node}", sorted(dests)))
    posted = Intrinsic("semaphore", (u32(sync.posted),), Ty.U32)
    lw.emit("sem.wait", posted, u32(len(dests)), "ge")
    lw.emit("sem.set", posted, u32(0))
    held = lw.tracker.held.get(h.site) if h.site is not None else None
    if held is None or held.addr is None:
        raise lw.fail("a pipe send whose block is no longer held when it is delivered")
    target = lw.temp("pipe_dst", Ty.U32)
    for d, (x, y) in enumerate(dests):
        core = device.core(x, y)
        slot = _mailbox(lw, Const(sync.slot + d, Ty.I64))
        lw.emit("set", target, Intrinsic("l1_word", (slot,), Ty.U32))
        lw.emit(
            "noc.write",
            held.addr,
            u32(core.noc_x),
            u32(core.noc_y),
            target,
            u32(held.dfb.block_bytes),
        )
    lw.emit("noc.write_barrier")
    # The interpreter's span of the delivery (lang.pipes): one per send, on the sender.
    kind = "multicast" if pipe.multicast else "pipe write"
    args = {"pipe": repr(pipe), "bytes": held.dfb.block_bytes, "destinations": len(dests)}
    fmt = printf_format(json.dumps(args, separators=(",", ":")))
    lw.emit("trace.span", kind, copy_start(lw, h.hid), "*", fmt, ())
    for x, y in dests:
        core = device.core(x, y)
        lw.emit(
            "sem.inc",
            u32(core.noc_x),
            u32(core.noc_y),
            Intrinsic("semaphore", (u32(sync.done),), Ty.U32),
            u32(1),
        )
