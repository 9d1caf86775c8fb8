"""tt-metal's stateful and transaction-id NoC transfers (``api/dataflow/dataflow_api.h``) for
Python kernels: ``*_set_state`` / ``*_with_state``, ``*_set_trid``, ``*_barrier_with_trid`` and
the one-packet ``*_with_trid`` writes -- the same copies as ``noc_async_read`` /
``noc_async_write`` (:mod:`.dataflow`), with the checks and messages of the native runtime
(:mod:`tilewright.device.api_messages`).
"""

from __future__ import annotations

from tilewright.device import api_messages as M
from tilewright.device.kernel_api.dataflow import (
    _ctx,
    _tick,
    api_state,
    noc_async_read,
    noc_async_read_barrier,
    noc_async_write,
    noc_async_write_barrier,
)
from tilewright.device.perf import costs

__all__ = [
    "MAX_TRANSACTION_ID",
    "noc_async_read_set_state",
    "noc_async_read_with_state",
    "noc_async_read_one_packet_set_state",
    "noc_async_read_one_packet_with_state",
    "noc_async_write_set_state",
    "noc_async_write_with_state",
    "noc_async_write_one_packet_set_state",
    "noc_async_write_one_packet_with_state",
    "noc_async_read_set_trid",
    "noc_async_write_set_trid",
    "noc_async_read_barrier_with_trid",
    "noc_async_write_barrier_with_trid",
    "noc_async_write_one_packet_with_trid",
    "noc_async_write_one_packet_with_trid_set_state",
    "noc_async_write_one_packet_with_trid_with_state",
]


#
# tt-metal's *_set_state programs a NoC command buffer with the target node (the upper
# bits of the 64-bit NoC address) and, for one-packet forms, the size; *_with_state then
# issues a transfer that supplies only the 32-bit local address (and the size, for the
# general forms).  Same copy semantics as noc_async_read / noc_async_write.  A with_state
# call with no set_state before it (on that NoC) would reuse whatever the command buffer
# last held; here it is a NocError.

_LO32 = 0xFFFFFFFF
MAX_TRANSACTION_ID = 0xF
"""Transaction ids are 4-bit fields of the NoC command (``NOC_MAX_TRANSACTION_ID``)."""


def _set_state(kind: str, noc_addr: int, size: int, noc: int) -> None:
    api_state(_ctx()).setdefault("noc", {})[(kind, noc)] = (int(noc_addr), int(size))
    _tick(costs.SET_STATE_OP)


def _state_addr(kind: str, local_addr: int, noc: int) -> tuple[int, int]:
    """(NoC address, size) from the command buffer ``noc_async_<kind>_set_state`` programmed."""
    state = api_state(_ctx()).get("noc", {}).get((kind, noc))
    if state is None:
        raise M.NOC_STATE(kind=kind, noc=noc)
    base, size = state
    return (base & ~_LO32) | (int(local_addr) & _LO32), size


def noc_async_read_set_state(src_noc_addr: int, noc: int = 0, vc: int = 0) -> None:
    """Program the read command buffer with the source node of ``src_noc_addr``."""
    _set_state("read", src_noc_addr, 0, noc)


def noc_async_read_with_state(
    src_local_addr: int, dst_local_l1_addr: int, size: int, noc: int = 0, vc: int = 0
) -> None:
    """Read ``size`` bytes from ``src_local_addr`` on the node set by noc_async_read_set_state."""
    src, _ = _state_addr("read", src_local_addr, noc)
    noc_async_read(src, dst_local_l1_addr, size, noc)


def noc_async_read_one_packet_set_state(
    src_noc_addr: int, size: int, vc: int = 0, noc: int = 0
) -> None:
    """Program the read command buffer with the source node and the packet size."""
    _set_state("read_one_packet", src_noc_addr, size, noc)


def noc_async_read_one_packet_with_state(
    src_local_addr: int, dst_local_l1_addr: int, vc: int = 0, noc: int = 0
) -> None:
    """Read one packet (the size given to the set_state) from ``src_local_addr``."""
    src, size = _state_addr("read_one_packet", src_local_addr, noc)
    noc_async_read(src, dst_local_l1_addr, size, noc)


