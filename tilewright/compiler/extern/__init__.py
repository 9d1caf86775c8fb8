"""External C++ functions: ``ttl.call_extern_func`` (reference section C).

* :mod:`.surface` -- the language objects (``call_extern_func``, ``dfb_descriptor``,
  ``get_dfb_id``, ``raw_addr``, ``uint32``, ``DFBEffect``, ``DFBAccess``,
  ``ScalarType``, ``DispatchCondition``);
* :mod:`.frontend` -- the must-reject checklist (C.9) from the operation's AST, at
  decoration, producing one :class:`~.plan.CallSite` per call (:mod:`.plan`, with the
  DFB usage record the reuse proofs read: :func:`dfb_usage`);
* :mod:`.glue` -- the C++ generated around a call (C.8 emission order);
* :mod:`.runtime` -- binding a call on a kernel, building and calling it, results and
  dispatch conditions; :mod:`.contract` -- checking the DFB actions the C++ performs.

The native side (headers emulating the tt-metal kernel API, the build cache, the
ctypes bridge, process isolation) is ``tilewright.native``.
"""

from tilewright.compiler.extern.frontend import ExternArgumentTypeError, validate_operation
from tilewright.lang.extern.plan import CallSite, DFBUsage, ExternPlan, dfb_usage
from tilewright.lang.extern.surface import (
    DFBAccess,
    DFBEffect,
    DispatchCondition,
    KernelOnlyError,
    ScalarType,
    call_extern_func,
    dfb_descriptor,
    get_dfb_id,
    raw_addr,
    uint32,
)

__all__ = [
    "validate_operation",
    "dfb_usage",
    "DFBUsage",
    "ExternPlan",
    "CallSite",
    "ExternArgumentTypeError",
    "KernelOnlyError",
    "call_extern_func",
    "dfb_descriptor",
    "get_dfb_id",
    "raw_addr",
    "uint32",
    "DFBEffect",
    "DFBAccess",
    "ScalarType",
    "DispatchCondition",
]
