"""``ttnn.generic_op``: run a program described by ttnn's program-descriptor family.

A host program written for ttnn's descriptor API runs unchanged::

    reader = ttnn.KernelDescriptor(
        kernel_source="kernels/reader.cpp",               # a file, or the source text
        core_ranges=cores,
        compile_time_args=ttnn.TensorAccessorArgs(a).get_compile_time_args(),
        runtime_args=[[[a.buffer_address(), 0, n]]],      # [x][y] -> args
        config=ttnn.ReaderConfigDescriptor(),
    )
    cb = ttnn.CBDescriptor(total_size=2 * 2048, core_ranges=cores,
                           format_descriptors=[ttnn.CBFormatDescriptor(0, ttnn.bfloat16, 2048)])
    program = ttnn.ProgramDescriptor(kernels=[reader, compute, writer], cbs=[cb], semaphores=[])
    out = ttnn.generic_op([a, b, out], program)           # the last tensor is the output

:func:`generic_op` checks the descriptor (clear :class:`~tilewright.errors.DescriptorError`
messages for overlapping or repeated CB indices, runtime args for cores outside a
kernel's ranges, too many args, two kernels on one processor, missing kernel files)
and turns it into a :class:`~tilewright.device.program.Program` of native kernels
(:class:`~tilewright.native.kernels.NativeKernel`) launched on the tensors' device.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from tilewright.device import session
from tilewright.device.coords import CoreCoord, CoreRange, CoreRangeSet, as_core_range_set
from tilewright.device.device import MAX_RUNTIME_ARGS, NUM_SEMAPHORES
from tilewright.device.formats import TTNN_TO_DATA_FORMAT, DataFormat, TtnnDataType
from tilewright.device.kernel_api.accessor import tensor_accessor_args
from tilewright.device.mesh import MeshCoordinateRange, MeshWorkload
from tilewright.device.named_enum import NamedIntEnum
from tilewright.device.program import (
    NOC,
    CircularBufferConfig,
    ComputeConfig,
    DataMovementConfig,
    DataMovementProcessor,
    MathFidelity,
    Program,
)
from tilewright.errors import DescriptorError, SourceLoc, user_location
from tilewright.lazy import lazy_import
from tilewright.ttnn.descriptor_checks import check_generic_op
from tilewright.ttnn.mesh_tensor import MeshTensor

# The native kernel builder (the C++ toolchain, the runtime library) loads when a program
# descriptor is first turned into kernels, not on ``import ttnn`` (issue 22: start-up).
kernels = lazy_import("tilewright.native.kernels")

__all__ = [
    "MathFidelity",
    "NOC",
    "DataMovementProcessor",
    "ProgramDescriptor",
    "MeshProgramDescriptor",
    "UnpackToDestMode",
    "KernelDescriptor",
    "CBDescriptor",
    "CBFormatDescriptor",
    "SemaphoreDescriptor",
    "ComputeConfigDescriptor",
    "ReaderConfigDescriptor",
    "WriterConfigDescriptor",
    "DataMovementConfigDescriptor",
    "RuntimeArgs",
    "TensorAccessorArgs",
    "cb_descriptor_from_sharded_tensor",
    "generic_op",
]

_RULE = "program-descriptor"


def _error(message: str, hint: str | None = None) -> DescriptorError:
    return DescriptorError(message, rule=_RULE, hint=hint, loc=_user_loc())


def _user_loc() -> SourceLoc | None:
    return user_location()


# -- configs ---------------------------------------------------------------------------------


class UnpackToDestMode(NamedIntEnum):
    """ttnn ``UnpackToDestMode``, one per circular buffer of a compute kernel: ``UnpackToDestFp32``
    unpacks that CB's tiles straight into a 32-bit DST, bypassing the source registers.

    Tilewright's unpacker never rounds through SrcA/SrcB (their TF32 precision is not
    modelled), so both modes give the same bits; the modes are checked and kept."""

    Default = 0
    UnpackToDestFp32 = 1


@dataclass
class ComputeConfigDescriptor:
    """ttnn ``ComputeConfigDescriptor``: the compute kernel's numerics."""

    math_fidelity: MathFidelity = MathFidelity.HiFi4
    fp32_dest_acc_en: bool = False
    dst_full_sync_en: bool = False
    math_approx_mode: bool = False
    bfp8_pack_precise: bool = False
    unpack_to_dest_mode: list = field(default_factory=list)


