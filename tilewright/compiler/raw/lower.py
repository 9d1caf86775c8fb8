"""``ttl.raw.call`` in the compiled engine: a ``static inline`` function and a call.

The call was validated and traced at decoration (:mod:`.frontend`).  Lowering the
kernel finds its site by source position, binds the arguments to the kernel's
resources -- DFBs to their circular-buffer indices, tensors to the kernel's
``TensorAccessor``, run-time scalars to expressions -- and traces the function again
with them and the kernel's DST capacity.  The traced body becomes a
:class:`~tilewright.kir.ir.Function` of the kernel (one per specialisation: identical
bindings share it) and the call a ``raw.call`` op; the emitter writes the function as
``static inline`` C++ before the kernel's entry point.

The lowering follows the kernel's DFB blocks statically, so a raw call must leave the
DFBs it touches as it found them -- every reserve pushed and every wait popped within
each loop body and branch -- and must not run while the kernel holds a block of one of
them (the same rules as an external call's declared effects).
"""

from __future__ import annotations

import ast

from tilewright.compiler.backend.lower import scalars as S
from tilewright.compiler.backend.lower.dataflow import accessor
from tilewright.compiler.backend.lower.extern import raw_addr_tensor
from tilewright.compiler.backend.lower.values import DFBRef, Scalar, Static, TensorRef, Value
from tilewright.compiler.raw.frontend import RawCallSite
from tilewright.compiler.raw.site import current_binds
from tilewright.compiler.raw.trace import Bind, trace
from tilewright.device.cb import check_pop, check_push
from tilewright.errors import TilewrightError
from tilewright.kir.ir import AccessorDecl, Arg, BinOp, CBDecl, Const, Function, Op, Ty
from tilewright.kir.optable import OPS
from tilewright.lang.raw import check_capacities
from tilewright.lang.raw_types import int_range, ir_type, range_message

__all__ = ["raw_call"]


def _site(lw, node: ast.Call) -> RawCallSite:
    plan = lw.world.options.get("extern_plan")
    pos = (node.lineno, node.end_lineno, node.col_offset, node.end_col_offset)
    site = plan.site_at(pos) if plan is not None else None
    if not isinstance(site, RawCallSite):
        raise lw.fail("a ttl.raw.call that cannot be matched to its validated call site", node)
    return site


def _folded(lw, site: RawCallSite, arg: ast.expr) -> object:
    """The value a folded (compile-time) argument has for this lowering."""
    value = lw.expr(arg)
    if isinstance(value, Scalar) and isinstance(value.expr, Const):
        return value.expr.value
    if isinstance(value, Static):
        return value.obj
    raise lw.fail(f"an argument of {site.title} folded at decoration is not a constant here", arg)


def raw_call(lw, node: ast.Call) -> Value:
    site = _site(lw, node)
    kind = lw.kin.kind
    if kind != site.kind:
        raise lw.fail(f"{site.title} is traced for a {site.kind} kernel", node)
    args = node.args[1:]
    binds: list[Bind] = []
    scalars: list[object] = []
    accessors: list[str] = []
    cbs: dict[int, CBDecl] = {}
    names: dict[int, str] = {}
    occurrences: list[tuple[str, int, int]] = []
    # Folded arguments read as the program has them now (a changed module value retraces).
    site_binds = current_binds(
        site,
        {
            i: _folded(lw, site, a)
            for i, (b, a) in enumerate(zip(site.binds, args))
            if b.kind == "const"
        },
    )
    for (pname, rt), bind, arg in zip(site.fn.params, site_binds, args, strict=True):
        if bind.kind == "dfb":
            value = lw.expr(arg)
            if not isinstance(value, DFBRef):
                raise lw.fail(f"argument '{pname}' of {site.title} is not a DFB", arg)
            d = value.dfb
            cbs[d.index] = CBDecl(
                d.index, d.name, d.data_format, d.page_size, d.num_pages, d.block_pages, d.tile
            )
            names[d.index] = d.name
            occurrences.append((d.name, d.block_count, d.block_pages))
            binds.append(Bind("dfb", d.index))
        elif bind.kind == "accessor":
            value = lw.expr(arg)
            if not isinstance(value, TensorRef):
                raise lw.fail(f"argument '{pname}' of {site.title} is not a tensor argument", arg)

            acc = accessor(lw, value.tensor)
            binds.append(Bind("accessor", acc.name))
            accessors.append(acc.name)
        elif bind.kind == "const":
            binds.append(bind)
        elif rt.kind == "addr":
            t = raw_addr_tensor(lw, arg)
            index = lw.runtime_arg(
                f"{t.param}.address", [int(t.tensor.buffer.address)] * len(lw.world.setups)
            )
            scalars.append(Arg(index, f"{t.param}.address", Ty.U32))
            binds.append(bind)
        else:
            value = lw.expr(arg)
            if not isinstance(value, Scalar):
                raise lw.fail(f"argument '{pname}' of {site.title} is not a scalar", arg)
            ty = ir_type(rt)
            if value.expr.ty.is_float != ty.is_float and not ty.is_float:
                raise lw.fail(
                    f"argument '{pname}' of {site.title} is a float; {rt!r} is an integer", arg
                )
            _range_check(lw, site, len(binds), pname, rt, value.expr)
            scalars.append(S.to_type(value.expr, ty))
            binds.append(bind)
    check_capacities(site, occurrences)
    held = {h.dfb.name for h in lw.tracker.held.values()} & set(names.values())
    if held:
        raise lw.fail(
            f"{site.title} runs while the kernel holds blocks of DFB(s) it uses "
            f"({', '.join(sorted(held))})",
            node,
        )
    all_cbs = {d.index: d for d in cbs.values()}
    table: dict[str, AccessorDecl] = lw.extra.get("accessors", {})
    try:
        traced = trace(
            site.fn,
            kind,
            binds,
            dst_tiles=lw.dst_tiles,
            cbs=tuple(all_cbs.values()),
            accessors=tuple(a for a in table.values() if a.name in accessors),
            source=site.loc.file,
        )
    except TilewrightError as exc:
        exc.add_note(f"while tracing {site.title} at {site.loc} for kernel '{lw.kin.name}'")
        raise
    _check_protocol(traced.body, names)
    _check_balanced(lw, site, traced.body, names, node)
    used = lw.extra.setdefault("cbs", set())
    roles = lw.extra.setdefault("roles", {})
    _note_roles(traced.body, used, roles)
    functions: dict[tuple, Function] = lw.extra.setdefault("functions", {})
    key = (id(site.fn), tuple(binds))
    fn = functions.get(key)
    if fn is None:
        fn = functions[key] = Function(
            name=f"raw_{site.fn.name}_{len(functions) + 1}",
            params=traced.params,
            accessors=traced.accessors,
            locals=traced.locals,
            body=traced.body,
            result=traced.result,
            title=f"raw IR function {site.fn.name} at {site.fn.loc} (ttl.raw.call at {site.loc})",
        )
    result = ""
    if traced.result is not None:
        var = lw.temp("raw", traced.result.ty)
        result = var.name
    lw.emit("raw.call", fn.name, tuple(scalars), tuple(accessors), result)
    if result:
        return Scalar(lw.locals[result])
    return Static(None)


