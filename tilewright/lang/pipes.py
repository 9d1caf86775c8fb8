"""Pipes and pipe nets (spec §Pipes; reference A.6, D.3).

``ttl.Pipe(src, dst)`` joins a source node to one destination node (unicast) or to a
rectangle of nodes given with slices (multicast).  ``ttl.PipeNet(pipes)`` groups
pipes of one kind; kernels call ``net.if_src(cb)`` / ``net.if_dst(cb)``, which run
``cb`` once per pipe record where this node is the source / a destination, with a
pipe identity that ``ttl.copy(block, pipe)`` sends on and ``ttl.copy(pipe, block)``
receives from.

Transfers go through a channel per (pipe, destination), in FIFO order.  A send takes
its block's bytes when it is issued and completes without waiting for its receivers
(spec §Pipe, "copy blk to pipe"): each destination gets the bytes when it has posted a
receive, one NoC write per send (a multicast for multicast pipes, one trace event).  So
the spec's scatter-gather -- every node of a column multicasts to the whole column,
itself included, and only then receives, the column's sends one after another -- runs
as the spec shows it, as tt-lang-sim runs it; multicast destinations of one net may
overlap.  Sends and receives return handles; ``ttl.wait_any(requests, start=)`` picks
the first completed receive in cyclic order.  A receive that nothing matches is
reported in the deadlock report while a kernel waits on it; a send or receive still
unmatched at the end of the operation is an error.
"""

from __future__ import annotations

import types
from collections import deque
from collections.abc import Callable, Iterable

from tilewright.device.engine import ACTIVE, WaitQueue, current_engine
from tilewright.device.formats import data_type_name
from tilewright.device.perf import costs, pipeline
from tilewright.device.perf import kernel as noc_time
from tilewright.errors import InterfaceError, KernelError, user_location
from tilewright.lang import state
from tilewright.lang.blockstate import Op, check_and_apply
from tilewright.lang.dfb import TensorBlock, current_kernel
from tilewright.lang.node import SETUP_STACK
from tilewright.lang.rules import sync as rules
from tilewright.lang.rules.copy import (
    PIPE_SEND_WAITED,
    RECEIVE_INTO_BLOCK,
    RECEIVE_WAITED,
    check_copy_into,
    check_dm_only,
    check_not_waited,
)
from tilewright.lang.rules.registry import shape_text

__all__ = [
    "Pipe",
    "PipeNet",
    "SrcPipeIdentity",
    "DstPipeIdentity",
    "ReceiveRequest",
    "ReadyReceive",
    "PipeSendHandle",
    "wait_any",
    "send",
    "receive",
    "check_unmatched",
    "send_wait_text",
    "receive_wait_text",
    "PIPE_TYPES",
]