@dataclass
class DataMovementConfigDescriptor:
    """ttnn ``DataMovementConfigDescriptor``: which RISC and NoC a data-movement kernel uses."""

    processor: DataMovementProcessor = DataMovementProcessor.RISCV_0
    noc: NOC = NOC.NOC_0


def ReaderConfigDescriptor() -> DataMovementConfigDescriptor:  # noqa: N802 - ttnn's name
    """The reader preset: RISCV_1 on NOC_0."""
    return DataMovementConfigDescriptor(DataMovementProcessor.RISCV_1, NOC.NOC_0)


def WriterConfigDescriptor() -> DataMovementConfigDescriptor:  # noqa: N802 - ttnn's name
    """The writer preset: RISCV_0 on NOC_1."""
    return DataMovementConfigDescriptor(DataMovementProcessor.RISCV_0, NOC.NOC_1)


# -- runtime args ------------------------------------------------------------------------------


class RuntimeArgs:
    """Per-core runtime args indexed ``[x][y]`` (ttnn ``RuntimeArgs``): ``args[x][y] = [...]``."""

    def __init__(self) -> None:
        self._rows: dict[int, dict[int, list[int]]] = {}

    def __getitem__(self, x: int) -> dict[int, list[int]]:
        return self._rows.setdefault(int(x), {})

    def items(self):
        for x, col in sorted(self._rows.items()):
            for y, args in sorted(col.items()):
                yield CoreCoord(x, y), list(args)


def _runtime_args(value, kernel: str) -> list[tuple[CoreCoord, list[int]]]:
    if value is None:
        return []
    if isinstance(value, RuntimeArgs):
        return list(value.items())
    if isinstance(value, dict):
        return [
            (c if isinstance(c, CoreCoord) else CoreCoord(*c), list(a)) for c, a in value.items()
        ]
    out = []
    try:
        for x, column in enumerate(value):
            for y, args in enumerate(column):
                if args is None:
                    continue
                out.append((CoreCoord(x, y), list(args)))
    except TypeError:
        raise _error(
            f"kernel {kernel}: runtime_args must be indexed [x][y] -> list of integers "
            "(a nested list, a dict of CoreCoord -> list, or ttnn.RuntimeArgs)"
        ) from None
    return out


# -- descriptors ---------------------------------------------------------------------------------


class SourceType(Enum):
    FILE_PATH = 0
    SOURCE_CODE = 1


@dataclass
class KernelDescriptor:
    """ttnn ``KernelDescriptor``: one kernel (a file path or source text) on core ranges."""

    kernel_source: str
    core_ranges: Any
    compile_time_args: Sequence[int] = ()
    defines: Any = ()
    runtime_args: Any = None
    common_runtime_args: Sequence[int] = ()
    config: Any = field(default_factory=ReaderConfigDescriptor)
    source_type: SourceType | None = None
    named_compile_time_args: Any = ()

    SourceType = SourceType


@dataclass
class CBFormatDescriptor:
    """ttnn ``CBFormatDescriptor(buffer_index, data_format, page_size)``."""

    buffer_index: int
    data_format: Any
    page_size: int
    tile: Any = None


@dataclass
class CBDescriptor:
    """ttnn ``CBDescriptor(total_size, core_ranges, format_descriptors)``; ``buffer`` aliases
    the CB onto a sharded L1 tensor (``cb_descriptor_from_sharded_tensor``)."""

    total_size: int
    core_ranges: Any
    format_descriptors: Sequence[CBFormatDescriptor] = ()
    buffer: Any = None


