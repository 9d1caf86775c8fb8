"""The language surface of external C++ calls (reference A.7, C.1-C.6).

``ttl.call_extern_func``, the typed template/function-argument wrappers
(``ttl.dfb_descriptor``, ``ttl.get_dfb_id``, ``ttl.raw_addr``, ``ttl.uint32``), the
DFB contract constructors (``ttl.DFBEffect.reserve/push/wait/pop/repeat``,
``ttl.DFBAccess.inspect``); ``ttl.ScalarType``, ``ttl.DispatchCondition`` and the
operand markers are plain data in :mod:`.types`.

The compiler's front end (``tilewright.compiler.extern``) validates every call site
from the operation's source at decoration; at run time these functions only build
small marker objects (the operands of the call) and ``call_extern_func`` forwards to
:mod:`.runtime`.
Outside a running kernel they raise ``RuntimeError("... is valid only in a compiled
kernel")`` (A.7): there is no eager Python meaning for a C++ call.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from tilewright.device.engine import ACTIVE
from tilewright.errors import TilewrightError, user_location
from tilewright.lang import state
from tilewright.lang.extern.types import (
    AccessItem,
    DFBDescriptorArg,
    DFBIdArg,
    DispatchCondition,
    EffectItem,
    EffectRepeat,
    RawAddr,
    ScalarType,
    UInt32,
)
from tilewright.lazy import lazy_import

# Running a call (binding, the C++ build, the bridge into native code) loads at the first
# external call a kernel makes, not on ``import ttl`` (issue 22: start-up).
runtime = lazy_import("tilewright.lang.extern.runtime")

__all__ = [
    "KernelOnlyError",
    "DFBEffect",
    "DFBAccess",
    "call_extern_func",
    "dfb_descriptor",
    "get_dfb_id",
    "raw_addr",
    "uint32",
]


class KernelOnlyError(TilewrightError, RuntimeError):
    """A compiled-kernel-only construct executed eagerly in Python (reference A.7)."""

    default_rule = "extern-eager"


def _require_kernel(what: str) -> None:
    if ACTIVE.run is None or state.CURRENT is None:
        raise KernelOnlyError(
            f"{what} is valid only in a compiled kernel",
            loc=user_location(),
            hint="call it inside an @ttl.operation (a kernel function or a unified body), which "
            "compiles it into a kernel",
        )


def _declared(dfb: object) -> bool:
    """A parameter position of a ``ttl.raw.cpp`` function (an int): its effects and DFB template
    arguments are declared before any kernel runs, so these constructors accept one outside a kernel."""
    return isinstance(dfb, int) and not isinstance(dfb, bool)


def dfb_descriptor(dfb: object, *args: object, **kwargs: object) -> DFBDescriptorArg:
    """``ttl.dfb_descriptor(dfb)``: ``ttlang::DFBDescriptor<index, pages_per_block,
    block_count, page_size>`` as a template argument (C.3); of a parameter position (an int)
    in a ``ttl.raw.cpp`` declaration."""
    if not _declared(dfb):
        _require_kernel("ttl.dfb_descriptor")
    return DFBDescriptorArg(dfb)


def get_dfb_id(dfb: object, *args: object, **kwargs: object) -> DFBIdArg:
    """``ttl.get_dfb_id(dfb)``: the DFB's physical index as a template argument (C.3); of a
    parameter position (an int) in a ``ttl.raw.cpp`` declaration."""
    if not _declared(dfb):
        _require_kernel("ttl.get_dfb_id")
    return DFBIdArg(dfb)


def raw_addr(tensor: object, *args: object, **kwargs: object) -> RawAddr:
    """``ttl.raw_addr(tensor)``: the base tensor's buffer address as ``uint32_t`` (C.4)."""
    _require_kernel("ttl.raw_addr")
    return RawAddr(tensor)


def uint32(value: int) -> UInt32:
    """``ttl.uint32(value)``: an unsigned 32-bit template argument, ``0 <= value < 2**32``."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"ttl.uint32(value) takes an int, got {type(value).__name__} {value!r}")
    if not 0 <= value < 1 << 32:
        raise ValueError(f"ttl.uint32({value}): the value must be in [0, 2**32)")
    _require_kernel("ttl.uint32")
    return UInt32(value)


def _effect(kind: str, dfb: object, tiles: int) -> EffectItem:
    if not _declared(dfb):
        _require_kernel(f"ttl.DFBEffect.{kind}")
    return EffectItem(kind, dfb, tiles)


class DFBEffect:
    """Ordered synchronous DFB protocol actions an external function performs (C.6)."""

    @staticmethod
    def reserve(dfb: object, *, tiles: int) -> EffectItem:
        return _effect("reserve", dfb, tiles)

    @staticmethod
    def push(dfb: object, *, tiles: int) -> EffectItem:
        return _effect("push", dfb, tiles)

    @staticmethod
    def wait(dfb: object, *, tiles: int) -> EffectItem:
        return _effect("wait", dfb, tiles)

    @staticmethod
    def pop(dfb: object, *, tiles: int) -> EffectItem:
        return _effect("pop", dfb, tiles)

    @staticmethod
    def repeat(count: int, effects: Iterable[object], /) -> EffectRepeat:
        items = tuple(effects)
        if not items or not all(
            isinstance(e, (EffectItem, EffectRepeat, AccessItem)) for e in items
        ):
            _require_kernel("ttl.DFBEffect.repeat")
        return EffectRepeat(count, items)


class DFBAccess:
    """Non-transactional DFB accesses of an external function (C.6)."""

    @staticmethod
    def inspect(dfb: object) -> AccessItem:
        if not _declared(dfb):
            _require_kernel("ttl.DFBAccess.inspect")
        return AccessItem("inspect", dfb)


def call_extern_func(
    header: str,
    callee: str,
    *args: object,
    template_args: object = None,
    func_args: object = None,
    dfb_dependencies: object = None,
    dfb_effects: object = None,
    dfb_accesses: object = None,
    unknown_dfb_access: bool = False,
    include_paths: object = None,
    kernel: object = None,
    result_type: ScalarType | None = None,
    condition_result: DispatchCondition | None = None,
    _site: int | None = None,
) -> int | None:
    """Call the C++ function ``callee`` declared in ``header`` from a compiled kernel (C.1).

    Every call site is validated from the operation's source at decoration (the
    must-reject checklist, C.9).  At run time the call is compiled into a shared
    object (cached), runs on the kernel's core with the tt-metal kernel API, and its
    DFB protocol actions are checked against ``dfb_effects`` / ``dfb_accesses``.
    Returns the scalar result (``result_type`` / ``condition_result``) or None.
    ``_site`` is not part of the language: composition (reference B.8) names the
    validated call site of a call it expanded from another operation with it (the
    front end rejects it in user code as an unexpected keyword).
    """
    if ACTIVE.run is None or state.CURRENT is None:
        _require_kernel("ttl.call_extern_func")
    return runtime.call(sys._getframe(1), func_args, template_args, dfb_dependencies, _site)
