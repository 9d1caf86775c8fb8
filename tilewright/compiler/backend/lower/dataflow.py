"""Data movement in kernel code: tensor slices, ``ttl.copy``, transfer handles, semaphores.

A tensor argument becomes a ``TensorAccessor`` (its ``TensorAccessorArgs`` are
compile-time args of the kernel, its buffer address a runtime arg); a slice
``t[r0:r1, c0:c1]`` becomes page ids (tiles for tiled tensors), checked against the
tensor's page grid at run time with the interpreter's ``DeviceError`` message when the
bounds are not static.  ``ttl.copy(slice, blk)`` issues one ``noc_async_read_page``
per tile into the block's L1 (``noc_async_write_page`` the other way), in the
block's row-major tile order; ``handle.wait()`` is the NoC barrier.  Semaphore
operations become ``noc_semaphore_*`` calls on the program semaphore's L1 word.
"""

from __future__ import annotations

import ast
import math

from tilewright.compiler.backend.lower import scalars as S
from tilewright.compiler.backend.lower.blocks import Handle
from tilewright.compiler.backend.lower.protocol import (
    apply_state,
    block_of,
    copy_start,
    wait_handle,
)
from tilewright.compiler.backend.lower.values import (
    BlockRef,
    HandleRef,
    PipeRef,
    RemoteSemRef,
    SemRef,
    SliceRef,
    Static,
    TensorInfo,
    TensorRef,
    Value,
    python_type_name,
    slice_text,
)
from tilewright.compiler.backend.lower.violations import (
    alive,
    check_at_run_time,
    holds,
    violated,
)
from tilewright.compiler.backend.passes.tiles import uop
from tilewright.device.formats import data_type_name
from tilewright.device.kernel_api.accessor import tensor_accessor_args
from tilewright.errors import TilewrightError
from tilewright.kir.ir import (
    AccessorDecl,
    Const,
    Expr,
    Intrinsic,
    Ty,
    u32,
)
from tilewright.kir.ir import Op as IROp
from tilewright.lang.blockstate import Op
from tilewright.lang.rules import copy as copy_rules
from tilewright.lang.rules import sync as sync_rules
from tilewright.ttnn.tensor import (
    slice_index_message,
    slice_range_message,
    slice_rank_message,
    slice_step_message,
)
from tilewright.ttnn.types import Layout

__all__ = [
    "tensor_slice",
    "copy",
    "wait_handle",
    "accessor",
    "sem_op",
    "remote_sem_op",
]


def accessor(lw, t: TensorInfo) -> AccessorDecl:
    """The kernel's TensorAccessor of tensor argument ``t`` (declared on first use)."""
    table: dict[str, AccessorDecl] = lw.extra.setdefault("accessors", {})
    acc = table.get(t.param)
    if acc is None:
        tensor = t.tensor
        buf = tensor.buffer
        words = tuple(int(w) for w in tensor_accessor_args(buf))
        cta = sum(len(a.words) for a in table.values())
        addr = lw.runtime_arg(f"{t.param}.address", [int(buf.address)] * len(lw.world.setups))
        acc = table[t.param] = AccessorDecl(
            name=f"{t.param}_acc",
            tensor=t.param,
            cta=cta,
            words=words,
            addr_arg=addr,
            page_size=int(buf.page_size),
            pages=t.pages,
        )
    return acc


def _layout_unit(t: TensorInfo) -> str:
    return "tiles" if t.tensor.layout == Layout.TILE else "elements"


def _slice_violation(message: str) -> TilewrightError:
    return copy_rules.SLICE.violation(message)