@dataclass
class SemaphoreDescriptor:
    """ttnn ``SemaphoreDescriptor(id, core_type=..., core_ranges=..., initial_value=...)``: a
    semaphore on core ranges.  Without ``id`` a program descriptor numbers its semaphores
    as CreateSemaphore does; the older positional form ``(core_ranges, ...)`` is accepted."""

    id: Any = None
    core_ranges: Any = None
    initial_value: int = 0
    core_type: Any = None

    def __post_init__(self) -> None:
        if self.id is not None and not isinstance(self.id, int) and self.core_ranges is None:
            self.id, self.core_ranges = None, self.id  # SemaphoreDescriptor(core_ranges, ...)


@dataclass
class ProgramDescriptor:
    """ttnn ``ProgramDescriptor``: kernels, circular buffers and semaphores."""

    kernels: Sequence[KernelDescriptor] = ()
    cbs: Sequence[CBDescriptor] = ()
    semaphores: Sequence[SemaphoreDescriptor] = ()


class MeshProgramDescriptor:
    """ttnn ``MeshProgramDescriptor``: a program descriptor per range of mesh coordinates.

    ``MeshProgramDescriptor({range: program, ...})`` or ``desc[range] = program``; the chips of
    each range run their program together (one mesh workload), the mesh's other chips run none.
    """

    def __init__(self, mesh_programs: dict | None = None) -> None:
        self.mesh_programs: list[tuple[Any, ProgramDescriptor]] = []
        for key, value in (mesh_programs or {}).items():
            self[key] = value

    @staticmethod
    def _same(a, b) -> bool:
        return tuple(a.start) == tuple(b.start) and tuple(a.end) == tuple(b.end)

    def __setitem__(self, key, value: ProgramDescriptor) -> None:
        if not isinstance(key, MeshCoordinateRange):
            raise _error(
                f"MeshProgramDescriptor keys are ttnn.MeshCoordinateRange, got {type(key).__name__}"
            )
        if not isinstance(value, ProgramDescriptor):
            raise _error(
                f"MeshProgramDescriptor values are ttnn.ProgramDescriptor, got {type(value).__name__}"
            )
        self.mesh_programs.append((key, value))

    def __getitem__(self, key) -> ProgramDescriptor:
        for k, v in self.mesh_programs:
            if self._same(k, key):
                return v
        raise KeyError(f"{key!r} is not in this MeshProgramDescriptor")

    def __contains__(self, key) -> bool:
        return any(self._same(k, key) for k, _ in self.mesh_programs)

    def __iter__(self):
        return iter(list(self.mesh_programs))

    def __len__(self) -> int:
        return len(self.mesh_programs)


class TensorAccessorArgs:
    """``ttnn.TensorAccessorArgs(tensor)``: the compile-time args describing a tensor's buffer."""

    def __init__(self, tensor) -> None:
        self.tensor = tensor

    def get_compile_time_args(self) -> list[int]:
        if not isinstance(self.tensor, MeshTensor):
            return tensor_accessor_args(self.tensor.buffer)
        # A mesh tensor's chips hold equal buffers (lock-step allocation): one set of args
        # serves the kernel on every chip, as ttnn's MeshBuffer gives.
        per_chip = [tensor_accessor_args(t.buffer) for t in self.tensor.shards]
        if any(a != per_chip[0] for a in per_chip):
            raise _error(
                "TensorAccessorArgs of a mesh tensor whose chips hold differently placed buffers",
                hint="take each chip's tensor with ttnn.get_device_tensors(tensor)",
            )
        return per_chip[0]

    def get_common_runtime_args(self) -> list[int]:
        return []