def noc_async_write_set_state(dst_noc_addr: int, noc: int = 0, vc: int = 0) -> None:
    """Program the write command buffer with the destination node of ``dst_noc_addr``."""
    _set_state("write", dst_noc_addr, 0, noc)


def noc_async_write_with_state(
    src_local_l1_addr: int, dst_local_addr: int, size: int, noc: int = 0
) -> None:
    """Write ``size`` bytes to ``dst_local_addr`` on the node set by noc_async_write_set_state."""
    dst, _ = _state_addr("write", dst_local_addr, noc)
    noc_async_write(src_local_l1_addr, dst, size, noc)


def noc_async_write_one_packet_set_state(
    dst_noc_addr: int, size: int, noc: int = 0, vc: int = 0
) -> None:
    """Program the write command buffer with the destination node and the packet size."""
    _set_state("write_one_packet", dst_noc_addr, size, noc)


def noc_async_write_one_packet_with_state(
    src_local_l1_addr: int, dst_local_addr: int, noc: int = 0
) -> None:
    """Write one packet (the size given to the set_state) to ``dst_local_addr``."""
    dst, size = _state_addr("write_one_packet", dst_local_addr, noc)
    noc_async_write(src_local_l1_addr, dst, size, noc)


def _check_trid(trid: int, what: str) -> int:
    if not 0 <= trid <= MAX_TRANSACTION_ID:
        raise M.TRID_RANGE(what=what, trid=trid)
    return trid


def noc_async_read_set_trid(trid: int, noc: int = 0) -> None:
    """Tag the following reads with transaction id ``trid`` (0..15)."""
    api_state(_ctx())[("read_trid", noc)] = _check_trid(trid, "noc_async_read_set_trid")
    _tick(costs.SET_STATE_OP)


def noc_async_write_set_trid(trid: int, noc: int = 0) -> None:
    """Tag the following writes with transaction id ``trid`` (0..15)."""
    api_state(_ctx())[("write_trid", noc)] = _check_trid(trid, "noc_async_write_set_trid")
    _tick(costs.SET_STATE_OP)


def noc_async_read_barrier_with_trid(trid: int, noc: int = 0) -> None:
    """Wait for the reads tagged ``trid`` (the emulated NoC completes every read at issue)."""
    _check_trid(trid, "noc_async_read_barrier_with_trid")
    noc_async_read_barrier(noc)


def noc_async_write_barrier_with_trid(trid: int, noc: int = 0) -> None:
    """Wait for the writes tagged ``trid`` to be acknowledged."""
    _check_trid(trid, "noc_async_write_barrier_with_trid")
    noc_async_write_barrier(noc)


def noc_async_write_one_packet_with_trid(
    src_local_l1_addr: int,
    dst_noc_addr: int,
    size: int,
    trid: int,
    cmd_buf: int = 0,
    noc: int = 0,
    vc: int = 0,
) -> None:
    """One-packet write tagged with transaction id ``trid``."""
    _check_trid(trid, "noc_async_write_one_packet_with_trid")
    noc_async_write(src_local_l1_addr, dst_noc_addr, size, noc)


def noc_async_write_one_packet_with_trid_set_state(
    dst_noc_addr: int, cmd_buf: int = 0, noc: int = 0, vc: int = 0
) -> None:
    """Program the (trid) write command buffer with the destination node."""
    _set_state("write_one_packet_with_trid", dst_noc_addr, 0, noc)


def noc_async_write_one_packet_with_trid_with_state(
    src_local_l1_addr: int,
    dst_local_addr: int,
    size: int,
    trid: int,
    cmd_buf: int = 0,
    noc: int = 0,
) -> None:
    """One-packet write tagged ``trid`` to ``dst_local_addr`` on the node of the set_state."""
    _check_trid(trid, "noc_async_write_one_packet_with_trid_with_state")
    dst, _ = _state_addr("write_one_packet_with_trid", dst_local_addr, noc)
    noc_async_write(src_local_l1_addr, dst, size, noc)
