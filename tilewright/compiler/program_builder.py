"""Operation declarations → a device ``Program``.

Every node evaluated the operation body; node (0, 0)'s declarations are the
template and every other node must have declared the same DFBs (shape, block
count, format) and kernels (name, kind) in the same order.  Then:

* logical kernels get processor slots (``capacity.assign_slots``);
* DFBs get physical circular-buffer indices and L1 addresses (``dfb_alloc``),
  within the target's index limit (``num_cbs``) and the node's free L1; logical
  DFBs sharing an index check at run time that they are never live at once
  (``lang.dfb_share``);
* each kernel becomes one program kernel on the grid whose entry
  (``lang.launch.kernel_entry``) runs the node's own kernel function and releases
  what it still holds at exit (the compiler's auto-sync);
* each ``ttl.Semaphore`` becomes a program semaphore.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from tilewright.compiler import dfb_alloc
from tilewright.compiler.capacity import assign_slots
from tilewright.compiler.record import OperationRecord
from tilewright.device.coords import CoreCoord, CoreRange
from tilewright.device.kernel_config import NUM_SEMAPHORES
from tilewright.device.program import (
    CircularBufferConfig,
    ComputeConfig,
    DataMovementConfig,
    MathFidelity,
    Program,
)
from tilewright.errors import CapacityError, InterfaceError, SourceLoc
from tilewright.lang import dfb_share
from tilewright.lang.launch import kernel_entry
from tilewright.lang.selectors import LogicalKernel, logical_kernel_of

if TYPE_CHECKING:
    from tilewright.compiler.split.plan import SplitPlan
    from tilewright.device.device import Device
    from tilewright.lang.node import NodeSetup

__all__ = ["build", "logical_kernels", "BUILD_OBSERVERS"]

#: Callables ``observer(record, program, setups)`` run after each program is built.
BUILD_OBSERVERS: list = []


def _check_consistent(op_name: str, setups: dict[int, NodeSetup]) -> None:
    items = list(setups.values())
    ref = items[0]
    ref_dfbs = [(d.shape, d.block_count, d.data_format, d.tiled) for d in ref.dfbs]
    ref_kernels = [(k.name, k.kind) for k in ref.kernels]
    for s in items[1:]:
        if [(d.shape, d.block_count, d.data_format, d.tiled) for d in s.dfbs] != ref_dfbs:
            raise InterfaceError(
                f"operation '{op_name}': node {s.node} declares different DFBs than node {ref.node}; "
                "DFB declarations must not depend on ttl.node()"
            )
        if [(k.name, k.kind) for k in s.kernels] != ref_kernels:
            raise InterfaceError(
                f"operation '{op_name}': node {s.node} declares different kernels than node {ref.node}; "
                "kernel declarations must not depend on ttl.node()"
            )
        if len(s.semaphores) != len(ref.semaphores):
            raise InterfaceError(
                f"operation '{op_name}': node {s.node} declares a different number of semaphores"
            )


def _check_semaphores(op_name: str, setup: NodeSetup, call_loc: SourceLoc | None) -> None:
    """A core has NUM_SEMAPHORES semaphores: the first one too many is the error's line."""
    declared = setup.semaphores
    if len(declared) <= NUM_SEMAPHORES:
        return
    extra = declared[NUM_SEMAPHORES]
    raise CapacityError(
        f"operation '{op_name}' declares {len(declared)} semaphores per node; a core has "
        f"{NUM_SEMAPHORES} (this is semaphore {NUM_SEMAPHORES + 1})",
        loc=extra.loc if extra.loc is not None else call_loc,
        rule="semaphore-capacity",
        hint="reuse semaphores across phases, or pass values through a DFB",
    )


def logical_kernels(decls) -> list[LogicalKernel]:
    """Logical kernels of a multi-kernel operation, from its kernel declarations."""
    any_selector = any(d.selector is not None for d in decls)
    out: list[LogicalKernel] = []
    seen: dict[LogicalKernel, str] = {}
    for i, d in enumerate(decls):
        if d.selector is None and not any_selector:
            lk = LogicalKernel(d.kind, "ordinal", d.name, order=i, loc=d.loc)
        else:
            lk = logical_kernel_of(d.selector, d.kind, d.name, d.loc)
        named = lk.role in ("explicit", "ordinal")
        key = LogicalKernel(lk.kind, lk.role, lk.name if named else "", lk.operation)
        if key in seen:
            raise InterfaceError(
                f"kernel functions '{seen[key]}' and '{d.name}' select the same logical kernel "
                f"({lk.describe()}); give each its own kernel",
                loc=d.loc,
            )
        seen[key] = d.name
        out.append(lk)
    return out


