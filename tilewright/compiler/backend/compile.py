"""Compile one operation call for the native engine: lower, verify, build, rewire the program.

:func:`compile_call` runs after the program builder: the nodes' setups are evaluated,
DFBs have physical indices and addresses, kernels have slots.  It lowers every
logical kernel (the explicit kernel functions, or the splitter's generated ones) to
kernel IR, checks the DFB roles across kernels, and returns a :class:`CompiledCall`
whose :meth:`~CompiledCall.install` replaces the program's Python kernel entries by
native kernels (with compile-time and per-core runtime args, and the compiler's
scratch circular buffers).  Nothing is changed before every kernel compiled, so a
:class:`~tilewright.errors.NotCompilableError` leaves the interpreted program intact.
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tilewright.compiler.backend.build import native_kernel
from tilewright.compiler.backend.lower.entry import KernelInput, Lowered, World, lower_kernel
from tilewright.compiler.backend.lower.pipes import plan_pipes
from tilewright.compiler.backend.lower.values import (
    NetRef,
    SemRef,
    TensorInfo,
    describe_dfb,
)
from tilewright.compiler.signature import (
    CallSignature,
    attribute_paths,
    code_names,
    sign_cells,
    sign_names,
)
from tilewright.device.coords import CoreCoord, CoreRange
from tilewright.device.formats import DataFormat
from tilewright.device.program import CircularBufferConfig, ComputeConfig, MathFidelity
from tilewright.errors import NotCompilableError, SourceLoc
from tilewright.kir.ir import Kernel
from tilewright.lang.rules.dfb import SPSC
from tilewright.lang.rules.sync import PIPE_BLOCKS
from tilewright.target.enums import DataType as TargetDataType

if TYPE_CHECKING:
    from tilewright.compiler.program_builder import OperationProgram
    from tilewright.device.device import Device

__all__ = ["CompiledCall", "compile_call", "make_world", "kernel_inputs"]

_F32_PAGE = 4096


@dataclass(frozen=True, slots=True)
class CompiledCall:
    """The compiled kernels of one call and what the program needs to run them."""

    world: World
    lowered: tuple[Lowered, ...]
    scratch: tuple[CompilerCB, ...]

    @property
    def kernels(self) -> tuple[Kernel, ...]:
        return tuple(lw.kernel for lw in self.lowered)

    def install(self, program: OperationProgram) -> None:
        """Run the program's kernels natively (in place)."""
        world = self.world
        cols, rows = world.grid
        grid_range = CoreRange(CoreCoord(0, 0), CoreCoord(cols - 1, rows - 1))
        syncs = sorted(world.options.get("pipe_sync", {}).values(), key=lambda s: s.posted)
        initial = {i: s.initial(i) for s in syncs for i in (s.posted, s.done)}
        for sem_id in sorted(initial):
            got = program.create_semaphore(grid_range, initial[sem_id])
            if got != sem_id:  # pragma: no cover - ids are handed out lowest-free, as planned
                raise NotCompilableError(f"pipe semaphore {sem_id} was created as {got}")
        for cb in self.scratch:
            cfg = CircularBufferConfig(cb.total_size, {cb.index: DataFormat[cb.data_format]})
            cfg.set_page_size(cb.index, cb.page_size).set_name(cb.index, cb.name)
            cfg.set_address(cb.address)
            program.create_circular_buffer(grid_range, cfg)
        for spec, low in zip(program.kernels, self.lowered):
            kernel = low.kernel
            spec.entry = native_kernel(kernel)
            spec.native = True
            config = spec.config
            if isinstance(config, ComputeConfig):
                # The lowered kernel's numerics: float32 DST and HiFi4 (``_compile``), which
                # the interpreter's block math computes; the declared fidelity is not
                # modelled for TT-Lang (docs/device.md, "Fidelity and DST precision").
                config = dataclasses.replace(
                    config,
                    fp32_dest_acc_en=kernel.fp32_dest_acc,
                    math_fidelity=MathFidelity(kernel.math_fidelity),
                    compile_args=kernel.compile_args,
                )
            else:
                config = dataclasses.replace(config, compile_args=kernel.compile_args)
            spec.config = config
            for n, (x, y) in enumerate(world.nodes):
                spec.runtime_args[CoreCoord(x, y)] = [values[n] for _, values in low.args]
        program.compiled = self  # type: ignore[attr-defined]

    def rebind(self, program: OperationProgram, params, args) -> None:
        """Write this call's tensor addresses into the installed program's runtime args
        (a warm call, ``compiler.warm``: nothing else of the program changes)."""
        addresses = {p: int(a.buffer.address) for p, a in zip(params, args)}
        for spec, low in zip(program.kernels, self.lowered):
            slots = [
                (i, addresses[name.removesuffix(".address")])
                for i, (name, _) in enumerate(low.args)
                if name.endswith(".address") and name.removesuffix(".address") in addresses
            ]
            if slots:
                for argv in spec.runtime_args.values():
                    for i, address in slots:
                        argv[i] = address
        lowered = tuple(_with_addresses(low, addresses) for low in self.lowered)
        program.compiled = dataclasses.replace(self, lowered=lowered)  # type: ignore[attr-defined]


