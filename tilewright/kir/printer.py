"""The text form of the kernel IR (``tilewright explain --ir``, verifier failures).

One line per op, ``code operand, operand, ...`` in the op table's operand order,
regions indented in braces, the user's line at the right (``# file.py:52``)::

    kernel compute : compute @ trisc  dst=4 fp32
      cb 0 "a_dfb" Float16_b pages=8 page_size=2048 block=4
      local %i : i64
      for %i = 0, 8, 1 {                                         # prog.py:81
        cb.wait_front 0, 4                                       # prog.py:83
        ...
      }

Expressions print inline: ``%x`` locals, ``rt[0]:u32`` runtime arguments,
``@logical_x()`` kernel-API queries, ``(a floordiv b)`` operators, ``u32(x)`` casts.
A marked op (``mark``, the verifier's offending op) gets ``>>>`` and a note line.
"""

from __future__ import annotations

import os

from tilewright.kir.ir import (
    Arg,
    BinOp,
    Cast,
    Const,
    Intrinsic,
    Kernel,
    Op,
    Ty,
    UnOp,
    Var,
)
from tilewright.kir.optable import OPS
from tilewright.kir.scalar import OPERATORS

__all__ = ["print_expr", "print_kernel", "print_op_line"]


def print_expr(e: object) -> str:
    """An operand as text."""
    if isinstance(e, Const):
        if e.ty is Ty.BOOL:
            return "true" if e.value else "false"
        text = repr(e.value)
        return text if e.ty in (Ty.I64, Ty.F64) else f"{text}:{e.ty}"
    if isinstance(e, Var):
        return f"%{e.name}"
    if isinstance(e, Arg):
        return f"rt[{e.index}]:{e.ty}"
    if isinstance(e, BinOp):
        row = OPERATORS.get(e.op)
        return f"({print_expr(e.a)} {row.symbol if row else e.op} {print_expr(e.b)})"
    if isinstance(e, UnOp):
        return f"({e.op} {print_expr(e.a)})"
    if isinstance(e, Intrinsic):
        return f"@{e.name}({', '.join(print_expr(a) for a in e.args)})"
    if isinstance(e, Cast):
        return f"{e.ty}({print_expr(e.a)})"
    if isinstance(e, tuple):
        return "[" + ", ".join(print_expr(x) for x in e) + "]"
    if isinstance(e, str):
        return f'"{e}"' if (not e or " " in e or '"' in e) else e
    return repr(e)


def print_op_line(op: Op) -> str:
    """The op's own line (no regions, no location)."""
    info = OPS.get(op.code)
    if info is not None and info.text is not None and len(op.args) == len(info.operands):
        return info.text(op, print_expr)
    if info is None:
        return f"{op.code} {', '.join(print_expr(a) for a in op.args)}  <unknown op>"
    return f"{op.code} {', '.join(print_expr(a) for a in op.args)}".rstrip()


def _loc_text(op: Op) -> str:
    if op.loc is None:
        return ""
    return f"# {os.path.basename(op.loc.file)}:{op.loc.line}"


def _lines(ops: tuple[Op, ...], depth: int, mark: Op | None, note: str, out: list[str]) -> None:
    pad = "  " * depth
    for op in ops:
        head = pad + print_op_line(op)
        if op.regions:
            head += " {"
        loc = _loc_text(op)
        if loc:
            head = f"{head:<64} {loc}"
        if op is mark:
            head = ">>>" + head[3:] if head.startswith("   ") else ">>> " + head
        out.append(head)
        if op is mark and note:
            out.append(f"{pad}^^^ {note}")
        for i, region in enumerate(op.regions):
            if i and not region:
                continue
            if i:
                out.append(pad + "} else {")
            _lines(region, depth + 1, mark, note, out)
        if op.regions:
            out.append(pad + "}")


def print_kernel(kernel: Kernel, *, mark: Op | None = None, note: str = "") -> str:
    """The whole kernel as text; ``mark`` (an op of it, by identity) is flagged with ``note``."""
    head = f"kernel {kernel.name} : {kernel.kind} @ {kernel.slot}"
    if kernel.kind == "compute":
        mode = "fp32" if kernel.fp32_dest_acc else "bf16"
        sync = " full-sync" if kernel.dst_full_sync else ""
        head += f"  dst={kernel.dst_tiles} {mode}{sync}"
    else:
        head += f"  noc={kernel.noc}"
    out = [head]
    for cb in kernel.cbs:
        out.append(
            f'  cb {cb.index} "{cb.name}" {cb.data_format} pages={cb.num_pages} '
            f"page_size={cb.page_size} block={cb.block_pages} tile={cb.tile[0]}x{cb.tile[1]}"
            + ("" if cb.role == "dfb" else f" ({cb.role})")
        )
    for acc in kernel.accessors:
        out.append(
            f"  accessor {acc.name} = tensor {acc.tensor} cta={acc.cta} words={list(acc.words)} "
            f"addr=rt[{acc.addr_arg}] page_size={acc.page_size} pages={list(acc.pages)}"
        )
    for i, name in enumerate(kernel.args):
        out.append(f"  arg rt[{i}] {name}")
    for header in kernel.headers:
        out.append(f'  include "{header}"')
    for v in kernel.locals:
        out.append(f"  local %{v.name} : {v.ty}")
    for w in kernel.waits:
        holds = "; ".join(w.holds)
        out.append(
            f"  wait-note line {w.line} cb {w.cb} pages {w.pages} dfb {w.dfb}: {holds or '-'}"
        )
    for n in kernel.sem_waits:
        out.append(f"  wait-note line {n.line} sem {n.addr:#x} value {n.value}: {n.text}")
    for i, c in enumerate(kernel.contracts):
        line, end_line, col, end_col = c.position
        out.append(
            f"  contract-note {i}: call at {line}:{col}-{end_line}:{end_col} "
            f"variant {c.variant or '-'} dfbs {list(c.dfbs)}"
        )
    for fn in kernel.functions:
        params = ", ".join([f"%{p.name} : {p.ty}" for p in fn.params] + list(fn.accessors))
        result = f" -> {fn.result.ty}" if fn.result is not None else ""
        out.append(
            f"  func {fn.name}({params}){result} {{" + (f"  # {fn.title}" if fn.title else "")
        )
        for v in fn.locals:
            out.append(f"    local %{v.name} : {v.ty}")
        _lines(fn.body, 2, mark, note, out)
        if fn.result is not None:
            out.append(f"    return {print_expr(fn.result)}")
        out.append("  }")
    _lines(kernel.body, 1, mark, note, out)
    return "\n".join(out)