def cb_descriptor_from_sharded_tensor(cb_index: int, tensor) -> CBDescriptor:
    """A CB over ``tensor``'s shard on every core of its shard grid (one page per tile)."""
    buf = tensor.buffer
    if buf.shard is None:
        raise _error(
            f"cb_descriptor_from_sharded_tensor({cb_index}, ...): the tensor is not sharded "
            f"({buf.buffer_type.name}, {buf.layout.name.lower()})"
        )
    fmt = CBFormatDescriptor(cb_index, tensor.dtype, buf.aligned_page_size)
    cores = CoreRangeSet([CoreRange(c.logical, c.logical) for c in buf.shard_cores])
    return CBDescriptor(buf.size_per_bank, cores, [fmt], buffer=buf)


# -- building ----------------------------------------------------------------------------------


def _data_format(value, where: str) -> DataFormat:
    if isinstance(value, DataFormat):
        return value
    try:
        return TTNN_TO_DATA_FORMAT[TtnnDataType(int(value))]
    except (KeyError, ValueError, TypeError):
        raise _error(f"{where}: data format {value!r} is not a ttnn data type") from None


def _cores(value, where: str) -> CoreRangeSet:
    try:
        if isinstance(value, CoreCoord):
            return CoreRangeSet([CoreRange(value, value)])
        return as_core_range_set(value)
    except Exception as exc:  # noqa: BLE001 - a user value: name it
        raise _error(f"{where}: core_ranges {value!r} is not a core range set ({exc})") from None


def _kernel_entry(desc: KernelDescriptor, index: int, base_dir: str | None):
    text = desc.kernel_source
    if not isinstance(text, str) or not text:
        raise _error(f"kernel {index}: kernel_source must be a file path or C++ source text")
    kind = desc.source_type
    if kind is None:
        kind = (
            SourceType.SOURCE_CODE
            if "\n" in text or "kernel_main" in text
            else SourceType.FILE_PATH
        )
    if kind == SourceType.SOURCE_CODE:
        return kernels.NativeKernel(
            source=text, name=f"kernel{index}", include_paths=(base_dir,) if base_dir else ()
        )
    candidates = [text] if os.path.isabs(text) else [os.path.join(os.getcwd(), text)]
    if base_dir and not os.path.isabs(text):
        candidates.append(os.path.join(base_dir, text))
    for path in candidates:
        if os.path.isfile(path):
            return kernels.NativeKernel(path)
    raise _error(
        f"kernel {index}: kernel file {text!r} does not exist (looked in {', '.join(candidates)})",
        hint="give a path relative to the working directory or to the program's file, or the source text",
    )


def _kernel_config(desc: KernelDescriptor, index: int):
    cfg = desc.config
    ct = tuple(int(a) for a in desc.compile_time_args)
    defines = tuple(
        (str(k), str(v))
        for k, v in (desc.defines.items() if isinstance(desc.defines, dict) else desc.defines)
    )
    named = desc.named_compile_time_args
    named = tuple(
        (str(k), int(v)) for k, v in (named.items() if isinstance(named, dict) else named)
    )
    if isinstance(cfg, ComputeConfigDescriptor):
        for cb, mode in enumerate(cfg.unpack_to_dest_mode):
            if not isinstance(mode, UnpackToDestMode):
                raise _error(
                    f"kernel {index}: unpack_to_dest_mode[{cb}] is {mode!r}, not a "
                    "ttnn.UnpackToDestMode (Default or UnpackToDestFp32)"
                )
        return ComputeConfig(
            MathFidelity(int(cfg.math_fidelity)),
            bool(cfg.fp32_dest_acc_en),
            bool(cfg.dst_full_sync_en),
            bool(cfg.math_approx_mode),
            ct,
            defines,
            named,
        )
    if isinstance(cfg, DataMovementConfigDescriptor):
        return DataMovementConfig(
            DataMovementProcessor(int(cfg.processor)), NOC(int(cfg.noc)), ct, defines, named
        )
    raise _error(
        f"kernel {index}: config must be a ReaderConfigDescriptor, WriterConfigDescriptor, "
        f"DataMovementConfigDescriptor or ComputeConfigDescriptor, got {type(cfg).__name__}"
    )