def _coord(value: object, what: str) -> tuple[int | slice, ...]:
    """Normalise a node coordinate: an int, or a tuple of ints and (for ranges) slices."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    if isinstance(value, (tuple, list)) and value:
        out: list[int | slice] = []
        for i, v in enumerate(value):
            if isinstance(v, slice):
                if not (isinstance(v.start, int) and isinstance(v.stop, int)) or v.step not in (
                    None,
                    1,
                ):
                    raise InterfaceError(
                        f"{what}: slice {i} must have explicit int start and stop and step 1, got "
                        f"{v.start}:{v.stop}:{v.step}",
                        loc=user_location(),
                    )
                if not v.start < v.stop:
                    raise InterfaceError(
                        f"{what}: slice {i} must have start < stop, got {v.start}:{v.stop}",
                        loc=user_location(),
                    )
                out.append(slice(v.start, v.stop))
            elif isinstance(v, int) and not isinstance(v, bool):
                out.append(v)
            else:
                raise InterfaceError(
                    f"{what}: coordinate {i} must be an int or a slice, got {v!r}",
                    loc=user_location(),
                )
        return tuple(out)
    raise InterfaceError(
        f"{what}: expected a node coordinate (int or tuple), got {value!r}", loc=user_location()
    )


def _to_xy(coord: tuple) -> tuple[int, int]:
    if len(coord) == 1:
        return (coord[0], 0)
    return (coord[0], coord[1])


def _coord_text(coord: tuple) -> str:
    parts = [f"{c.start}..{c.stop - 1}" if isinstance(c, slice) else str(c) for c in coord]
    return "(" + ", ".join(parts) + ")"


class Pipe:
    """``ttl.Pipe(src, dst)``: unicast (``dst`` a node) or multicast (``dst`` a node range)."""

    def __class_getitem__(cls, item: object) -> types.GenericAlias:
        """``ttl.Pipe[ttl.DstT]`` (spec: ``ttl.Pipe[DstT](src, dst)``)."""
        return types.GenericAlias(cls, item)

    def __init__(self, src: object, dst: object) -> None:
        self.src = _coord(src, "ttl.Pipe src")
        if any(isinstance(c, slice) for c in self.src):
            raise InterfaceError("ttl.Pipe src must be one node, not a range", loc=user_location())
        self.dst = _coord(dst, "ttl.Pipe dst")
        if len(self.src) != len(self.dst):
            raise InterfaceError(
                f"ttl.Pipe: src {_coord_text(self.src)} and dst {_coord_text(self.dst)} have different ranks",
                loc=user_location(),
            )
        self.multicast = any(isinstance(c, slice) for c in self.dst)

    @property
    def rank(self) -> int:
        return len(self.src)

    def src_node(self) -> tuple[int, int]:
        return _to_xy(self.src)

    def dst_nodes(self) -> list[tuple[int, int]]:
        ranges = [
            range(c.start, c.stop) if isinstance(c, slice) else range(c, c + 1) for c in self.dst
        ]
        if len(ranges) == 1:
            return [(x, 0) for x in ranges[0]]
        return [(x, y) for y in ranges[1] for x in ranges[0]]

    def has_current_core(self) -> bool:
        """Whether the running node is this pipe's source or one of its destinations (the
        simulator's spelling, for early exits of nodes the pipe does not touch)."""
        node = PipeNet._node()
        return self.src_node() == node or node in self.dst_nodes()

    def __repr__(self) -> str:
        return f"Pipe({_coord_text(self.src)} -> {_coord_text(self.dst)})"


class _Identity:
    __slots__ = ("net", "index", "pipe")

    def __init__(self, net: PipeNet, index: int, pipe: Pipe) -> None:
        self.net = net
        self.index = index
        self.pipe = pipe


class SrcPipeIdentity(_Identity):
    """What an ``if_src`` callback receives: send on it; ``.dst`` is the destination."""

    @property
    def dst(self):
        d = self.pipe.dst
        if self.pipe.multicast:
            return tuple((c.start, c.stop - 1) if isinstance(c, slice) else (c, c) for c in d)
        return d if len(d) > 1 else d[0]

    def __repr__(self) -> str:
        return rules.end_text(self.pipe, True)


class DstPipeIdentity(_Identity):
    """What an ``if_dst`` callback receives: receive from it; ``.src`` is the source."""

    @property
    def src(self):
        s = self.pipe.src
        return s if len(s) > 1 else s[0]

    def __repr__(self) -> str:
        return rules.end_text(self.pipe, False)


PIPE_TYPES = (SrcPipeIdentity, DstPipeIdentity)
_GLOBAL_NETS = [0]


def _check_callback(callback: object, method: str) -> None:
    if not callable(callback):
        raise InterfaceError(
            f"PipeNet.{method}(callback) takes a function of the pipe, got "
            f"{type(callback).__name__} {callback!r}",
            loc=user_location(),
        )


