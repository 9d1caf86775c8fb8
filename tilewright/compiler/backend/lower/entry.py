"""The entry of lowering: one kernel function of an operation call -> its verified IR.

:func:`lower_kernel` runs the statement walk (:class:`~.kernel.Lowering`, with the
expression and protocol rules as its :class:`~.kernel.Hooks`) over every node's
evaluation of the body at once (:mod:`.values`), runs the IR through the passes
(:mod:`tilewright.compiler.backend.passes.pipeline`) and returns the kernel's IR, the
runtime-argument values of each node and the DFB roles the kernel takes.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilewright.compiler.backend.lower import calls, methods, pipes, protocol
from tilewright.compiler.backend.lower.analysis import assigned
from tilewright.compiler.backend.lower.blocks import Tracker
from tilewright.compiler.backend.lower.kernel import Hooks, KernelInput, Lowering, _Scope
from tilewright.compiler.backend.lower.protocol import release_all
from tilewright.compiler.backend.lower.resources import prologue
from tilewright.compiler.backend.lower.values import World
from tilewright.compiler.backend.passes import pipeline as passes
from tilewright.errors import SourceLoc
from tilewright.kir.ir import CBDecl, Kernel
from tilewright.kir.verify import verify

__all__ = ["KernelInput", "Lowered", "World", "lower_kernel"]


@dataclass(frozen=True, slots=True)
class Lowered:
    """A kernel's IR, its runtime arguments per node, and the DFB roles it takes."""

    kernel: Kernel  # after every pass (verified)
    args: tuple[tuple[str, tuple[int, ...]], ...]  # (name, value per node)
    roles: tuple[tuple[int, str], ...]  # (CB index, "producer" | "consumer")
    pipe_sites: tuple[
        tuple[tuple[int, int, str], tuple], ...
    ] = ()  # (net, pipe, send|recv) -> blocks
    lowered: Kernel | None = None  # before the passes (``passes.pipeline.run(lowered, upto)``)


HOOKS = Hooks(
    call=methods.call,
    attribute=calls.attribute,
    binop_values=calls.binop_values,
    unary_value=calls.unary_value,
    compare_values=calls.compare_values,
    subscript=calls.subscript,
    range_bounds=calls.range_bounds,
    classify_object=calls.classify_object,
    accumulate=protocol.accumulate,
    exit_block=protocol.exit_block,
    name_block=protocol.name_block,
    finish_send=pipes.finish_send,
    pipe_copy=pipes.pipe_copy,
)


def lower_kernel(
    world: World,
    kin: KernelInput,
    *,
    dst_tiles: int,
    fp32: bool,
    full_sync: bool,
    fidelity: int,
    noc: int,
) -> Lowered:
    lw = Lowering(world, kin, dst_tiles if kin.kind == "compute" else 0, HOOKS)
    tree = kin.tree
    lw.scope = _Scope(assigned(tree.body), "", tree)
    lw.tracker = Tracker(tuple(True for _ in world.setups))
    lw.kin_loc = SourceLoc(kin.file, tree.lineno)  # type: ignore[attr-defined]
    lw.statements(tree.body)
    lw.loc = SourceLoc(kin.file, getattr(tree, "end_lineno", tree.lineno) or tree.lineno)
    release_all(lw)
    pipes.drain_staged(lw)
    body = tuple(prologue(lw)) + tuple(lw.region)
    cbs: list[CBDecl] = []
    used = lw.extra.get("cbs", set())
    for d in world.dfbs:
        if d.index in used and all(c.index != d.index for c in cbs):
            cbs.append(
                CBDecl(
                    d.index, d.name, d.data_format, d.page_size, d.num_pages, d.block_pages, d.tile
                )
            )
    scratch = [(index, tiles) for index, tiles in lw.extra.get("scratch", [])]
    for index, tiles in scratch:
        cbs.append(
            CBDecl(index, f"scratch{index}", "Float32", 4096, tiles, tiles, (32, 32), "scratch")
        )
    mailbox = lw.extra.get("mailbox")
    if mailbox is not None:
        slots = world.options.get("mail_slots", 1)
        cbs.append(
            CBDecl(mailbox, "pipe mailboxes", "UInt32", 16 * slots, 1, 1, (32, 32), "mailbox")
        )
    staging = lw.extra.get("staging")
    if staging is not None:
        size = max(lw.extra.get("staging_bytes", 0), 16)
        cbs.append(CBDecl(staging, "pipe staging", "UInt32", size, 1, 1, (32, 32), "staging"))
    scaler = lw.extra.get("scaler")
    if scaler is not None:
        cbs.append(CBDecl(scaler, "scaler", "Float32", 4096, 1, 1, (32, 32), "scaler"))
    accessors = tuple(lw.extra.get("accessors", {}).values())
    kernel = Kernel(
        name=kin.name,
        kind=kin.kind,
        slot=kin.slot,
        source=kin.file,
        cbs=tuple(sorted(cbs, key=lambda c: c.index)),
        accessors=accessors,
        args=tuple(name for name, _ in lw.args),
        locals=tuple(lw.locals.values()),
        body=body,
        dst_tiles=lw.dst_tiles,
        fp32_dest_acc=fp32,
        dst_full_sync=full_sync,
        math_fidelity=fidelity,
        noc=noc,
        waits=tuple(n for n in lw.extra.get("waits", {}).values() if n is not None),
        sem_waits=tuple(lw.extra.get("sem_notes", {}).values()),
        contracts=tuple(lw.extra.get("contracts", ())),
        headers=tuple(lw.extra.get("headers", {})),
        include_paths=tuple(lw.extra.get("include_paths", {})),
        descriptors=tuple(sorted(lw.extra.get("descriptors", set()))),
        functions=tuple(lw.extra.get("functions", {}).values()),
    )
    kernel, lowered = passes.run(kernel), kernel
    verify(kernel)
    roles = tuple(
        (index, role)
        for index, rs in sorted(lw.extra.get("roles", {}).items())
        for role in sorted(rs)
    )
    return Lowered(
        kernel,
        tuple((name, tuple(values)) for name, values in lw.args),
        roles,
        tuple((k, tuple(sorted(v, key=repr))) for k, v in lw.extra.get("pipe_sites", {}).items()),
        lowered,
    )
