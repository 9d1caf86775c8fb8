"""``ttl.call_extern_func`` in kernel code: the call emitted per reference C.8.

The call was validated at decoration (``compiler.extern`` made the operation's
``ExternPlan``); here it is found by its source position, its variant is chosen for
the kernel (its logical kernel's keys), and the call is emitted directly: the user's
header joins the kernel's includes (after ``ttlang/support.h``, which defines
``ttlang::DFBDescriptor`` and ``TTLANG_DFB_STORAGE_COMPILER_SRAM``), the
``include_paths`` join the build, and the callee is called with its template
arguments and function arguments -- scalars as ``int32_t`` (``int64_t`` when a static
value needs it), ``ttl.uint32`` values as ``uint32_t``, DFBs as their physical index,
base tensors as the kernel's ``TensorAccessor``, ``ttl.raw_addr(t)`` as the buffer
address.  A scalar result becomes a local.

The compiled engine checks the call as the interpreter does: the emitted C++ announces
the call to the run time before and after it, with the index of the kernel's
:class:`~tilewright.kir.ir.ContractNote` (the call's source position, variant key and
dependency DFBs), and ``lang.extern.checks`` -- the interpreter's checks -- checks the
capacities, the declared DFB contract action by action, escaped C++ exceptions and
dispatch conditions.  A call whose declared effects leave a DFB transaction open, or
that touches a DFB the kernel holds blocks of, is not compiled (the lowering follows
DFB blocks across a call only for balanced effects).
"""

from __future__ import annotations

import ast
import os

from tilewright.compiler.backend.lower import scalars as S
from tilewright.compiler.backend.lower.dataflow import accessor
from tilewright.compiler.backend.lower.values import (
    DFBRef,
    Scalar,
    Static,
    TensorRef,
    Value,
)
from tilewright.kir.ir import Arg, Const, ContractNote, Ty
from tilewright.lang.extern import surface
from tilewright.lang.selectors import LogicalKernel, kernel_of

__all__ = ["extern_call"]

_I32 = (-(1 << 31), (1 << 31) - 1)
_TYPED = {"i32": (Ty.I64, "int32_t"), "i64": (Ty.I64, "int64_t"), "f32": (Ty.F64, "float")}
"""Typed function arguments (``ttl.raw.cpp`` signatures): the IR type and the C++ cast."""


def _site(lw, node: ast.Call):
    plan = lw.world.options.get("extern_plan")
    if plan is None:
        raise lw.fail("an external call the operation did not validate", node)
    pos = (node.lineno, node.end_lineno, node.col_offset, node.end_col_offset)
    site = plan.site_at(pos)
    if site is None:
        raise lw.fail("an external call that cannot be matched to its validated call site", node)
    return site


def _keyword(node: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in node.keywords if k.arg == name), None)


def _dfb_markers(lw, node: ast.Call) -> list[tuple[str, DFBRef]]:
    """``ttl.dfb_descriptor(d)`` / ``ttl.get_dfb_id(d)`` elements of ``template_args``, in order."""
    lst = _keyword(node, "template_args")
    out: list[tuple[str, DFBRef]] = []
    if not isinstance(lst, (ast.List, ast.Tuple)):
        return out
    for elt in lst.elts:
        if isinstance(elt, ast.Call) and len(elt.args) == 1:
            fn = lw.expr(elt.func)
            if isinstance(fn, Static) and fn.obj in (surface.dfb_descriptor, surface.get_dfb_id):
                dfb = lw.expr(elt.args[0])
                if not isinstance(dfb, DFBRef):
                    raise lw.fail("a DFB descriptor of something that is not a DFB", elt)
                out.append(("descriptor" if fn.obj is surface.dfb_descriptor else "dfb_id", dfb))
    return out


def _func_arg_nodes(lw, node: ast.Call, variant_key) -> list[ast.expr]:
    value = _keyword(node, "func_args")
    if value is None:
        return []
    if isinstance(value, (ast.List, ast.Tuple)):
        return list(value.elts)
    if isinstance(value, ast.Dict):
        for k, v in zip(value.keys, value.values):
            sel = lw.expr(k) if k is not None else None
            kernel = kernel_of(sel.obj) if isinstance(sel, Static) else None
            if (
                kernel is not None
                and kernel.key == variant_key
                and isinstance(v, (ast.List, ast.Tuple))
            ):
                return list(v.elts)
        return []
    raise lw.fail("func_args that is not a list literal", node)


