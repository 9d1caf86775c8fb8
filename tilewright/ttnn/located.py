"""Point errors of ttnn's host API at the user's call.

Registered operations get their location from the registry (``operations/registry.py``);
the functions outside it (``from_torch``, ``zeros``, ``open_device``,
``create_sharded_memory_config`` ...) are wrapped with :func:`at_user_call`: a
Tilewright error they raise without a location gets the innermost frame of the user's
program that called them, resolved only when raising.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from tilewright.errors import TilewrightError, user_location

__all__ = ["at_user_call"]

P = ParamSpec("P")
R = TypeVar("R")


def at_user_call(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn``, with location-less Tilewright errors pointed at the user's call of it."""

    @functools.wraps(fn)
    def located(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except TilewrightError as exc:
            if exc.loc is None:
                exc.loc = user_location(sys._getframe(1))
            raise

    return located
