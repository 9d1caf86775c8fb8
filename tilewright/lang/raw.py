"""``ttl.raw.call`` at kernel time: the entry point of a raw IR function call, on the Python engine.

The compiler validated and traced every ``ttl.raw.call`` site at decoration and put it
in the operation's ``ExternPlan`` (``compiler.raw.site.RawCallSite``).  Here the
running call finds its site -- by the id composition gave it, else by source position
-- and its first evaluation on a kernel run *binds* it (a :class:`Binding`): the kernel
kind must be the one it was traced for, DFB arguments are the node's DataflowBuffers
(their capacities checked against the computed effects, and no block of them held by
the kernel -- the raw code drives the circular buffer directly, as external C++ does,
so the language's block bookkeeping must be idle on them), tensors become the kernel
API's ``TensorAccessor``, and the function is traced again with the physical CB
indices and the kernel's DST capacity.  Every evaluation then runs the traced ops with
the kernel-IR interpreter (``kir.interp``) on the running core -- the same ``cb_*``,
``copy_tile``, ``pack_tile``, ``noc_*`` calls of the kernel API that Python kernels and
the C++ the emitter writes use -- and returns the scalar result (docs/raw.md).

``lang`` never imports the compiler: what needs it -- tracing, and retracing when a
folded value changed -- the site does (:class:`RawSite`, the services the plan record
offers).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Protocol

from tilewright.device.engine import ACTIVE
from tilewright.device.kernel_api.accessor import (
    TensorAccessor,
    TensorAccessorArgs,
    tensor_accessor_args,
)
from tilewright.device.kernel_api.compute import _capacity
from tilewright.errors import (
    DFBContractError,
    ExternCallError,
    KernelError,
    RawIRError,
    SourceLoc,
    TilewrightError,
    user_location,
)
from tilewright.kir import interp
from tilewright.kir.ir import KIND_COMPUTE, AccessorDecl, CBDecl
from tilewright.kir.optable import OPS
from tilewright.lang import state
from tilewright.lang.dfb import DataflowBuffer
from tilewright.lang.extern.surface import KernelOnlyError
from tilewright.lang.extern.types import RawAddr
from tilewright.lang.raw_types import fits, range_message
from tilewright.ttnn.tensor import Tensor

__all__ = ["call", "Binding", "RawSite", "check_capacities"]


class RawSite(Protocol):
    """What a validated raw call site (``compiler.raw.site.RawCallSite``) offers kernel time:
    its plan data (read-only) and the two services that need the compiler."""

    @property
    def id(self) -> int: ...
    @property
    def fn(self) -> Any: ...  # the RawIRFunction: name, params, reads()
    @property
    def kind(self) -> str: ...
    @property
    def binds(self) -> tuple[Any, ...]: ...
    @property
    def variants(self) -> Mapping[Any, Any]: ...
    @property
    def loc(self) -> SourceLoc | None: ...
    @property
    def title(self) -> str: ...

    def current_binds(self, values: dict[int, object]) -> tuple[Any, ...]: ...

    def trace_bound(
        self,
        kind: str,
        binds: list[Any],
        *,
        dst_tiles: int,
        cbs: tuple[CBDecl, ...],
        accessors: tuple[AccessorDecl, ...],
    ) -> Any: ...  # a RawTrace: params, param_positions, body, result


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
        binding = per.bindings[key] = Binding(site, run, fn, args)
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
    if site is None or not hasattr(site, "trace_bound"):
        raise ExternCallError(
            "this ttl.raw.call was not validated with its operation: write it as "
            "ttl.raw.call(fn, ...) directly in the operation body or one of its kernel functions",
            loc=SourceLoc(frame.f_code.co_filename, frame.f_lineno),
            rule="raw-ir",
        )
    return site


_TRACES: dict[tuple, Any] = {}
"""Traces by call site and binding: every launch and node with the same CBs, accessors and
DST capacity runs the same (frozen) ops, so the interpreter's compiled closures are reused."""
_MAX_TRACES = 256