def _check_cbs(cbs: Sequence[CBDescriptor]) -> list[tuple[CoreRangeSet, CBDescriptor]]:
    placed: list[tuple[CoreRangeSet, CBDescriptor, set[int]]] = []
    for i, cb in enumerate(cbs):
        cores = _cores(cb.core_ranges, f"cbs[{i}]")
        indices = [int(f.buffer_index) for f in cb.format_descriptors]
        if not indices:
            raise _error(f"cbs[{i}]: a CBDescriptor needs at least one CBFormatDescriptor")
        repeated = sorted({x for x in indices if indices.count(x) > 1})
        if repeated:
            raise _error(
                f"cbs[{i}]: circular buffer index {repeated[0]} is used twice in one CBDescriptor"
            )
        for f in cb.format_descriptors:
            if f.page_size <= 0 or cb.total_size % f.page_size:
                raise _error(
                    f"cbs[{i}]: total_size {cb.total_size} B is not a multiple of the page size "
                    f"{f.page_size} B of index {f.buffer_index}"
                )
        for j, (other_cores, _, other_indices) in enumerate(placed):
            shared = set(indices) & other_indices
            if shared and any(a.intersects(b) for a in cores for b in other_cores):
                raise _error(
                    f"cbs[{i}] and cbs[{j}] both configure circular buffer index {min(shared)} on "
                    "overlapping cores",
                    hint="each CB index may be configured once per core",
                )
        placed.append((cores, cb, set(indices)))
    return [(c, cb) for c, cb, _ in placed]


def build_program(desc: ProgramDescriptor, base_dir: str | None = None) -> Program:
    """The device Program a ProgramDescriptor describes (checked)."""
    if not isinstance(desc, ProgramDescriptor):
        raise _error(f"generic_op needs a ttnn.ProgramDescriptor, got {type(desc).__name__}")
    program = Program("generic_op")
    for cores, cb in _check_cbs(desc.cbs):
        formats: dict[int, object] = {
            int(f.buffer_index): _data_format(f.data_format, "CBFormatDescriptor")
            for f in cb.format_descriptors
        }
        cfg = CircularBufferConfig(int(cb.total_size), formats)
        for f in cb.format_descriptors:
            cfg.set_page_size(int(f.buffer_index), int(f.page_size))
            if f.tile is not None:
                cfg.set_tile_dims(int(f.buffer_index), f.tile)
        if cb.buffer is not None:
            cfg.set_globally_allocated_address(cb.buffer)
        program.create_circular_buffer(cores, cfg)
    if len(desc.semaphores) > NUM_SEMAPHORES:
        raise _error(f"{len(desc.semaphores)} semaphores; a core has {NUM_SEMAPHORES}")
    for i, sem in enumerate(desc.semaphores):
        cores = _cores(sem.core_ranges, f"semaphores[{i}]")
        if sem.id is not None:  # the id the descriptor names
            program.create_semaphore_with_id(cores, int(sem.id), int(sem.initial_value))
            continue
        # ids as CreateSemaphore hands them out: the lowest free id on those cores
        program.create_semaphore(cores, int(sem.initial_value))
    for i, kd in enumerate(desc.kernels):
        cores = _cores(kd.core_ranges, f"kernels[{i}]")
        handle = program.create_kernel(_kernel_entry(kd, i, base_dir), cores, _kernel_config(kd, i))
        name = program.kernels[handle].name
        common = [int(a) for a in kd.common_runtime_args]
        for coord, args in _runtime_args(kd.runtime_args, name):
            if not cores.contains(coord):
                raise _error(
                    f"kernels[{i}] ({name}): runtime args for core {coord}, which is not in the kernel's "
                    f"core ranges {cores}"
                )
            if len(args) + len(common) > MAX_RUNTIME_ARGS:
                raise _error(
                    f"kernels[{i}] ({name}): core {coord} has {len(args)} runtime args and {len(common)} "
                    f"common ones; at most {MAX_RUNTIME_ARGS} in all"
                )
            program.set_runtime_args(handle, coord, args)
        if common:
            if len(common) > MAX_RUNTIME_ARGS:
                raise _error(
                    f"kernels[{i}] ({name}): {len(common)} common runtime args; at most {MAX_RUNTIME_ARGS}"
                )
            program.set_common_runtime_args(handle, common)
    _check_processors(program)
    return program


