"""Where native code is running, for the parent of an isolated run (``--isolate``).

The child stores what it is running in a small shared-memory slot the parent reads
after the child died (three int32 stores, no system call):

* ``(site id, node x, node y)`` while an external call (``ttl.call_extern_func``) runs;
* ``(NATIVE_KERNELS, core x, core y)`` while the native kernels of a launch run (the core
  of the run the engine resumed; native code may switch to other native runs);
* ``(0, ...)`` otherwise.

It is None unless the simulation runs isolated.
"""

from __future__ import annotations

import ctypes

__all__ = ["CrashContext", "CRASH", "NATIVE_KERNELS"]

NATIVE_KERNELS = -1
"""The slot's site id while native kernels (not an external call) run."""


class CrashContext:
    """The slot ``[site id, x, y]`` (a shared-memory int32 array) of an isolated child."""

    __slots__ = ("slot",)

    def __init__(self) -> None:
        self.slot: ctypes.Array[ctypes.c_int32] | None = None

    def enter(self, token) -> None:
        slot = self.slot
        if slot is not None and token is not None:
            site, x, y = token
            slot[1], slot[2], slot[0] = x, y, site

    def leave(self) -> None:
        if self.slot is not None:
            self.slot[0] = 0


CRASH = CrashContext()