def tensor_slice(lw, base: TensorRef, node: ast.Subscript) -> Value:
    """``t[...]``: page ids with the tensor's own checks (``ttnn.tensor.slice_pages``), static
    or emitted as run-time checks with its messages."""
    t = base.tensor
    grid = t.pages
    unit = _layout_unit(t)
    key = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if len(key) != len(grid):
        violated(lw, _slice_violation(slice_rank_message(len(grid), unit, grid, len(key))))
        return Static(None)
    starts: list[Expr] = []
    stops: list[Expr] = []
    squeezed: list[bool] = []
    for d, (k, n) in enumerate(zip(key, grid)):
        if isinstance(k, ast.Slice):
            if k.step is not None:
                step = lw.scalar(k.step)
                if not isinstance(step, Const):
                    raise lw.fail(f"tensor slice dimension {d}: a run-time step", node)
                if step.value not in (None, 1):
                    violated(lw, _slice_violation(slice_step_message(d, step.value)))
                    return Static(None)
            start = (
                S.to_type(lw.scalar(k.lower), Ty.I64) if k.lower is not None else Const(0, Ty.I64)
            )
            stop = (
                S.to_type(lw.scalar(k.upper), Ty.I64) if k.upper is not None else Const(n, Ty.I64)
            )
            ok = S.logical(
                "and",
                S.logical(
                    "and", S.compare("le", Const(0, Ty.I64), start), S.compare("lt", start, stop)
                ),
                S.compare("le", stop, Const(n, Ty.I64)),
            )
            check_at_run_time(
                lw,
                ok,
                lambda a, b, d=d, n=n: _slice_violation(slice_range_message(d, a, b, n, unit)),
                (start, stop),
            )
            starts.append(start)
            stops.append(stop)
            squeezed.append(False)
        else:
            index = S.to_type(lw.scalar(k), Ty.I64)
            ok = S.logical(
                "and",
                S.compare("le", Const(0, Ty.I64), index),
                S.compare("lt", index, Const(n, Ty.I64)),
            )
            check_at_run_time(
                lw,
                ok,
                lambda i, d=d, n=n: _slice_violation(slice_index_message(d, i, n)),
                (index,),
            )
            starts.append(index)
            stops.append(S.binary("add", index, Const(1, Ty.I64)))
            squeezed.append(True)
    return SliceRef(t, tuple(starts), tuple(stops), tuple(squeezed))


def _extents(lw, sl: SliceRef) -> tuple[int, ...] | None:
    out = []
    for a, b in zip(sl.starts, sl.stops):
        d = S.static_difference(b, a)
        if d is None:
            return None
        out.append(d)
    return tuple(out)


def _kind(v: Value) -> str:
    """What the interpreter's ``ttl.copy`` calls a value in its messages."""
    words = {BlockRef: "block", SliceRef: "tensor slice", TensorRef: "tensor"}
    return words.get(type(v)) or python_type_name(v) or type(v).__name__


def _whole(t: TensorInfo) -> SliceRef:
    grid = t.pages
    return SliceRef(
        t,
        tuple(Const(0, Ty.I64) for _ in grid),
        tuple(Const(n, Ty.I64) for n in grid),
        tuple(False for _ in grid),
    )


def copy(lw, node: ast.Call) -> Value:
    """``ttl.copy(src, dst)``."""
    if node.keywords or len(node.args) != 2:
        raise lw.fail("ttl.copy takes two positional arguments (src, dst)", node)
    src, dst = lw.expr(node.args[0]), lw.expr(node.args[1])
    compute = lw.kin.kind == "compute"
    if not holds(lw, copy_rules.check_dm_only, "ttl.copy", lw.kin.name, compute):
        return HandleRef(-1)
    if isinstance(src, TensorRef):
        src = _whole(src.tensor)
    if isinstance(dst, TensorRef):
        dst = _whole(dst.tensor)
    if isinstance(dst, BlockRef) and isinstance(src, SliceRef):
        return _tensor_block(lw, src, dst, read=True, node=node)
    if isinstance(src, BlockRef) and isinstance(dst, SliceRef):
        return _tensor_block(lw, dst, src, read=False, node=node)
    if isinstance(src, PipeRef) or isinstance(dst, PipeRef):
        return lw.hooks.pipe_copy(lw, src, dst, node)
    violated(lw, copy_rules.copy_ends_violation(_kind(src), _kind(dst)))
    return HandleRef(-1)


