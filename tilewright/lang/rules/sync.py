"""Rules of semaphores and pipes (spec D.3, D.4, A.6).

Semaphores: value changes and waits run on data-movement kernels; values are 32-bit
unsigned; a remote semaphore names a node (or a range) of the grid; a multicast ``set``
reaches every node of its range but the sender, and a multicast semaphore only sets.
Pipes: a block is sent on the source end of a pipe and received on a destination end;
sent and received blocks match; every send is received.  ``ttl.wait_any`` takes
distinct receive requests.
"""

from __future__ import annotations

from collections.abc import Sequence

from tilewright.device.noc import noc_multicast_addr
from tilewright.device.transfer import multicast_targets
from tilewright.errors import (
    InterfaceError,
    KernelError,
    NocError,
    TilewrightError,
    user_location,
)
from tilewright.lang.rules.registry import rule

__all__ = [
    "SEMAPHORE_VALUES",
    "check_semaphore_kernel",
    "check_semaphore_value",
    "semaphore_value_message",
    "remote_node",
    "remote_range",
    "multicast_set_targets",
    "multicast_inc_violation",
    "end_text",
    "check_pipe_end",
    "check_pipe_node",
    "check_pipe_blocks",
    "unmatched_send",
    "unmatched_receive",
    "check_wait_any",
    "wait_any_exhausted",
]

SEMAPHORE_DM_ONLY = rule(
    "semaphore-dm-only",
    KernelError,
    "D.4",
    "semaphore values are changed and waited on by data-movement kernels",
)
SEMAPHORE_VALUE = rule(
    "semaphore-value", KernelError, "D.4", "semaphore values are 32-bit unsigned ints"
)
SEMAPHORE_REMOTE = rule(
    "semaphore-remote",
    InterfaceError,
    "D.4",
    "a remote semaphore names a node, or a range of nodes, of the grid",
)
MULTICAST_SENDER = rule(
    "semaphore-multicast-sender",
    KernelError,
    "D.4",
    "a multicast set reaches every node of its range but the sender: a range holding only "
    "the sender is an error",
)
MULTICAST_SET_ONLY = rule(
    "semaphore-multicast-set-only", KernelError, "D.4", "a multicast semaphore only sets"
)
PIPE_END = rule(
    "pipe-end",
    KernelError,
    "D.3",
    "a block is sent on a pipe's source end (if_src) and received on a destination end (if_dst)",
)
PIPE_NODE = rule(
    "pipe-end-node",
    KernelError,
    "D.3",
    "a pipe end is used on its own node (the pipe's source, or one of its destinations)",
)
PIPE_BLOCKS = rule(
    "pipe-blocks",
    KernelError,
    "D.3",
    "blocks sent and received on a pipe match in shape and format",
)
PIPE_UNMATCHED = rule(
    "pipe-unmatched", KernelError, "D.3", "every send on a pipe is received, and every receive sent"
)
WAIT_ANY = rule(
    "wait-any",
    KernelError,
    "A.6",
    "ttl.wait_any takes a non-empty tuple of distinct receive requests and a start index",
)

SEMAPHORE_VALUES = range(0, 1 << 32)
"""The values a semaphore holds (a 32-bit L1 word)."""


# -- semaphores ---------------------------------------------------------------------------------


def check_semaphore_kernel(what: str, kernel: str, compute: bool) -> None:
    if compute:
        raise SEMAPHORE_DM_ONLY.violation(
            f"{what} changes or waits on a semaphore, which runs on data-movement kernels "
            f"(spec §Semaphore); '{kernel}' is a compute kernel"
        )


def semaphore_value_message(what: str, shown: str) -> str:
    """``shown``: the value's repr (or the placeholder of a run-time check)."""
    return f"{what}: semaphore values are 32-bit unsigned ints, got {shown}"


def check_semaphore_value(value: object, what: str) -> int:
    """A semaphore value: a Python int (not a bool) in :data:`SEMAPHORE_VALUES`."""
    if not isinstance(value, int) or isinstance(value, bool) or value not in SEMAPHORE_VALUES:
        raise SEMAPHORE_VALUE.violation(semaphore_value_message(what, repr(value)))
    return value


def _remote_error(message: str) -> TilewrightError:
    err = SEMAPHORE_REMOTE.violation(message)
    err.loc = user_location()
    return err


def remote_node(node: object, grid: Sequence[int], what: str) -> tuple[int, int]:
    """``sem.get_remote(node)``: the node as (x, y), inside the grid."""
    if isinstance(node, int) and not isinstance(node, bool):
        xy = (node, 0)
    elif (
        isinstance(node, (tuple, list))
        and 1 <= len(node) <= 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in node)
    ):
        xy = (node[0], node[1] if len(node) > 1 else 0)
    else:
        raise _remote_error(f"{what}: expected a node coordinate, got {node!r}")
    if not (0 <= xy[0] < grid[0] and 0 <= xy[1] < grid[1]):
        raise _remote_error(f"{what}: node {xy} is outside the {grid[0]}x{grid[1]} grid")
    return xy


