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

A net in which some node is a source and a destination (the spec's scatter-gather: every
node multicasts to its column, itself included, and only then receives) cannot wait for
its receivers: the send completes without them (spec §Pipe, "copy blk to pipe"; the
interpreter's ``lang.pipes``).  Its pipes are *staged*:

* the sender's ``wait()`` waits until every destination has taken the previous block of
  the pipe (the *consumed* semaphore at the source, created at the destination count, so
  the first send does not wait), copies the block into the pipe's staging slot in its own
  L1 (the bytes leave the block, as the interpreter's send copies them when issued),
  publishes the slot's address in each destination's mailbox word and increments each
  destination's *ready* semaphore;
* the receiver's ``wait()`` waits for *ready*, reads the staged block from the source
  into its block (``noc_async_read``), and increments the source's *consumed*;
* the sending kernel, when it ends, waits until its last staged blocks are taken (their
  L1 must stay put until then); a send nothing receives is a deadlock there, naming the
  pipe, as the rendezvous's send wait is.

So per (pipe, destination) blocks arrive in send order, as in the interpreter's channel;
the difference is capacity: one staged block per pipe, so a second send on a pipe waits
until every destination has taken the first (the interpreter's channel is unbounded; on
hardware the sender likewise waits for capacity credits, reference D.3 CA/CC).

Each pipe uses two program semaphores (within the target's 16) and one mailbox word
per destination in a compiler L1 region.  One transfer per pipe and kernel may be in
flight at a time (wait it before the next copy on that pipe).  A multicast pipe is
delivered as one write (or read) per destination (the interpreter issues one multicast:
the bytes are the same, the trace shows more events).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass

from tilewright.compiler.backend.lower import scalars as S
from tilewright.compiler.backend.lower.blocks import Handle
from tilewright.compiler.backend.lower.protocol import apply_state, block_of, copy_start
from tilewright.compiler.backend.lower.resources import mailbox_cb, staging_cb
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

__all__ = [
    "PipeSync",
    "drain_staged",
    "dual_role_nodes",
    "finish_send",
    "net_method",
    "pipe_copy",
    "pipe_sync",
    "plan_pipes",
]

_MAIL_STRIDE = 16


@dataclass(frozen=True, slots=True)
class PipeSync:
    """The synchronisation words of one pipe: two semaphores and the mailbox slots."""

    posted: int  # semaphore id at the source: receives posted (staged: blocks consumed)
    done: int  # semaphore id at each destination: deliveries (staged: blocks ready)
    slot: int  # the first destination's mailbox word (index into the mailbox CB)
    staged: bool = False  # the send does not wait for its receivers (module docstring)
    destinations: int = 1

    def initial(self, sem: int) -> int:
        """The semaphore's value when the program starts: a staged pipe's slot is free."""
        return self.destinations if self.staged and sem == self.posted else 0


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
        staged = bool(dual_role_nodes(net))
        for index, pipe in enumerate(net.pipes):
            if len(free) < 2:
                world.options["pipe_error"] = (
                    f"pipe synchronisation needs two semaphores per pipe; the {NUM_SEMAPHORES} "
                    "semaphores of a node are used up"
                )
                return
            dests = len(pipe.dst_nodes())
            table[(position, index)] = PipeSync(free.pop(0), free.pop(0), slots, staged, dests)
            slots += len(pipe.dst_nodes())
    world.options["pipe_sync"] = table
    world.options["mail_slots"] = slots


def dual_role_nodes(net) -> set[tuple[int, int]]:
    """The nodes that are a source and a destination of ``net`` (its pipes are staged)."""
    return {p.src_node() for p in net.pipes} & {n for p in net.pipes for n in p.dst_nodes()}


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
    _open(lw, ref, node)
    if not apply_state(lw, blk, Op.COPY_DST):
        return HandleRef(-1)
    _sites(lw).setdefault((ref.net, ref.index, "recv"), set()).add(
        (held.dfb.shape, held.dfb.data_format)
    )
    sync = pipe_sync(lw, ref.net, ref.index)
    if sync.staged:  # the receive's wait takes the staged block (finish_send)
        return _handle(lw, blk, "recv", ref)
    src = lw.world.device.core(*ref.src)
    mailbox = _own_mailbox(lw, ref, sync)
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


def _own_mailbox(lw, ref: PipeRef, sync: PipeSync) -> Expr:
    """The mailbox word of the running node, a destination of ``ref``."""
    x, y = _me(lw)
    width = ref.dst_hi[0] - ref.dst_lo[0] + 1
    d = S.binary(
        "add",
        S.binary("mul", S.binary("sub", y, Const(ref.dst_lo[1], Ty.I64)), Const(width, Ty.I64)),
        S.binary("sub", x, Const(ref.dst_lo[0], Ty.I64)),
    )
    return _mailbox(lw, S.binary("add", Const(sync.slot, Ty.I64), d))


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
    if sync.staged:
        _finish_staged(lw, h, ref, pipe, sync)
        return
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
    _trace_delivery(lw, h, pipe, held.dfb.block_bytes)
    for x, y in dests:
        core = device.core(x, y)
        lw.emit(
            "sem.inc",
            u32(core.noc_x),
            u32(core.noc_y),
            Intrinsic("semaphore", (u32(sync.done),), Ty.U32),
            u32(1),
        )


def _trace_delivery(lw, h: Handle, pipe, nbytes: int) -> None:
    """The interpreter's span of the delivery (lang.pipes): one per send, on the sender."""
    kind = "multicast" if pipe.multicast else "pipe write"
    args = {"pipe": repr(pipe), "bytes": nbytes, "destinations": len(pipe.dst_nodes())}
    fmt = printf_format(json.dumps(args, separators=(",", ":")))
    lw.emit("trace.span", kind, copy_start(lw, h.hid), "*", fmt, ())


def _held_block(lw, h: Handle):
    held = lw.tracker.held.get(h.site) if h.site is not None else None
    if held is None or held.addr is None:
        raise lw.fail(f"a pipe {h.direction} whose block is no longer held when it is waited")
    return held


def _staging_slot(lw, ref: PipeRef, nbytes: int) -> Expr:
    """The L1 address of pipe ``ref``'s staging slot in this kernel's staging CB.  Only the
    pipes of one source node share a node's CB, so slots are laid out per source node."""
    slots: dict[tuple[int, int], int] = lw.extra.setdefault("staging_slots", {})
    ends: dict[tuple[int, int], int] = lw.extra.setdefault("staging_ends", {})
    offset = slots.get((ref.net, ref.index))
    if offset is None:
        offset = slots[(ref.net, ref.index)] = ends.get(ref.src, 0)
        ends[ref.src] = offset + -(-nbytes // _MAIL_STRIDE) * _MAIL_STRIDE
        lw.extra["staging_bytes"] = max(ends.values())
    base = S.to_type(Intrinsic("write_ptr", (u32(staging_cb(lw)),), Ty.U32), Ty.I64)
    return S.to_type(S.binary("add", base, Const(offset, Ty.I64)), Ty.U32)


def _finish_staged(lw, h: Handle, ref: PipeRef, pipe, sync: PipeSync) -> None:
    """The wait of a staged pipe copy (module docstring): the sender stages and signals
    without waiting for its receivers; the receiver takes the staged block."""
    device = lw.world.device
    src = device.core(*ref.src)
    held = _held_block(lw, h)
    nbytes = held.dfb.block_bytes
    consumed = Intrinsic("semaphore", (u32(sync.posted),), Ty.U32)
    ready = Intrinsic("semaphore", (u32(sync.done),), Ty.U32)
    if h.direction == "recv":
        _note(lw, sync.done, 1, receive_wait_text(pipe, "{node}"))
        lw.emit("sem.wait", ready, u32(1), "ge")
        lw.emit("sem.set", ready, u32(0))
        staged = lw.temp("pipe_src", Ty.U32)
        lw.emit("set", staged, Intrinsic("l1_word", (_own_mailbox(lw, ref, sync),), Ty.U32))
        lw.emit("noc.read", u32(src.noc_x), u32(src.noc_y), staged, held.addr, u32(nbytes))
        lw.emit("noc.read_barrier")
        lw.emit("sem.inc", u32(src.noc_x), u32(src.noc_y), consumed, u32(1))
        return
    dests = pipe.dst_nodes()
    _note(lw, sync.posted, len(dests), send_wait_text(pipe, "{node}", sorted(dests)))
    lw.emit("sem.wait", consumed, u32(len(dests)), "ge")
    lw.emit("sem.set", consumed, u32(0))
    slot = _staging_slot(lw, ref, nbytes)
    lw.emit("noc.write", held.addr, u32(src.noc_x), u32(src.noc_y), slot, u32(nbytes))
    lw.emit("noc.write_barrier")
    _trace_delivery(lw, h, pipe, nbytes)
    for d, (x, y) in enumerate(dests):
        core = device.core(x, y)
        word = _mailbox(lw, Const(sync.slot + d, Ty.I64))
        lw.emit("noc.inline_write", u32(core.noc_x), u32(core.noc_y), word, slot)
        lw.emit("sem.inc", u32(core.noc_x), u32(core.noc_y), ready, u32(1))


def drain_staged(lw) -> None:
    """At the end of a kernel: wait until every destination took the last block staged on
    each pipe this kernel sends on (a node that sent none finds its slot free)."""
    if lw.tracker.dead:  # the kernel raised on every path: it never gets here
        return
    for net, index in sorted(lw.extra.get("staging_slots", {})):
        sync = pipe_sync(lw, net, index)
        pipe = _net_of(lw.world, net).pipes[index]
        dests = sorted(pipe.dst_nodes())
        _note(lw, sync.posted, len(dests), send_wait_text(pipe, "{node}", dests))
        consumed = Intrinsic("semaphore", (u32(sync.posted),), Ty.U32)
        lw.emit("sem.wait", consumed, u32(len(dests)), "ge")
