"""The decoration-time half of external C++ functions: the front end (reference section C).

* :mod:`.frontend` -- the must-reject checklist (C.9) from the operation's AST, at
  decoration, producing one :class:`~tilewright.lang.extern.plan.CallSite` per call;
  the argument checks are in :mod:`.frontend_args`, the DFB-contract checks in
  :mod:`.frontend_contract`, their shared state in :mod:`.checker`.

The kernel-time half -- the language objects, the plan the front end produces,
binding, building and calling a call, contract checking -- is
``tilewright.lang.extern``; the native side (headers emulating the tt-metal kernel
API, the build cache, the ctypes bridge, process isolation) is ``tilewright.native``.
"""

from tilewright.compiler.extern.frontend import ExternArgumentTypeError, validate_operation

__all__ = ["ExternArgumentTypeError", "validate_operation"]