class PipeNet:
    """``ttl.PipeNet(pipes)``: a non-empty group of pipes of one kind."""

    def __class_getitem__(cls, item: object) -> types.GenericAlias:
        """``ttl.PipeNet[ttl.DstT]``."""
        return types.GenericAlias(cls, item)

    def __init__(self, pipes: Pipe | Iterable[Pipe], graph: object = None) -> None:
        if graph is not None:
            raise InterfaceError(
                "ttl.PipeNet(graph=...): multi-device transfer graphs are not supported",
                loc=user_location(),
            )
        pipes = list(pipes) if not isinstance(pipes, Pipe) else [pipes]
        if not pipes:
            raise InterfaceError("ttl.PipeNet needs at least one pipe", loc=user_location())
        for p in pipes:
            if not isinstance(p, Pipe):
                raise InterfaceError(
                    f"ttl.PipeNet takes ttl.Pipe objects, got {type(p).__name__}",
                    loc=user_location(),
                )
        if len({p.multicast for p in pipes}) > 1:
            raise InterfaceError(
                "ttl.PipeNet mixes unicast and multicast pipes; a net has one kind",
                loc=user_location(),
            )
        if len({p.rank for p in pipes}) > 1:
            raise InterfaceError(
                "ttl.PipeNet pipes use coordinates of different ranks", loc=user_location()
            )
        self.pipes = pipes
        self.loc = user_location()
        if SETUP_STACK:
            setup = SETUP_STACK[-1]
            self.key = f"net{len(setup.pipenets)}"
            setup.pipenets.append(self)
            self._check_grid(setup.grid)
        else:  # created in a factory or at module level: shared by every node
            _GLOBAL_NETS[0] += 1
            self.key = f"global{_GLOBAL_NETS[0]}"

    def _check_grid(self, grid) -> None:
        cols, rows = grid[0], grid[1]
        for p in self.pipes:
            for n in [p.src_node(), *p.dst_nodes()]:
                if not (0 <= n[0] < cols and 0 <= n[1] < rows):
                    raise InterfaceError(
                        f"{p!r}: node {n} is outside the {cols}x{rows} grid", loc=self.loc
                    )

    # -- roles -------------------------------------------------------------------------------

    @staticmethod
    def _node() -> tuple[int, int]:
        run = ACTIVE.run
        if run is not None:
            return (run.core.logical.x, run.core.logical.y)
        if SETUP_STACK:
            return SETUP_STACK[-1].node
        raise KernelError("PipeNet roles are defined inside an @ttl.operation")

    def is_src(self) -> bool:
        node = self._node()
        return any(p.src_node() == node for p in self.pipes)

    def is_dst(self) -> bool:
        node = self._node()
        return any(node in p.dst_nodes() for p in self.pipes)

    def is_active(self) -> bool:
        return self.is_src() or self.is_dst()

    def destination_count(self) -> int:
        node = self._node()
        return sum(1 for p in self.pipes if node in p.dst_nodes())

    def _dm_only(self, what: str) -> None:
        run = current_kernel(f"{what}")
        check_dm_only(what, run.name, run.kernel_context().kernel.kind == "compute")
        if state.CURRENT is not None and not SETUP_STACK:
            self._check_grid(state.CURRENT.grid)

    def if_src(self, callback: Callable[[SrcPipeIdentity], object]) -> None:
        """Call ``callback(pipe)`` once per pipe whose source is this node."""
        _check_callback(callback, "if_src")
        self._dm_only("net.if_src")
        node = self._node()
        for i, p in enumerate(self.pipes):
            if p.src_node() == node:
                callback(SrcPipeIdentity(self, i, p))

    def if_dst(self, callback: Callable[[DstPipeIdentity], object]) -> None:
        """Call ``callback(pipe)`` once per pipe that has this node as a destination."""
        _check_callback(callback, "if_dst")
        self._dm_only("net.if_dst")
        node = self._node()
        for i, p in enumerate(self.pipes):
            if node in p.dst_nodes():
                callback(DstPipeIdentity(self, i, p))

    def __repr__(self) -> str:
        return f"PipeNet({self.pipes!r})"


# -- transfers ----------------------------------------------------------------------------


def send_wait_text(pipe: Pipe, node: object, missing: Iterable[object]) -> str:
    """What a pipe send waits for, in a deadlock report (the compiled engine's too)."""
    nodes = ", ".join(str(n) for n in missing)
    return f"ttl.copy(block, pipe {pipe!r}).wait() on node {node}: waiting for node(s) {nodes} to receive"


def receive_wait_text(pipe: Pipe, node: object) -> str:
    """What a pipe receive waits for, in a deadlock report (the compiled engine's too)."""
    return f"receive on pipe {pipe!r} at node {node}: waiting for node {pipe.src_node()} to send"


class _Send:
    __slots__ = (
        "block",
        "data",
        "pipe",
        "node",
        "remaining",
        "done",
        "done_at",
        "queue",
        "started",
        "run",
        "label",
    )

    def __init__(self, run, block, ident: SrcPipeIdentity, node) -> None:
        self.run = run
        self.block = block
        self.data = block.memory().copy()  # the bytes leave the block when the send is issued
        self.pipe = ident.pipe
        self.node = node
        self.remaining = set(ident.pipe.dst_nodes())
        self.done = True  # the sender's wait() does not wait for receivers
        self.queue = WaitQueue()
        self.started = run.clock
        # One NoC write (a multicast for a multicast pipe) issued now: when it has landed.
        device = run.core.device
        dests = [device.core(n) for n in ident.pipe.dst_nodes()]
        self.done_at = _transfer_time(self, dests, self.data.size, self.started)
        self.label = f"{ident.net.key}[{ident.index}]"

    def describe_wait(self, _detail) -> str:
        return send_wait_text(self.pipe, self.node, sorted(self.remaining))