class OperationProgram(Program):
    """The device program of one operation call, with the compiler's decisions for it."""

    def __init__(self, record: OperationRecord, split_plan: SplitPlan | None) -> None:
        super().__init__(record.name)
        self.record = record
        self.split_plan = split_plan
        self.kernel_slots: dict[str, str] = {}  # kernel function -> processor slot
        self.logical_kernels: list[LogicalKernel] = []  # per kernel function, in order
        self.dfb_table: list[tuple[str, int, int, int]] = []  # (name, index, address, bytes)
        self.dfb_allocation: dfb_alloc.Allocation | None = None
        self.runtime_resources: object = None  # the applied RuntimeResourcePlan, if any (C.11)


def build(
    record: OperationRecord,
    options: Mapping[str, object],
    split_plan: SplitPlan | None,
    device: Device,
    grid: tuple[int, ...],
    setups: dict[int, NodeSetup],
    call_loc: SourceLoc | None,
) -> OperationProgram:
    """The device program that runs the operation on ``grid``, from its nodes' setups."""
    _check_consistent(record.name, setups)
    first = next(iter(setups.values()))
    _check_semaphores(record.name, first, call_loc)
    cols, rows = grid[0], grid[1]
    grid_range = CoreRange(CoreCoord(0, 0), CoreCoord(cols - 1, rows - 1))
    program = OperationProgram(record, split_plan)

    placement = dfb_alloc.allocate(
        record, options, split_plan, device, first.dfbs, call_loc, grid=(cols, rows)
    )
    for setup in setups.values():
        for dfb, (index, address) in zip(setup.dfbs, placement):
            dfb.index, dfb.address = index, address
        for slot in placement.slots:  # shared indices check disjoint lifetimes at run time
            if len(slot.members) > 1:
                members = [setup.dfbs[m] for m in slot.members]
                dfb_share.install(
                    slot.index, members, "allocation group" if slot.group else "reuse"
                )
    configured: set[int] = set()
    for dfb, (index, address) in zip(first.dfbs, placement):
        if index in configured:  # a shared physical index (DFB reuse) is configured once
            continue
        configured.add(index)
        cfg = CircularBufferConfig(dfb.total_bytes, {index: dfb.data_format})
        cfg.set_page_size(index, dfb.page_size).set_tile_dims(index, dfb.tile).set_name(
            index, dfb.name
        )
        cfg.set_address(address)
        program.create_circular_buffer(grid_range, cfg)

    kernels = logical_kernels(first.kernels)
    slots = assign_slots(kernels, device.slots)
    compute_cfg = _compute_config(options)
    for i, (decl, lk) in enumerate(zip(first.kernels, kernels)):
        config = compute_cfg if decl.kind == "compute" else DataMovementConfig()
        program.create_kernel(
            kernel_entry(i, decl.name), grid_range, config, name=decl.name, slot=slots[lk]
        )

    for i, sem in enumerate(first.semaphores):
        sem_id = program.create_semaphore(grid_range, sem.initial)
        for setup in setups.values():
            setup.semaphores[i].bind(sem_id, device.semaphore_address(sem_id))
    program.kernel_slots = {decl.name: slots[lk] for decl, lk in zip(first.kernels, kernels)}
    program.logical_kernels = kernels
    program.dfb_table = [
        (d.name, idx, addr, d.total_bytes) for d, (idx, addr) in zip(first.dfbs, placement)
    ]
    program.dfb_allocation = placement
    for observer in BUILD_OBSERVERS:  # e.g. `tilewright explain`
        observer(record, program, setups)
    return program


def _compute_config(opts: Mapping[str, object]) -> ComputeConfig:
    fidelity = opts.get("math_fidelity")
    if fidelity is not None:
        fidelity = MathFidelity[str(getattr(fidelity, "name", fidelity))]
    else:
        fidelity = MathFidelity.HiFi4
    return ComputeConfig(
        math_fidelity=fidelity,
        fp32_dest_acc_en=bool(opts.get("fp32_dest_acc_en") or False),
        dst_full_sync_en=bool(opts.get("dst_full_sync_en") or False),
    )