def _range_check(lw, site, pos: int, pname: str, rt, e) -> None:
    """A run-time scalar outside its marker's range fails at the call, as on the Python
    engine (``KernelError`` naming the argument and its value)."""
    bounds = int_range(rt)
    if bounds is None or not e.ty.is_int:
        return
    e64 = S.to_type(e, Ty.I64)
    lo, hi = bounds
    cond = BinOp(
        "or",
        BinOp("lt", e64, Const(lo, Ty.I64), Ty.BOOL),
        BinOp("gt", e64, Const(min(hi, (1 << 63) - 1), Ty.I64), Ty.BOOL),
        Ty.BOOL,
    )
    message = range_message(site.title, pos + 1, pname, rt, "%lld")
    fail = Op("failf", ("KernelError", message, (e64,)), (), lw.loc)
    lw.emit("if", cond, regions=((fail,), ()))


def _note_roles(ops: tuple[Op, ...], used: set, roles: dict) -> None:
    """The CBs the function touches are the kernel's; reserve/push produce, wait/pop consume."""
    for op in ops:
        info = OPS.get(op.code)
        if info is not None and info.effect is not None:
            cb = int(op.args[0])  # type: ignore[call-overload]
            used.add(cb)
            role = "producer" if info.effect in ("reserve", "push") else "consumer"
            roles.setdefault(cb, set()).add(role)
        elif op.code in ("copy_tile", "pack_tile", "binary_tiles"):
            for a, (_name, kind) in zip(op.args, info.operands if info else ()):
                if kind == "cb":
                    used.add(int(a))  # type: ignore[call-overload]
        for region in op.regions:
            _note_roles(region, used, roles)


def _check_protocol(ops: tuple[Op, ...], names: dict[int, str]) -> None:
    """The kernel-API protocol rules (``device/cb.py``: a push within the reservation, a pop
    within the waited pages) on the function's straight-line start, ahead of time: the error
    the Python engine raises when it runs the call, at the same op.  The function starts
    with nothing reserved or waited (a raw call never runs while its kernel holds a block);
    ops after the first conditional or loop are left to the run (and to the balance rule)."""
    reserved: dict[int, int] = {}
    waited: dict[int, int] = {}
    for op in ops:
        info = OPS.get(op.code)
        if info is None or info.effect is None:
            if op.regions:
                return
            continue
        cb, n = int(op.args[0]), int(op.args[1])  # type: ignore[call-overload]
        name = names.get(cb, f"cb {cb}")
        try:
            if info.effect == "reserve":
                reserved[cb] = max(reserved.get(cb, 0), n)
            elif info.effect == "wait":
                waited[cb] = max(waited.get(cb, 0), n)
            elif info.effect == "push":
                reserved[cb] = check_push(name, n, reserved.get(cb, 0))
            else:
                waited[cb] = check_pop(name, n, waited.get(cb, 0))
        except TilewrightError as err:
            err.loc = op.loc
            raise


def _check_balanced(lw, site, ops: tuple[Op, ...], names: dict[int, str], node) -> None:
    """Every region of the function pushes what it reserves and pops what it waits for."""
    totals: dict[tuple[int, str], int] = {}
    for op in ops:
        info = OPS.get(op.code)
        if info is not None and info.effect is not None:
            k = (int(op.args[0]), info.effect)  # type: ignore[call-overload]
            totals[k] = totals.get(k, 0) + int(op.args[1])  # type: ignore[call-overload]
        for region in op.regions:
            _check_balanced(lw, site, region, names, node)
    for cb in {cb for cb, _ in totals}:
        r, p = totals.get((cb, "reserve"), 0), totals.get((cb, "push"), 0)
        w, o = totals.get((cb, "wait"), 0), totals.get((cb, "pop"), 0)
        if r != p or w != o:
            raise lw.fail(
                f"{site.title} leaves a transaction open on DFB '{names.get(cb, cb)}' (reserve "
                f"{r} / push {p}, wait {w} / pop {o} tiles in one region); the compiler follows DFB "
                "blocks across raw calls only when each loop body and branch is balanced",
                node,
            )
