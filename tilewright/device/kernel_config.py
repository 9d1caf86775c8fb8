"""The kernel-config region of a core's L1: semaphores and runtime arguments.

Kept apart from :mod:`device` so that :mod:`requirements` (rule 27: the region must fit
below ``l1_unreserved_base``) can read the sizes without importing the device it checks.
"""

from __future__ import annotations

__all__ = [
    "NUM_SEMAPHORES",
    "MAX_RUNTIME_ARGS",
    "DEFAULT_L1_SMALL_SIZE",
    "RTA_BYTES",
    "kernel_config_bytes",
]

NUM_SEMAPHORES = 16
"""Semaphores per core (16-byte stride; tt-metal documents 8, newer versions allow more)."""
MAX_RUNTIME_ARGS = 341
"""Unique plus common runtime args per kernel per core (tt-metal ``max_runtime_args``)."""
DEFAULT_L1_SMALL_SIZE = 32 * 1024
"""ttnn's default L1_SMALL region (``DEFAULT_L1_SMALL_SIZE``)."""

RTA_BYTES = -(-MAX_RUNTIME_ARGS * 4 // 16) * 16
"""Bytes of one processor slot's runtime arguments (16-byte aligned)."""


def kernel_config_bytes(slots: int) -> int:
    """Bytes of the kernel-config region: the semaphores and every slot's runtime args."""
    return NUM_SEMAPHORES * 16 + slots * RTA_BYTES