def make_world(record, device: Device, grid, setups: dict, args, options) -> World:
    """The operation's resources as the lowering sees them."""
    ordered = list(setups.values())
    first = ordered[0]
    world = World(record.name, device, (grid[0], grid[1]), ordered, options=dict(options))
    for param, arg in zip(record.interface.params, args):
        world.tensors[id(arg)] = TensorInfo(param, arg)
    for i, dfb in enumerate(first.dfbs):
        info = dataclasses.replace(describe_dfb(dfb), position=i)
        world.dfbs.append(info)
    world.options["extern_plan"] = getattr(first.op, "extern_plan", None)
    for setup in ordered:
        for info, dfb in zip(world.dfbs, setup.dfbs):
            world.dfb_ids[id(dfb)] = info
        for i, sem in enumerate(setup.semaphores):
            world.sems[id(sem)] = SemRef(i, int(sem.sem_id), int(sem.address))
        for i, net in enumerate(setup.pipenets):
            world.nets[id(net)] = NetRef(i, first.pipenets[i])
    plan_pipes(world)
    return world


def kernel_inputs(record, split_plan, program, setups: dict) -> list[KernelInput]:
    """Each kernel function of the operation, with its AST and every node's closure."""
    ordered = list(setups.values())
    first = ordered[0]
    if split_plan is not None:
        trees = dict(split_plan.kernel_trees)
    else:
        trees = {d.name: d for d in record.interface.kernel_defs}
    out = []
    for i, decl in enumerate(first.kernels):
        tree = trees.get(decl.name)
        if tree is None or not isinstance(tree, ast.FunctionDef):
            raise NotCompilableError(
                f"kernel '{decl.name}': its source is not available to the compiler", loc=decl.loc
            )
        out.append(
            KernelInput(
                name=decl.name,
                kind=decl.kind,
                slot=program.kernel_slots.get(decl.name, ""),
                tree=tree,
                fns=[s.kernels[i].fn for s in ordered],
                file=record.source.file,
                selector=decl.selector,
            )
        )
    return out


def _check_roles(lowered: list[Lowered], world: World, inputs: list[KernelInput]) -> None:
    """One producer and one consumer kernel per DFB (rule ``dfb-spsc``): the interpreter
    names the kernel that acquires second, which only the run decides, so a program that
    breaks it is not compiled (``--engine auto`` interprets it)."""
    seen: dict[tuple[int, str], str] = {}
    for low, kin in zip(lowered, inputs):
        for index, role in low.roles:
            other = seen.get((index, role))
            if other is not None:
                name = next((d.name for d in world.dfbs if d.index == index), str(index))
                raise NotCompilableError(
                    f"DFB '{name}' has two {role}s (kernels '{other}' and '{kin.name}'); the "
                    f"interpreter reports it (rule {SPSC.id}) when the second one acquires a block",
                    loc=SourceLoc(kin.file, kin.tree.lineno),
                )
            seen[(index, role)] = kin.name