class _Recv:
    __slots__ = (
        "block",
        "pipe",
        "node",
        "done",
        "done_at",
        "queue",
        "consumed",
        "listeners",
        "run",
    )

    def __init__(self, run, block, ident: DstPipeIdentity, node) -> None:
        self.run = run
        self.block = block
        self.pipe = ident.pipe
        self.node = node
        self.done = False
        self.done_at = 0
        self.queue = WaitQueue()
        self.consumed = False
        self.listeners: list[WaitQueue] = []

    def describe_wait(self, _detail) -> str:
        return receive_wait_text(self.pipe, self.node)


class _Channel:
    __slots__ = ("sends", "recvs")

    def __init__(self) -> None:
        self.sends: deque[_Send] = deque()
        self.recvs: deque[_Recv] = deque()


def _channels() -> dict:
    launch = state.CURRENT
    if launch is None:
        raise KernelError("pipe transfers run inside an @ttl.operation")
    return launch.channels


def _channel(key) -> _Channel:
    chans = _channels()
    ch = chans.get(key)
    if ch is None:
        ch = chans[key] = _Channel()
    return ch


class PipeSendHandle:
    """The transfer handle of ``ttl.copy(block, pipe)``."""

    __slots__ = ("send", "waited")

    def __init__(self, send: _Send) -> None:
        self.send = send
        self.waited = False

    def wait(self) -> None:
        check_not_waited(self.waited, PIPE_SEND_WAITED)
        run = current_kernel("transfer.wait()")
        s = self.send
        while not s.done:
            current_engine().block(s.queue, s)
        self.waited = True
        run.clock = max(run.clock, s.done_at)
        if self in s.block.pending:
            s.block.pending.remove(self)
        check_and_apply(s.block, Op.TX_WAIT)


class ReceiveRequest:
    """The handle of ``ttl.copy(pipe, block)``: ``wait()`` for the data."""

    __slots__ = ("recv", "waited")

    def __init__(self, recv: _Recv) -> None:
        self.recv = recv
        self.waited = False

    @property
    def done(self) -> bool:
        return self.recv.done

    def wait(self) -> None:
        check_not_waited(self.waited, RECEIVE_WAITED)
        run = current_kernel("ReceiveRequest.wait()")
        r = self.recv
        while not r.done:
            current_engine().block(r.queue, r)
        self._complete(run)

    def _complete(self, run) -> None:
        self.waited = True
        r = self.recv
        r.consumed = True
        run.clock = max(run.clock, r.done_at)
        if self in r.block.pending:
            r.block.pending.remove(self)
        check_and_apply(r.block, Op.TX_WAIT)


class ReadyReceive:
    """What ``ttl.wait_any`` returns: ``index()`` of the completed request."""

    __slots__ = ("_index", "request")

    def __init__(self, index: int, request: ReceiveRequest) -> None:
        self._index = index
        self.request = request

    def index(self) -> int:
        return self._index


def _node_of(run) -> tuple[int, int]:
    return (run.core.logical.x, run.core.logical.y)


def send(run, block: TensorBlock, ident) -> PipeSendHandle:
    """``ttl.copy(block, pipe)`` on the pipe's source node."""
    rules.check_pipe_end(ident.pipe, True, isinstance(ident, SrcPipeIdentity))
    node = _node_of(run)
    rules.check_pipe_node(ident.pipe, node, True)
    check_and_apply(block, Op.COPY_SRC)
    s = _Send(run, block, ident, node)
    handle = PipeSendHandle(s)
    block.pending.append(handle)
    for d in ident.pipe.dst_nodes():
        ch = _channel((ident.net.key, ident.index, d))
        ch.sends.append(s)
        _try_deliver(ch, d)
    run.clock += costs.SEMAPHORE_OP  # the handshake with the receivers' ready signals
    run.stats_ops += 1
    return handle