def extern_call(lw, node: ast.Call) -> Value:
    site = _site(lw, node)
    kind = lw.kin.kind
    if site.kernel_kinds is not None and kind not in site.kernel_kinds:
        raise lw.fail(f"{site.title} selects {', '.join(sorted(site.kernel_kinds))} kernels", node)
    kernel = kernel_of(lw.kin.selector)
    if kernel is None or kernel.kind != kind:
        kernel = LogicalKernel(kind, "canonical")
    variant_key = site.variant_key(kernel.keys)
    variant = site.variants[variant_key]
    _check_effects(lw, site, variant, node)
    # template arguments
    markers = _dfb_markers(lw, node)
    texts: list[str] = []
    descriptors: set[tuple[int, int, int, int]] = set()
    k = 0
    for t in site.template_args:
        if t.kind in ("descriptor", "dfb_id"):
            if k >= len(markers) or markers[k][0] != t.kind:
                raise lw.fail(
                    "template arguments the compiler cannot match to the call's source", node
                )
            dfb = markers[k][1].dfb
            k += 1
            if t.kind == "descriptor":
                desc = (dfb.index, dfb.block_pages, dfb.block_count, dfb.page_size)
                descriptors.add(desc)
                texts.append(f"ttlang::DFBDescriptor<{desc[0]}, {desc[1]}, {desc[2]}, {desc[3]}>")
            else:
                texts.append(str(dfb.index))
        else:
            texts.append(str(t.text))
    # function arguments
    arg_nodes = _func_arg_nodes(lw, node, variant_key)
    if len(arg_nodes) != len(variant.func_args):
        raise lw.fail("func_args the compiler cannot match to the call's source", node)
    args: list[object] = []
    types: list[str] = []
    for fa, an in zip(variant.func_args, arg_nodes):
        value = lw.expr(an)
        if fa.kind == "dfb":
            if not isinstance(value, DFBRef):
                raise lw.fail(f"func_args element {fa.source} is not a DFB", an)
            args.append(Const(value.dfb.index, Ty.U32))
            types.append("uint32_t")
        elif fa.kind == "tensor":
            if not isinstance(value, TensorRef):
                raise lw.fail(f"func_args element {fa.source} is not a tensor argument", an)
            if kind == "compute":
                raise lw.fail(
                    "a tensor passed to an external call on a compute kernel (LocalTensorAccessor)",
                    an,
                )

            args.append(accessor(lw, value.tensor).name)
            types.append("accessor")
        elif fa.kind == "raw_addr":
            t = raw_addr_tensor(lw, an)
            index = lw.runtime_arg(
                f"{t.param}.address", [int(t.tensor.buffer.address)] * len(lw.world.setups)
            )

            args.append(Arg(index, f"{t.param}.address", Ty.U32))
            types.append("uint32_t")
        else:
            expr = _scalar(lw, value, an, fa.source, fa.kind == "f32")
            if fa.kind == "uint32":
                args.append(S.to_type(expr, Ty.U32))
                types.append("uint32_t")
            elif fa.kind in _TYPED:  # a ttl.raw.cpp signature's declared type
                ty, cpp = _TYPED[fa.kind]
                args.append(S.to_type(expr, ty))
                types.append(cpp)
            else:
                wide = isinstance(expr, Const) and not _I32[0] <= int(expr.value) <= _I32[1]
                args.append(S.to_type(expr, Ty.I64))
                types.append("int64_t" if wide else "int32_t")
    headers: dict = lw.extra.setdefault("headers", {})
    headers.setdefault(site.header, None)
    paths: dict = lw.extra.setdefault("include_paths", {})
    for p in site.include_paths:
        paths.setdefault(os.path.abspath(p), None)
    lw.extra.setdefault("descriptors", set()).update(descriptors)
    contracts: list = lw.extra.setdefault("contracts", [])
    note = ContractNote(
        (node.lineno, node.end_lineno or node.lineno, node.col_offset, node.end_col_offset or 0),
        variant_key,
        _occurrence_dfbs(lw, node, variant, arg_nodes),
        site.title,
        site.header,
        site.loc.file,
    )
    if note not in contracts:
        contracts.append(note)
    result = ""
    rtype = ""
    if site.result_type is not None:
        var = lw.temp("result", Ty.I64)
        result, rtype = var.name, site.result_type.cpp_type
    lw.emit(
        "extern.call",
        site.callee,
        tuple(texts),
        tuple(args),
        tuple(types),
        result,
        rtype,
        contracts.index(note),
    )
    if result:
        return Scalar(lw.locals[result])
    return Static(None)


