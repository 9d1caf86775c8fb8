"""The barrier channel of split runs: one local connection between the driver and each worker.

A split run (``host.SplitRun``) stops at every quiescent point of the schedule until the
driver has every worker's packets and hands back the ones that land on each; an
all-gather over 32 chips does that 64 times a call, a ping-pong once per packet.  A Ray
actor call per barrier costs about 1.3 ms on a 2-core machine (the task machinery, and a
hop from the actor's thread to the share's); a framed message on a Unix socket costs
tens of microseconds.  So a running split's barrier messages take this channel, and
everything else stays with Ray: starting and placing the workers, the programs, the
start of a split run, deaths (a dead worker's end of the socket reads as EOF, and Ray
says why it died).  Workers run on the driver's host (their device memory is the
driver's), so a Unix socket reaches them.

The connection is the standard library's ``multiprocessing.connection`` (framed
messages, a per-pool authentication key); messages are cloudpickled, as Ray would, and
tagged with the split run's serial: what a run that was given up on left in a
connection (an answer nobody waited for) is dropped by the next run's reads.
"""

from __future__ import annotations

import multiprocessing
import threading
from multiprocessing import connection

from ray import cloudpickle

__all__ = ["Lost", "WorkerEnd", "connect", "send", "receive", "gather"]

Connection = connection.Connection


class Lost(Exception):
    """The other end of a channel went away (its process died, or closed it)."""


class WorkerEnd:
    """A worker's end: listens once for the driver, who connects right after asking for
    :attr:`address`."""

    def __init__(self, authkey: bytes) -> None:
        self._listener = connection.Listener(family="AF_UNIX", authkey=authkey)
        self.address = self._listener.address
        self._conn: Connection | None = None
        self._refused = ""
        self._accepting = threading.Thread(
            target=self._accept, name="tilewright channel", daemon=True
        )
        self._accepting.start()

    def _accept(self) -> None:
        try:
            self._conn = self._listener.accept()
        except (OSError, multiprocessing.AuthenticationError) as exc:  # not the driver: closed
            self._refused = str(exc)
        finally:
            self._listener.close()

    def connection(self) -> Connection:
        """The connection (the driver connected before it started a split run here)."""
        self._accepting.join()
        if self._conn is None:
            raise Lost(f"the driver's end did not connect ({self._refused})")
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


def connect(address: str, authkey: bytes) -> Connection:
    """The driver's end of a worker's channel."""
    return connection.Client(address, family="AF_UNIX", authkey=authkey)


def send(conn: Connection, serial: int, body: object) -> None:
    try:
        conn.send_bytes(cloudpickle.dumps((serial, body)))
    except OSError as exc:
        raise Lost(str(exc)) from None


def _read(conn: Connection) -> tuple[int, object]:
    try:
        return cloudpickle.loads(conn.recv_bytes())
    except (EOFError, OSError) as exc:
        raise Lost(str(exc) or "end of file") from None


def receive(conn: Connection, serial: int) -> object:
    """The next message of run ``serial`` (older runs' leftovers are dropped)."""
    while True:
        got, body = _read(conn)
        if got == serial:
            return body


def gather(conns: dict[int, Connection], serial: int) -> dict[int, object]:
    """One message of run ``serial`` from each of ``conns`` (by key), as they come; a lost
    end raises :class:`Lost` with its key as ``args[1]``."""
    out: dict[int, object] = {}
    waiting = {conn: key for key, conn in conns.items()}
    while waiting:
        for conn in connection.wait(list(waiting)):
            key = waiting[conn]  # type: ignore[index]
            try:
                got, body = _read(conn)  # type: ignore[arg-type]
            except Lost as exc:
                raise Lost(exc.args[0], key) from None
            if got == serial:
                out[key] = body
                del waiting[conn]  # type: ignore[arg-type]
    return out
