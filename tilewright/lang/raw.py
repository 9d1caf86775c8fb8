"""``ttl.raw.call`` at kernel time: the entry point of a raw IR function call.

The compiler validated and traced every ``ttl.raw.call`` site at decoration and put it
in the operation's ``ExternPlan`` (``compiler.raw.frontend.RawCallSite``).  Here the
running call finds its site -- by the id composition gave it, else by source position
-- and hands the call to the site's ``bind_raw(run, fn, args)``, the callable the
compiler supplies with the plan (as external-call sites carry what their run time
needs), which binds it to the kernel's DFBs and tensors once per launch and runs the
traced IR (docs/raw.md).  ``lang`` never imports the compiler: it only calls what the
plan holds.
"""

from __future__ import annotations

import sys
import threading

from tilewright.device.engine import ACTIVE
from tilewright.errors import ExternCallError, SourceLoc, user_location
from tilewright.lang import state
from tilewright.lang.extern.surface import KernelOnlyError

__all__ = ["call"]


class _PerThread(threading.local):
    def __init__(self) -> None:
        self.launch: object = None
        self.bindings: dict = {}


_PER = _PerThread()


def call(fn: object, *args: object, kernel: object = None, _site: int | None = None) -> object:
    """``ttl.raw.call(fn, *args, kernel=...)``: run raw IR function ``fn`` in this kernel.

    Valid only in a kernel of an operation that validated the call at decoration;
    returns the function's scalar result or None.  ``kernel=`` placed the call (the
    splitter read it); ``_site`` is not part of the language: composition names the
    validated call site of a call it copied with it.
    """
    run, launch = ACTIVE.run, state.CURRENT
    if run is None or launch is None:
        raise KernelOnlyError(
            "ttl.raw.call is valid only in a compiled kernel",
            loc=user_location(),
            hint="call it inside an @ttl.operation (a kernel function or a unified body)",
        )
    frame = sys._getframe(1)
    per = _PER
    if per.launch is not launch:
        per.launch, per.bindings = launch, {}
    key = (run, frame.f_code, frame.f_lasti)
    binding = per.bindings.get(key)
    if binding is None:
        site = _find_site(run, launch, frame, _site)
        binding = per.bindings[key] = site.bind_raw(run, fn, args)
    return binding.invoke(args)


def _find_site(run, launch, frame, site_id):
    setup = launch.setups.get(run.core.index) if launch.setups else None
    plan = getattr(getattr(setup, "op", None), "extern_plan", None)
    site = None
    if plan is not None and site_id is not None:
        site = plan.site_by_id(site_id)
    elif plan is not None:
        pos = next(
            (p for i, p in enumerate(frame.f_code.co_positions()) if 2 * i == frame.f_lasti), None
        )
        site = plan.site_at(pos) if pos is not None else None
    if site is None or not hasattr(site, "bind_raw"):
        raise ExternCallError(
            "this ttl.raw.call was not validated with its operation: write it as "
            "ttl.raw.call(fn, ...) directly in the operation body or one of its kernel functions",
            loc=SourceLoc(frame.f_code.co_filename, frame.f_lineno),
            rule="raw-ir",
        )
    return site