def _tensor_block(lw, sl: SliceRef, ref: BlockRef, *, read: bool, node: ast.AST) -> Value:
    held = block_of(lw, ref)
    dfb, t = held.dfb, sl.tensor
    tensor = t.tensor
    if read and not holds(
        lw, copy_rules.check_copy_into, copy_rules.COPY_INTO_BLOCK, held, held.reserve
    ):
        return HandleRef(-1)
    tiled = tensor.layout == Layout.TILE
    ts = tensor.tile_shape
    tensor_end = copy_rules.CopyEnd(
        tiled, tensor.data_format.name, data_type_name(tensor.dtype), (ts.height, ts.width)
    )
    dfb_end = copy_rules.CopyEnd(dfb.tiled, dfb.data_format, data_type_name(dfb.dtype), dfb.tile)
    if not holds(lw, copy_rules.check_copy_pair, dfb.name, tensor_end, dfb_end):
        return HandleRef(-1)
    if not tiled:
        raise lw.fail("ttl.copy of row-major tensors is not compiled yet", node)
    extents = _extents(lw, sl)
    if extents is None:
        raise lw.fail("a tensor slice whose extent is not known at compile time", node)
    trimmed = tuple(e for e, q in zip(extents, sl.squeezed) if not q)
    if not copy_rules.covers(extents, trimmed, dfb.shape):
        text, values = slice_text(sl)
        try:
            copy_rules.check_covers(text, extents, trimmed, held, dfb.shape, tensor_end.tile)
        except TilewrightError as exc:
            violated(lw, exc, values)
        return HandleRef(-1)
    if not apply_state(lw, ref, Op.COPY_DST if read else Op.COPY_SRC):
        return HandleRef(-1)
    held = lw.tracker.held.get(ref.site, held)
    acc = accessor(lw, t)
    hid = lw.handles + 1
    lw.emit("trace.clock", copy_start(lw, hid))  # the trace's copy span starts at issue
    _emit_pages(lw, acc, sl, held, read)
    lw.handles = hid
    lw.tracker.handles[hid] = Handle(hid, ref.site, "read" if read else "write", slice=sl)
    if ref.site in lw.tracker.held:
        lw.tracker.update(ref.site, pending=(*lw.tracker.held[ref.site].pending, hid))
    return HandleRef(hid)


def _emit_pages(lw, acc: AccessorDecl, sl: SliceRef, held, read: bool) -> None:
    """One page transfer per tile of the block, in row-major block order."""
    grid = acc.pages
    strides = [math.prod(grid[d + 1 :]) for d in range(len(grid))]
    base: Expr = Const(0, Ty.I64)
    for start, stride in zip(sl.starts, strides):
        base = S.binary("add", base, S.binary("mul", start, Const(stride, Ty.I64)))
    rows, cols = (
        (held.dfb.shape[-2], held.dfb.shape[-1])
        if len(held.dfb.shape) >= 2
        else (1, held.dfb.shape[-1])
    )
    if len(held.dfb.shape) > 2:
        raise lw.fail("copies of blocks of rank above 2 are not compiled yet")
    row_stride = strides[-2] if len(grid) >= 2 else cols
    base_u = S.to_type(base, Ty.U32)
    page_size = held.dfb.page_size
    code = "noc.read_page" if read else "noc.write_page"
    addr = held.addr

    def page(i: Expr, j: Expr) -> tuple[Expr, Expr]:
        p = _uadd(base_u, _uadd(_umul(i, row_stride), j))
        offset = _umul(_uadd(_umul(i, cols), j), page_size)
        return p, _uadd(addr, offset)

    if rows * cols <= 4:
        for i in range(rows):
            for j in range(cols):
                p, a = page(u32(i), u32(j))
                lw.emit(code, acc.name, p, a)
        return
    vi, vj = lw.local("tw_i", Ty.U32), lw.local("tw_j", Ty.U32)
    p, a = page(vi, vj)

    inner = IROp(
        "for", (vj, u32(0), u32(cols), 1), ((IROp(code, (acc.name, p, a), (), lw.loc),),), lw.loc
    )
    lw.emit("for", vi, u32(0), u32(rows), 1, regions=((inner,),))


def _uadd(a: Expr, b: Expr) -> Expr:
    return uop("add", a, b)


def _umul(a: Expr, k: int) -> Expr:
    return uop("mul", a, u32(k))


# -- semaphores --------------------------------------------------------------------------------