def receive(run, ident, block: TensorBlock) -> ReceiveRequest:
    """``ttl.copy(pipe, block)`` on a destination node of the pipe."""
    rules.check_pipe_end(ident.pipe, False, isinstance(ident, SrcPipeIdentity))
    node = _node_of(run)
    rules.check_pipe_node(ident.pipe, node, False)
    check_copy_into(RECEIVE_INTO_BLOCK, block, block.is_reserve)
    check_and_apply(block, Op.COPY_DST)
    r = _Recv(run, block, ident, node)
    req = ReceiveRequest(r)
    block.pending.append(req)
    ch = _channel((ident.net.key, ident.index, node))
    ch.recvs.append(r)
    _try_deliver(ch, node)
    run.clock += costs.SEMAPHORE_OP  # the ready signal to the sender
    run.stats_ops += 1
    return req


def _try_deliver(ch: _Channel, node) -> None:
    """Deliver the oldest send of ``ch`` to its oldest receive (at ``node``), if both exist."""
    if not ch.sends or not ch.recvs:
        return
    s, r = ch.sends[0], ch.recvs[0]
    rules.check_pipe_blocks(s.pipe, s.node, node, _block_kind(s.block), _block_kind(r.block))
    ch.sends.popleft()
    ch.recvs.popleft()
    nbytes = s.data.size
    r.block.memory()[:] = s.data
    r.block.dfb.core.notify_write(r.block.addr, r.block.addr + nbytes)
    # A receiver that was ready when the send issued gets the bytes when they land; one that
    # posts later, the transfer's latency after it does.
    start = max(s.started, r.run.clock)
    r.done, r.done_at = True, max(s.done_at, start + (s.done_at - s.started))
    r.queue.wake()
    for q in r.listeners:
        q.wake()
    first = len(s.remaining) == len(s.pipe.dst_nodes())
    s.remaining.discard(node)
    tracer = state.TRACER
    if tracer is not None and first:  # one NoC write per send (a multicast reaches them all)
        kind = "multicast" if s.pipe.multicast else "pipe write"
        tracer.span(
            s.run,
            kind,
            s.started,
            s.done_at,
            {"pipe": repr(s.pipe), "bytes": nbytes, "destinations": len(s.pipe.dst_nodes())},
        )


def _transfer_time(s: _Send, dests: list, nbytes: int, start: int) -> int:
    """When the sent block has landed at every destination: a NoC write (one destination)
    or multicast issued by the sender at ``start`` (device/perf/noc.py)."""
    core = s.run.core
    model = noc_time.model_of(core)
    pr = pipeline.perf_of(s.run)
    noc = s.run.kernel_context().noc
    here = model.workers[core.index]
    if len(dests) == 1:
        _, landed = model.write(pr, start, noc, here, model.workers[dests[0].index], nbytes)
        return landed
    xs = [model.workers[c.index][0] for c in dests]
    ys = [model.workers[c.index][1] for c in dests]
    rect = (min(xs), min(ys), max(xs), max(ys))
    _, landed = model.multicast(pr, start, noc, here, rect, nbytes, False)
    return landed


def _block_kind(block: TensorBlock) -> tuple[str, object, str]:
    return shape_text(block.shape), block.dfb.data_format, data_type_name(block.dtype)


def wait_any(requests: tuple[ReceiveRequest, ...], start: int = 0) -> ReadyReceive:
    """The first completed receive of ``requests`` in cyclic order from ``start``."""
    run = current_kernel("ttl.wait_any")
    rules.check_wait_any(requests, start, ReceiveRequest)
    n = len(requests)
    while True:
        for k in range(n):
            i = (start + k) % n
            req = requests[i]
            if req.recv.done and not req.waited:
                req._complete(run)
                return ReadyReceive(i, req)
        if all(r.waited for r in requests):
            raise rules.wait_any_exhausted()
        q = WaitQueue()
        pending = [r for r in requests if not r.recv.done]
        for r in pending:
            r.recv.listeners.append(q)
        current_engine().block(q, pending[0].recv)
        for r in pending:
            if q in r.recv.listeners:
                r.recv.listeners.remove(q)


def check_unmatched(launch) -> None:
    """After a launch: any send or receive that nothing matched is an error."""
    for (_net_key, _index, node), ch in sorted(launch.channels.items(), key=lambda kv: str(kv[0])):
        if ch.sends:
            s = ch.sends[0]
            raise rules.unmatched_send(s.pipe, s.node, node)
        if ch.recvs:
            raise rules.unmatched_receive(ch.recvs[0].pipe, node)