def _occurrence_dfbs(lw, node: ast.Call, variant, arg_nodes: list[ast.expr]) -> tuple[int, ...]:
    """Declaration positions of the call's DFB dependency occurrences, in occurrence order
    (func_args DFBs, template_args descriptors, dfb_dependencies), as the interpreter's
    binding resolves them at run time."""
    lists: dict[str, list[ast.expr]] = {"func_args": arg_nodes}
    out: list[int] = []
    for occ in variant.occurrences:
        if occ.where not in lists:
            lists[occ.where] = _list_elements(lw, node, occ.where)
        elts = lists[occ.where]
        expr = elts[occ.position] if occ.position < len(elts) else None
        if occ.where == "template_args" and isinstance(expr, ast.Call) and len(expr.args) == 1:
            expr = expr.args[0]  # ttl.dfb_descriptor(dfb)
        value = lw.expr(expr) if expr is not None else None
        if not isinstance(value, DFBRef):
            raise lw.fail(
                f"{occ.where}[{occ.position}] ('{occ.dfb}'), a DFB the compiler cannot resolve",
                node,
            )
        out.append(value.dfb.position)
    return tuple(out)


def _list_elements(lw, node: ast.Call, keyword: str) -> list[ast.expr]:
    """The elements of a keyword's list literal (a starred element leaves the positions
    unknown to the compiler)."""
    value = _keyword(node, keyword)
    if value is None:
        return []
    if not isinstance(value, (ast.List, ast.Tuple)) or any(
        isinstance(e, ast.Starred) for e in value.elts
    ):
        raise lw.fail(f"{keyword} that is not a list literal of plain elements", node)
    return list(value.elts)


def _scalar(lw, value: Value, node: ast.AST, source: str, real: bool = False):
    if isinstance(value, Scalar) and (
        value.expr.ty.is_int or value.expr.ty is Ty.BOOL or (real and value.expr.ty.is_float)
    ):
        return value.expr
    if (
        isinstance(value, Static)
        and hasattr(value.obj, "value")
        and isinstance(value.obj.value, int)
    ):
        return Const(int(value.obj.value), Ty.U32)  # ttl.uint32(v)
    what = "a number" if real else "an integer"
    raise lw.fail(f"func_args element {source} is not {what} the compiler can pass", node)


def raw_addr_tensor(lw, node: ast.expr):
    if isinstance(node, ast.Call) and len(node.args) == 1:
        t = lw.expr(node.args[0])
        if isinstance(t, TensorRef):
            return t.tensor
    raise lw.fail("ttl.raw_addr of something that is not a tensor argument", node)


def _check_effects(lw, site, variant, node: ast.AST) -> None:
    """Declared effects must close every transaction they open; no DFB the kernel holds
    blocks of may be acted on (inspecting it is fine)."""
    names = [o.dfb for o in variant.occurrences]
    balance: dict[str, dict[str, int]] = {}
    for e in variant.effects:
        b = balance.setdefault(names[e.occurrence], {"reserve": 0, "push": 0, "wait": 0, "pop": 0})
        b[e.kind] += e.tiles
    for name, b in balance.items():
        if b["reserve"] != b["push"] or b["wait"] != b["pop"]:
            raise lw.fail(
                f"{site.title} declares DFB effects on '{name}' that leave a transaction open; the "
                "compiler follows DFB blocks across external calls only for balanced effects",
                node,
            )
    held = {h.dfb.name for h in lw.tracker.held.values()}
    # An inspected DFB keeps its protocol state (the run-time monitor stops the call before
    # any action on it), so the blocks the kernel holds of it stay as they are.
    acting = variant.effect_occurrences | set(variant.opaque)
    touched = {names[i] for i in acting} & held
    if touched or (site.unknown_dfb_access and held):
        raise lw.fail(
            f"{site.title} runs while the kernel holds blocks of DFB(s) it may use "
            f"({', '.join(sorted(touched or held))})",
            node,
        )