def check_capacities(site: RawSite, dfbs: list[tuple[str, int, int]]) -> None:
    """Each computed action fits its DFB (``dfbs``: per occurrence, name, block count and
    block pages): the same check and message on both engines."""
    for e in site.variants[None].effects:
        name, blocks, pages = dfbs[e.occurrence]
        if e.tiles > blocks * pages:
            raise RawIRError(
                f"{site.title} does {e.kind}({name}, {e.tiles}) but DFB '{name}' holds "
                f"{blocks * pages} tiles ({blocks} blocks of {pages})",
                loc=site.loc,
            )


class Binding:
    """One raw call site bound on one kernel run: the trace with physical CBs, the env."""

    __slots__ = ("site", "run", "traced", "env", "dfbs", "tensors", "shared")

    def __init__(self, site: RawSite, run, fn, args) -> None:
        self.site = site
        self.run = run
        kind = run.kernel_context().kernel.kind
        if fn is not site.fn:
            raise self.error(f"calls {getattr(fn, 'name', fn)!r} at run time, not '{site.fn.name}'")
        if kind != site.kind:
            raise self.error(f"is traced for a {site.kind} kernel but runs on {run.label}")
        if len(args) != len(site.binds):
            raise self.error(f"has {len(args)} arguments at run time, {len(site.binds)} in source")
        # Folded arguments read as the program has them now (a changed module value retraces).
        site_binds = site.current_binds(
            {i: a for i, (b, a) in enumerate(zip(site.binds, args)) if b.kind == "const"}
        )
        binds: list = []  # the site's binds, DFB parameters bound to physical CBs
        cbs: dict[int, CBDecl] = {}
        accessors: dict[str, object] = {}
        decls: list[AccessorDecl] = []
        self.dfbs: list[tuple[int, DataflowBuffer]] = []
        self.tensors: list[tuple[int, object]] = []
        for i, (bind, value) in enumerate(zip(site_binds, args)):
            pname = site.fn.params[i][0]
            if bind.kind == "dfb":
                if not isinstance(value, DataflowBuffer) or value.index is None:
                    raise self.error(f"argument '{pname}' is {type(value).__name__}, not a DFB")
                cbs[value.index] = CBDecl(
                    value.index,
                    value.name,
                    value.data_format.name,
                    value.page_size,
                    value.block_pages * value.block_count,
                    value.block_pages,
                )
                binds.append(replace(bind, value=value.index))
                self.dfbs.append((i, value))
            elif bind.kind == "accessor":
                name = str(bind.value)
                accessors[name] = self._accessor(pname, value)
                decls.append(AccessorDecl(name, pname, 0, (), 0, 0, ()))
                binds.append(bind)
                self.tensors.append((i, value))
            else:
                binds.append(bind)
        self._check_capacities()
        # The computed actions on DFBs that share a physical index are reported to the index's
        # guard (as an external call's declared ones are), so the run-time sharing check sees
        # them; only expanded effects can share (opaque dependencies keep their own index).
        # They are reported when the call returns: the interpreter runs the ops as one block,
        # and a report before the call would see a sharer the call's own earlier waits drain.
        by_occ = [dfb for _, dfb in self.dfbs]
        self.shared = tuple(
            (by_occ[e.occurrence].share_guard, by_occ[e.occurrence], e.kind, e.tiles)
            for e in site.variants[None].effects
            if getattr(by_occ[e.occurrence], "share_guard", None) is not None
        )
        compute = kind == KIND_COMPUTE
        dst_tiles = 0
        fp32 = True
        if compute:
            ctx = run.kernel_context()
            dst_tiles = _capacity(ctx)
            fp32 = bool(ctx.compute.fp32_dest_acc_en)
        key = (
            site.id, kind, tuple(binds), dst_tiles, tuple(cbs.values()), tuple(decls),
            site.fn.reads(),
        )  # fmt: skip
        traced = _TRACES.get(key)
        if traced is None:
            try:
                traced = site.trace_bound(
                    kind, binds, dst_tiles=dst_tiles, cbs=tuple(cbs.values()),
                    accessors=tuple(decls),
                )  # fmt: skip
            except TilewrightError as exc:
                exc.add_note(f"while tracing {site.title} at {site.loc} for {run.label}")
                raise
            if len(_TRACES) >= _MAX_TRACES:
                _TRACES.pop(next(iter(_TRACES)))
            _TRACES[key] = traced
        self.traced = traced
        self._claim_roles()
        self.env = interp.Env(
            values={},
            kind=kind,
            cbs=cbs,
            accessors=accessors,
            args=(),
            dst_tiles=dst_tiles,
            fp32_dest_acc=fp32,
        )

    def _claim_roles(self) -> None:
        """The function's reserves / pushes make this kernel a producer of the DFB, its waits /
        pops a consumer, as the language's own acquisitions do: a second producer or consumer
        kernel is the interpreter's DFBContractError, named at this call."""
        by_index = {dfb.index: dfb for _, dfb in self.dfbs}
        roles: dict[tuple[int, bool], None] = {}
        stack = [self.traced.body]
        while stack:
            for op in stack.pop():
                effect = OPS[op.code].effect
                if effect is not None:
                    roles[(int(op.args[0]), effect in ("reserve", "push"))] = None
                stack.extend(op.regions)
        for index, producer in roles:
            dfb = by_index.get(index)
            if dfb is None:
                continue
            try:
                dfb._role(self.run, producer)
            except DFBContractError as exc:
                raise DFBContractError(
                    f"{self.site.title}: {exc.message}", loc=self.site.loc, rule=exc.rule
                ) from None

    def error(self, message: str) -> RawIRError:
        return RawIRError(f"{self.site.title} {message}", loc=self.site.loc)

    def _accessor(self, pname: str, tensor: object) -> object:
        if not isinstance(tensor, Tensor):
            raise self.error(f"argument '{pname}' is {type(tensor).__name__}, not a tensor")
        buf = tensor.buffer
        ctx = self.run.context
        saved = ctx.compile_args
        ctx.compile_args = tensor_accessor_args(buf)  # decode this tensor's words
        try:
            args = TensorAccessorArgs(0)
        finally:
            ctx.compile_args = saved
        return TensorAccessor(args, buf.address, buf.page_size)

    def _check_capacities(self) -> None:
        check_capacities(self.site, [(d.name, d.block_count, d.block_pages) for _, d in self.dfbs])

    def invoke(self, args: tuple[object, ...]):
        run, env, traced = self.run, self.env, self.traced
        for i, dfb in self.dfbs:
            if args[i] is not dfb:
                raise self.error("names a different DFB than when it was first bound")
            held = [b for b in (*dfb._reserved, *dfb._waited) if b.run is run]
            if held:
                raise self.error(
                    f"runs while the kernel holds block {held[0].describe()} of DFB '{dfb.name}'; "
                    "push / pop it first (the raw code drives the DFB's circular buffer directly)"
                )
        for i, tensor in self.tensors:
            if args[i] is not tensor:
                raise self.error("names a different tensor than when it was first bound")
        for var, pos in zip(traced.params, traced.param_positions):
            rt = self.site.fn.params[pos][1]
            v = args[pos]
            if rt.kind == "addr":
                v = self._raw_addr(pos, v)
            elif not fits(rt, v):
                pname = self.site.fn.params[pos][0]
                raise KernelError(
                    range_message(self.site.title, pos + 1, pname, rt, repr(v)),
                    loc=self.site.loc,
                    rule="raw-arg-range",
                )
            assert isinstance(v, (int, float))
            env.bind(var, v)  # as C++ passes it (an f32 parameter rounds to float32)
        tracer = state.TRACER
        start = run.clock
        interp.run(traced.body, env)
        for guard, dfb, kind, pages in self.shared:  # a shared physical index (C.7)
            if guard is not None:
                guard.extern_action(dfb, kind, pages)
        if tracer is not None:
            tracer.span(run, f"raw {self.site.fn.name}", start, run.clock)
        if traced.result is None:
            return None
        return interp.eval_expr(traced.result, env)

    def _raw_addr(self, pos: int, marker: object) -> int:
        tensor = getattr(marker, "tensor", None)
        if not isinstance(marker, RawAddr) or tensor is None:
            raise self.error(f"argument {pos + 1} is not ttl.raw_addr(tensor) at run time")
        return int(tensor.buffer.address)
