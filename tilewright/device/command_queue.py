"""The in-order command queue (tt-metal ``CommandQueue``, slow-dispatch semantics).

Commands run in FIFO order.  Because the engine runs a program to completion
before returning, every command completes at enqueue time: a buffer write after a
program lands after it, a read returns data after all earlier commands, and
``finish()`` has nothing left to wait for (it is kept for API fidelity).  Non-
blocking writes copy the host data at enqueue time, as tt-metal does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilewright.device import session
from tilewright.device.engine import LaunchResult
from tilewright.device.launch import launch_program
from tilewright.errors import DeviceError

__all__ = ["CommandQueue", "Command"]


@dataclass(frozen=True, slots=True)
class Command:
    kind: str  # "write_buffer" | "read_buffer" | "program"
    detail: str


class CommandQueue:
    """FIFO of buffer writes, buffer reads and program launches for one device."""

    def __init__(self, device, cq_id: int = 0) -> None:
        self.device = device
        self.id = cq_id
        self.history: list[Command] = []
        self.last_launch: LaunchResult | None = None
        self.tracer = None

    def enqueue_write_buffer(self, buffer, data, blocking: bool = True) -> None:
        self._check()
        buffer.write(np.asarray(data))
        self.history.append(Command("write_buffer", repr(buffer)))

    def enqueue_read_buffer(self, buffer, blocking: bool = True) -> np.ndarray:
        """Return the buffer's pages as uint8 of shape (num_pages, page_size)."""
        self._check()
        out = buffer.read()
        self.history.append(Command("read_buffer", repr(buffer)))
        return out

    def enqueue_program(
        self, program, blocking: bool = True, *, place_word: str = "core"
    ) -> LaunchResult:
        self._check()
        self.history.append(Command("program", program.name))

        remote = self.device.remote  # a worker process runs this chip's launches
        result = None
        if remote is not None:
            result = remote.submit(self.device, program, place_word)
        if result is None:
            result = launch_program(self.device, program, place_word=place_word, tracer=self.tracer)
        self.last_launch = result
        session.record_launch(program.name, result, self.device)
        return result

    def finish(self) -> None:
        self._check()

    def _check(self) -> None:
        if self.device.closed:
            raise DeviceError("the command queue's device is closed")