def remote_range(
    rng: object, grid: Sequence[int], what: str
) -> tuple[tuple[int, int], tuple[int, int]]:
    """``sem.get_remote_multicast(range)``: ((x0, y0), (x1, y1)) inclusive corners of a node
    range given with ints and slices (None: the whole grid)."""
    if rng is None:
        return (0, 0), (grid[0] - 1, grid[1] - 1)
    items = tuple(rng) if isinstance(rng, (tuple, list)) else (rng,)
    lo, hi = [], []
    for i, v in enumerate(items):
        if isinstance(v, slice):
            if not (
                isinstance(v.start, int) and isinstance(v.stop, int) and v.start < v.stop
            ) or v.step not in (None, 1):
                raise _remote_error(f"{what}: slice {i} needs int start < stop and step 1")
            lo.append(v.start)
            hi.append(v.stop - 1)
        elif isinstance(v, int) and not isinstance(v, bool):
            lo.append(v)
            hi.append(v)
        else:
            raise _remote_error(f"{what}: range component {i} must be an int or a slice, got {v!r}")
    if len(lo) == 1:
        lo.append(0)
        hi.append(0)
    if len(lo) != 2:
        raise _remote_error(f"{what}: node ranges have 1 or 2 dimensions")
    for a, b, n in ((lo[0], hi[0], grid[0]), (lo[1], hi[1], grid[1])):
        if not (0 <= a and b < n):
            raise _remote_error(f"{what}: range {items} leaves the {grid[0]}x{grid[1]} grid")
    return (lo[0], lo[1]), (hi[0], hi[1])


def multicast_set_targets(device, sender, lo: tuple[int, int], hi: tuple[int, int], address: int):
    """The cores a multicast ``set`` from ``sender`` writes (every node of lo..hi but the
    sender, as ``noc_semaphore_set_multicast``) and the local address."""
    a, b = device.core(*lo), device.core(*hi)
    mcast = noc_multicast_addr(a.noc_x, a.noc_y, b.noc_x, b.noc_y, address)
    what = "MulticastRemoteSemaphore.set"
    try:
        return multicast_targets(device, sender, mcast, False, what)
    except NocError as exc:
        raise MULTICAST_SENDER.violation(
            f"{what} on node {sender.logical}: {exc.message} (a semaphore multicast reaches "
            "every node of the range except the sender)"
        ) from None


def multicast_inc_violation() -> TilewrightError:
    return MULTICAST_SET_ONLY.violation(
        "MulticastRemoteSemaphore.inc: a multicast semaphore only sets (spec §Semaphore: "
        "remote multicast set); increment each node through get_remote(node)"
    )


# -- pipes --------------------------------------------------------------------------------------


def end_text(pipe: object, source: bool) -> str:
    """How a pipe end prints: ``<source end of Pipe(...)>``."""
    return f"<{'source' if source else 'destination'} end of {pipe!r}>"


def check_pipe_end(pipe: object, sending: bool, source_end: bool) -> None:
    """``ttl.copy(block, pipe)`` sends on a source end; ``ttl.copy(pipe, block)`` receives
    from a destination end."""
    if sending and not source_end:
        raise PIPE_END.violation(
            f"ttl.copy(block, pipe) sends, but {end_text(pipe, False)} is a receiving end "
            "(given to an if_dst callback); send on the pipe given to if_src"
        )
    if not sending and source_end:
        raise PIPE_END.violation(
            f"ttl.copy(pipe, block) receives, but {end_text(pipe, True)} is a sending end "
            "(given to an if_src callback); receive from the pipe given to if_dst"
        )


def check_pipe_node(pipe, node: tuple[int, int], sending: bool) -> None:
    """The running node is the pipe's source (sending) or one of its destinations."""
    if sending and pipe.src_node() != node:
        raise PIPE_NODE.violation(
            f"ttl.copy(block, pipe): node {node} is not the source of {pipe!r}"
        )
    if not sending and node not in pipe.dst_nodes():
        raise PIPE_NODE.violation(
            f"ttl.copy(pipe, block): node {node} is not a destination of {pipe!r}"
        )


def check_pipe_blocks(pipe, src_node, dst_node, sent: tuple, received: tuple) -> None:
    """A delivery: (shape text, format, dtype name) of the sent and the received block."""
    if (sent[0], sent[1]) != (received[0], received[1]):
        raise PIPE_BLOCKS.violation(
            f"pipe {pipe!r}: node {src_node} sends a block of shape {sent[0]} ({sent[2]}) but "
            f"node {dst_node} receives into a block of shape {received[0]} ({received[2]}); "
            "sent and received blocks must match"
        )


def unmatched_send(pipe, src_node, dst_node) -> TilewrightError:
    return PIPE_UNMATCHED.violation(
        f"pipe {pipe!r}: node {src_node} sent a block that node {dst_node} never received "
        "(unmatched send)"
    )


def unmatched_receive(pipe, dst_node) -> TilewrightError:
    return PIPE_UNMATCHED.violation(
        f"pipe {pipe!r}: node {dst_node} posted a receive that node {pipe.src_node()} never "
        "sent (unmatched receive)"
    )


def check_wait_any(requests: object, start: object, kinds: type) -> None:
    """``ttl.wait_any(requests, start=)``: ``kinds`` is the receive-request type."""
    if not isinstance(requests, tuple) or not requests:
        raise WAIT_ANY.violation("ttl.wait_any takes a non-empty tuple of ReceiveRequests")
    if any(not isinstance(r, kinds) for r in requests):
        raise WAIT_ANY.violation(
            "ttl.wait_any takes ReceiveRequests (the results of ttl.copy(pipe, block))"
        )
    if len({id(r) for r in requests}) != len(requests):
        raise WAIT_ANY.violation("ttl.wait_any: the requests must be distinct")
    if not isinstance(start, int) or not 0 <= start < len(requests):
        raise WAIT_ANY.violation(
            f"ttl.wait_any: start must be an index into the requests, got {start!r}"
        )


def wait_any_exhausted() -> TilewrightError:
    return WAIT_ANY.violation("ttl.wait_any: every request was already waited")