def _dm(lw, what: str) -> bool:
    compute = lw.kin.kind == "compute"
    return holds(lw, sync_rules.check_semaphore_kernel, what, lw.kin.name, compute)


def _u32_value(lw, node: ast.Call, what: str) -> Expr | None:
    """A semaphore value: checked now when it is a constant, at run time otherwise."""
    if len(node.args) != 1 or node.keywords:
        raise lw.fail(f"{what} takes one value", node)
    v = lw.scalar(node.args[0])
    if isinstance(v, Const):
        if not holds(lw, sync_rules.check_semaphore_value, v.value, what):
            return None
        return u32(int(v.value))
    if not v.ty.is_int:
        raise lw.fail(f"{what} of a value that is not an int", node)
    if v.ty is not Ty.U32:
        values = sync_rules.SEMAPHORE_VALUES
        wide = S.to_type(v, Ty.I64) if v.ty is Ty.I64 else v
        ok = S.compare("lt", wide, Const(values.stop, wide.ty))
        if wide.ty is Ty.I64:
            ok = S.logical("and", S.compare("le", Const(values.start, Ty.I64), wide), ok)
        check_at_run_time(
            lw,
            ok,
            lambda shown: sync_rules.SEMAPHORE_VALUE.violation(
                sync_rules.semaphore_value_message(what, shown)
            ),
            (v,),
        )
    return S.to_type(v, Ty.U32)


def _sem_addr(sem: SemRef) -> Expr:
    return Intrinsic("semaphore", (u32(sem.sem_id),), Ty.U32)


def sem_op(lw, sem: SemRef, name: str, node: ast.Call) -> Value:
    what = {
        "set": "ttl.Semaphore.set",
        "wait_eq": "ttl.Semaphore.wait_eq",
        "wait_ge": "ttl.Semaphore.wait_ge",
    }[name]
    if not _dm(lw, what):
        return Static(None)
    value = _u32_value(lw, node, what)
    if value is None:
        return Static(None)
    if name == "set":
        lw.emit("sem.set", _sem_addr(sem), value)
    else:
        lw.emit("sem.wait", _sem_addr(sem), value, "eq" if name == "wait_eq" else "ge")
    return Static(None)


def remote_sem_op(lw, rs: RemoteSemRef, name: str, node: ast.Call) -> Value:
    kind = "MulticastRemoteSemaphore" if rs.multicast else "UnicastRemoteSemaphore"
    what = f"{kind}.{name}"
    if name == "inc" and rs.multicast:
        violated(lw, sync_rules.multicast_inc_violation())
        return Static(None)
    if not _dm(lw, what):
        return Static(None)
    if name == "inc" and not node.args:
        value: Expr | None = u32(1)
    else:
        value = _u32_value(lw, node, what)
    if value is None:
        return Static(None)
    device = lw.world.device
    addr = _sem_addr(rs.sem)
    if not rs.multicast:
        core = device.core(*rs.lo)
        if name == "inc":
            lw.emit("sem.inc", u32(core.noc_x), u32(core.noc_y), addr, value)
        else:
            lw.emit("noc.inline_write", u32(core.noc_x), u32(core.noc_y), addr, value)
        return Static(None)
    nodes = [(x, y) for y in range(rs.lo[1], rs.hi[1] + 1) for x in range(rs.lo[0], rs.hi[0] + 1)]
    me_x = S.to_type(Intrinsic("logical_x", (), Ty.U32), Ty.I64)
    me_y = S.to_type(Intrinsic("logical_y", (), Ty.U32), Ty.I64)
    for x, y in nodes:
        core = device.core(x, y)
        with lw.new_region() as write:
            lw.emit("noc.inline_write", u32(core.noc_x), u32(core.noc_y), addr, value)
        with lw.new_region() as alone, alive(lw):  # the range is the sender alone: an error
            if len(nodes) == 1:
                holds(
                    lw, sync_rules.multicast_set_targets, device, core, rs.lo, rs.hi, rs.sem.address
                )
        not_me = S.logical(
            "or", S.compare("ne", me_x, Const(x, Ty.I64)), S.compare("ne", me_y, Const(y, Ty.I64))
        )
        lw.emit("if", not_me, regions=(tuple(write), tuple(alone)))
    return Static(None)