def _check_processors(program: Program) -> None:
    """Two kernels on one processor of one core are a descriptor error (named up front)."""

    def processor(k) -> str:
        cfg = k.config
        return (
            "compute"
            if isinstance(cfg, ComputeConfig)
            else DataMovementProcessor(int(cfg.processor)).name
        )

    kernels = program.kernels
    for i, a in enumerate(kernels):
        for b in kernels[i + 1 :]:
            if processor(a) == processor(b) and any(
                ra.intersects(rb) for ra in a.cores for rb in b.cores
            ):
                raise _error(
                    f"kernels {a.name!r} and {b.name!r} both run on {processor(a)} of overlapping cores",
                    hint="a core runs one kernel per processor",
                )


def generic_op(io_tensors: Sequence, program_descriptor):
    """Run ``program_descriptor`` on the device of ``io_tensors``; return the last (output) tensor.

    With mesh tensors (on a mesh device) a ``ProgramDescriptor`` runs on every chip of the mesh
    and a ``MeshProgramDescriptor`` runs each of its programs on its range of chips; either way
    the chips run together, as one mesh workload (ttnn's SPMD and mesh-program forms).
    """
    tensors = list(io_tensors) if isinstance(io_tensors, Sequence) else [io_tensors]
    programs = (
        [desc for _, desc in program_descriptor]
        if isinstance(program_descriptor, MeshProgramDescriptor)
        else [program_descriptor]
    )
    for desc in programs:  # every field, before anything is built (descriptor_checks.py)
        check_generic_op(tensors, desc, ComputeConfigDescriptor, DataMovementConfigDescriptor)
    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    base_dir = (
        os.path.dirname(os.path.abspath(caller.f_code.co_filename)) if caller is not None else None
    )
    meshes = [isinstance(t, MeshTensor) for t in tensors]
    device = tensors[-1].device()
    if not any(meshes):
        if isinstance(program_descriptor, MeshProgramDescriptor):
            program_descriptor = _single_chip_program(program_descriptor)
        session.tracer_for(device)  # --trace shows generic_op launches too
        device.command_queue.enqueue_program(build_program(program_descriptor, base_dir))
        return tensors[-1]
    if not all(meshes):
        raise _error(
            f"generic_op's tensor {meshes.index(False)} is a single-device tensor among mesh "
            "tensors; distribute it over the mesh too"
        )
    workload = MeshWorkload("generic_op")
    if isinstance(program_descriptor, MeshProgramDescriptor):
        for coords, desc in program_descriptor:
            workload.add_program(coords, build_program(desc, base_dir))
    else:
        workload.add_program(
            MeshCoordinateRange(device.shape), build_program(program_descriptor, base_dir)
        )
    device.enqueue_mesh_workload(workload)
    return tensors[-1]


def _single_chip_program(desc: MeshProgramDescriptor) -> ProgramDescriptor:
    """The program of a mesh program descriptor for a single device (coordinate (0, 0))."""
    programs = list(desc)
    if (
        len(programs) != 1
        or tuple(programs[0][0].start) != (0, 0)
        or tuple(programs[0][0].end) != (0, 0)
    ):
        raise _error(
            "a MeshProgramDescriptor for single-device tensors holds exactly one program, for "
            "MeshCoordinateRange((0, 0), (0, 0))"
        )
    return programs[0][1]