def _check_pipes(lowered: list[Lowered], world: World) -> None:
    """Every block sent and received on a pipe has one shape and format (rule
    ``pipe-blocks``): the interpreter reports a mismatch at the end that completes the
    rendezvous, which only the run decides, so such a program is not compiled."""
    seen: dict[tuple[int, int], set] = {}
    for low in lowered:
        for (net, index, _role), blocks in low.pipe_sites:
            seen.setdefault((net, index), set()).update(blocks)
    for (net, index), kinds in seen.items():
        if len(kinds) > 1:
            declared = next((r.net for r in world.nets.values() if r.position == net), None)
            raise NotCompilableError(
                f"operation '{world.name}': blocks of different shapes or formats are sent and "
                f"received on pipe {index} of net {net}; the interpreter reports it (rule "
                f"{PIPE_BLOCKS.id}) at delivery",
                loc=getattr(declared, "loc", None),
            )


@dataclass(frozen=True, slots=True)
class CompilerCB:
    """A circular buffer the compiler adds: float32 scratch, the reduce scaler, pipe mailboxes."""

    index: int
    name: str
    data_format: str
    page_size: int
    total_size: int
    address: int


def _compiler_cbs(lowered: list[Lowered], world: World, device) -> tuple[CompilerCB, ...]:
    """Place the compiler's CBs after the DFBs in L1 (the same address on every node)."""
    found: dict[int, tuple[str, str, int, int]] = {}
    for low in lowered:
        for cb in low.kernel.cbs:
            if cb.role == "dfb":
                continue
            size = cb.page_size * cb.num_pages
            old = found.get(cb.index)
            if old is None or old[3] < size:
                found[cb.index] = (cb.name, cb.data_format, cb.page_size, size)
    if not found:
        return ()
    first = world.setups[0]
    top = max(
        (int(d.address or 0) + int(d.total_bytes) for d in first.dfbs),
        default=device.l1_unreserved_base,
    )
    align = max(32, device.l1_alignment)
    out = []
    for index in sorted(found):
        name, fmt, page, size = found[index]
        top = -(-top // align) * align
        out.append(CompilerCB(index, name, fmt, page, size, top))
        top += size
    limit = device.l1_size - device.l1_small_size
    lowest = device.l1_allocator.lowest_allocated_address()
    if lowest is not None:
        limit = min(limit, lowest)
    if top > limit:
        raise NotCompilableError(
            f"operation '{world.name}': the compiler's circular buffers "
            f"({sum(c.total_size for c in out)} bytes) do not fit in L1 after the DFBs"
        )
    return tuple(out)


_CACHE: dict[tuple, tuple[object, tuple, CompiledCall]] = {}
"""Compiled calls by what their lowering read (see :func:`call_key`)."""
_CARRIED = ("pipe_sync", "mail_cb", "mail_slots", "taken_cbs", "pipe_error")


def call_key(record, sig: CallSignature, inputs: list[KernelInput]) -> tuple[tuple, tuple]:
    """Everything the lowering of a call reads, and the objects the key names by identity.

    The call's signature (device, grid, engine, options, tensor specs and aliasing, the
    body's free values by value: ``compiler/signature.py``), and for every kernel its
    captured values on every node (with the attribute paths its source reads from them)
    and the module globals it names.  Tensors count by their spec only (their addresses
    are runtime args).  ``ValueError`` for an empty closure cell."""
    parts: list[object] = [id(record), sig.key()]
    keep: list[object] = [record, *sig.keep]
    for kin in inputs:
        paths = attribute_paths(kin.tree)
        fn0 = kin.fns[0]
        file = fn0.__code__.co_filename  # its functions are helpers, signed with what they read
        cells, kept = sign_cells(kin.fns, paths, file)
        glb = fn0.__globals__
        names, _opaque_names, kept_globals = sign_names(
            {n: glb[n] for n in code_names(fn0.__code__) if n in glb},
            paths,
            addresses=False,
            helper_file=file,
        )
        parts.append((id(fn0.__code__), cells, names))
        keep += [fn0.__code__, *kept, *kept_globals]
    return tuple(parts), tuple(keep)


def _refresh(low: Lowered, world: World) -> Lowered:
    """A cached kernel's runtime args for this call (tensor addresses change, nothing else)."""
    addresses = {t.param: int(t.tensor.buffer.address) for t in world.tensors.values()}
    return _with_addresses(low, addresses)


def _with_addresses(low: Lowered, addresses: dict[str, int]) -> Lowered:
    """``low`` with the tensors' ``<param>.address`` runtime args set to ``addresses``."""
    args = []
    for name, values in low.args:
        param = name.removesuffix(".address")
        if param != name and param in addresses:
            values = tuple(addresses[param] for _ in values)
        args.append((name, values))
    return dataclasses.replace(low, args=tuple(args))


def compile_call(
    record,
    split_plan,
    program,
    device,
    grid,
    setups: dict,
    args,
    options,
    *,
    signature: CallSignature | None = None,
) -> CompiledCall:
    """Lower every kernel of the call; a NotCompilableError if one does not compile.

    A call whose lowering inputs (:func:`call_key`, read off the call's ``signature``)
    were seen before reuses that call's kernels; only the tensor addresses among the
    runtime args are read again.  Without a signature the call is lowered afresh."""
    inputs = kernel_inputs(record, split_plan, program, setups)
    key: tuple | None = None
    keep: tuple = ()
    if signature is not None:
        try:
            key, keep = call_key(record, signature, inputs)
        except ValueError:  # an empty closure cell: lower afresh
            key = None
    entry = _CACHE.get(key) if key is not None else None
    # the entry keeps the record and the kernels' code alive, so their ids stay theirs
    hit = entry[2] if entry is not None and entry[0] is record else None
    if hit is not None:
        world = make_world(record, device, grid, setups, args, options)
        for name in _CARRIED:
            if name in hit.world.options:
                world.options[name] = hit.world.options[name]
        lowered = tuple(_refresh(low, world) for low in hit.lowered)
        return CompiledCall(world, lowered, hit.scratch)
    compiled = _compile(record, split_plan, program, device, grid, setups, args, options, inputs)
    if key is not None:
        if len(_CACHE) > 256:
            _CACHE.clear()
        _CACHE[key] = (record, keep, compiled)  # keep: the ids in the key stay theirs
    return compiled


def _lower_one(world: World, spec, kin: KernelInput, device, options) -> Lowered:
    full_sync = bool(options.get("dst_full_sync_en") or False)
    return lower_kernel(
        world,
        kin,
        dst_tiles=device.capacity.dst_logical_tiles(TargetDataType.FLOAT32, full_sync),
        fp32=True,
        full_sync=full_sync,
        # HiFi4: the interpreter's block math is unsliced, and which TT-Lang ops run on the
        # FPU (and so are sliced by a lower fidelity) is a lowering choice it does not make.
        fidelity=int(MathFidelity.HiFi4),
        noc=int(getattr(spec.config, "noc", 0)),
    )


def kernel_coverage(
    record, split_plan, program, device, grid, setups, args, options
) -> list[tuple[str, NotCompilableError | None]]:
    """Each kernel of the call lowered on its own (``tilewright explain --coverage``): its
    name and None where it compiles, else the error of the first construct that stops it.
    Nothing is cached or installed; checks across kernels are the operation's outcome."""
    inputs = kernel_inputs(record, split_plan, program, setups)
    world = make_world(record, device, grid, setups, args, options)
    out: list[tuple[str, NotCompilableError | None]] = []
    for spec, kin in zip(program.kernels, inputs):
        try:
            _lower_one(world, spec, kin, device, options)
        except NotCompilableError as exc:
            out.append((kin.name, exc))
        else:
            out.append((kin.name, None))
    return out


def _compile(record, split_plan, program, device, grid, setups, args, options, inputs):
    """Lower every kernel of the call (no cache)."""
    allocation = getattr(program, "dfb_allocation", None)
    for slot in getattr(allocation, "slots", ()):
        if slot.group and len(slot.members) > 1:
            first = next(iter(setups.values()))
            names = ", ".join(f"'{first.dfbs[m].name}'" for m in slot.members)
            raise NotCompilableError(
                f"operation '{record.name}': DFBs {names} share physical index {slot.index} through an "
                "allocation group; the interpreter checks at run time that they are never live at once",
                loc=first.dfbs[slot.members[0]].loc,
            )
    world = make_world(record, device, grid, setups, args, options)
    lowered = [
        _lower_one(world, spec, kin, device, options) for spec, kin in zip(program.kernels, inputs)
    ]
    _check_roles(lowered, world, inputs)
    _check_pipes(lowered, world)
    return CompiledCall(world, tuple(lowered), _compiler_cbs(lowered, world, device))
