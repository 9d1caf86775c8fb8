"""The host program model (tt-metalium ``Program``), Pythonic.

A ``Program`` collects kernels (a Python callable now; a native entry point for
external / generated C++), circular-buffer configurations, semaphores and runtime
arguments, each on a core range.  ``launch.launch_program`` turns it into running
kernels on a device.  Names follow tt-metal's host API (``CreateKernel`` →
``Program.create_kernel`` and so on; see ``docs/device.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tilewright.device.coords import CoreCoord, CoreRangeSet, as_core_range_set
from tilewright.device.device import MAX_RUNTIME_ARGS, NUM_SEMAPHORES
from tilewright.device.named_enum import NamedIntEnum
from tilewright.device.ops.numerics import FIDELITY_CHOICES
from tilewright.errors import DeviceError

__all__ = [
    "DataMovementProcessor",
    "NOC",
    "MathFidelity",
    "DataMovementConfig",
    "ReaderDataMovementConfig",
    "WriterDataMovementConfig",
    "ComputeConfig",
    "CircularBufferConfig",
    "KernelSpec",
    "Program",
    "portable",
    "is_portable",
]

_PORTABLE = "tilewright_portable_kernel"


def portable(entry: Callable[..., object]) -> Callable[..., object]:
    """Mark a Python kernel as self-contained: it reads only what it closes over (plain
    data, buffers, devices) and the kernel API, so it may run in a worker process on a
    replica of its chip (``distributed/``).  The collectives' kernels are."""
    setattr(entry, _PORTABLE, True)
    return entry


def is_portable(entry: object) -> bool:
    """Whether a kernel entry was marked with :func:`portable`."""
    return getattr(entry, _PORTABLE, False) is True


class DataMovementProcessor(NamedIntEnum):
    RISCV_0 = 0  # BRISC (writer by default)
    RISCV_1 = 1  # NCRISC (reader by default)
    RISCV_2 = 2
    RISCV_3 = 3
    RISCV_4 = 4
    RISCV_5 = 5
    RISCV_6 = 6
    RISCV_7 = 7


class NOC(NamedIntEnum):
    NOC_0 = 0
    NOC_1 = 1


class MathFidelity(NamedIntEnum):
    LoFi = 0
    HiFi2 = 2
    HiFi3 = 3
    HiFi4 = 4


@dataclass(frozen=True, slots=True)
class DataMovementConfig:
    """tt-metal ``DataMovementConfig``: which RISC runs the kernel and which NoC it uses."""

    processor: DataMovementProcessor = DataMovementProcessor.RISCV_0
    noc: NOC = NOC.NOC_0
    compile_args: tuple[int, ...] = ()
    defines: tuple[tuple[str, str], ...] = ()
    named_compile_args: tuple[tuple[str, int], ...] = ()

    kind = "data_movement"


def ReaderDataMovementConfig(
    compile_args: Sequence[int] = (), defines=None, named_compile_args=None
):  # noqa: N802
    """The reader preset: NCRISC (RISCV_1) on NOC_0."""
    return DataMovementConfig(
        DataMovementProcessor.RISCV_1,
        NOC.NOC_0,
        tuple(compile_args),
        tuple((defines or {}).items()),
        tuple((named_compile_args or {}).items()),
    )


def WriterDataMovementConfig(
    compile_args: Sequence[int] = (), defines=None, named_compile_args=None
):  # noqa: N802
    """The writer preset: BRISC (RISCV_0) on NOC_1."""
    return DataMovementConfig(
        DataMovementProcessor.RISCV_0,
        NOC.NOC_1,
        tuple(compile_args),
        tuple((defines or {}).items()),
        tuple((named_compile_args or {}).items()),
    )


@dataclass(frozen=True, slots=True)
class ComputeConfig:
    """tt-metal ``ComputeConfig``: numerics knobs of the compute kernel."""

    math_fidelity: MathFidelity = MathFidelity.HiFi4
    fp32_dest_acc_en: bool = False
    dst_full_sync_en: bool = False
    math_approx_mode: bool = False
    compile_args: tuple[int, ...] = ()
    defines: tuple[tuple[str, str], ...] = ()
    named_compile_args: tuple[tuple[str, int], ...] = ()
    engine: int = 0
    """Which compute slot (Quasar has several compute engines; Wormhole/Blackhole one)."""

    kind = "compute"

    def __post_init__(self) -> None:
        try:
            fidelity = MathFidelity(int(self.math_fidelity))
        except (TypeError, ValueError):
            raise DeviceError(
                f"ComputeConfig(math_fidelity={self.math_fidelity!r}): expected a MathFidelity "
                f"{FIDELITY_CHOICES}"
            ) from None
        object.__setattr__(self, "math_fidelity", fidelity)


class CircularBufferConfig:
    """tt-metal ``CircularBufferConfig(total_size, {index: data_format})``.

    Several indices may share one configuration (same memory, different views).
    """

    def __init__(self, total_size: int, data_formats: dict[int, object]) -> None:
        if total_size <= 0:
            raise DeviceError(f"circular buffer total_size must be positive, got {total_size}")
        self.total_size = int(total_size)
        self.data_formats = dict(data_formats)
        self.page_sizes: dict[int, int] = {}
        self.tiles: dict[int, object] = {}
        self.names: dict[int, str] = {}
        self.global_buffer = None
        self.address_offset = 0
        self.fixed_address: int | None = None

    def set_page_size(self, index: int, page_size: int) -> CircularBufferConfig:
        if index not in self.data_formats:
            raise DeviceError(f"circular buffer index {index} has no data format in this config")
        if page_size <= 0 or self.total_size % page_size:
            raise DeviceError(
                f"circular buffer {index}: total size {self.total_size} B is not a multiple of "
                f"page size {page_size} B"
            )
        self.page_sizes[index] = int(page_size)
        return self

    def set_tile_dims(self, index: int, tile) -> CircularBufferConfig:
        self.tiles[index] = tile
        return self

    def set_name(self, index: int, name: str) -> CircularBufferConfig:
        """A readable name for diagnostics (TT-Lang passes the DFB's variable name)."""
        self.names[index] = name
        return self

    def set_address(self, address: int) -> CircularBufferConfig:
        """Place the CB at a fixed L1 address chosen by the caller (the TT-Lang compiler's
        DFB allocation); the launch checks it against L1 and L1 buffers."""
        self.fixed_address = int(address)
        return self

    def set_globally_allocated_address(self, buffer, offset: int = 0) -> CircularBufferConfig:
        """Alias the CB onto an existing L1 buffer (a 'dynamic' CB over a sharded tensor)."""
        self.global_buffer = buffer
        self.address_offset = offset
        return self

    def indices(self) -> list[int]:
        missing = [i for i in self.data_formats if i not in self.page_sizes]
        if missing:
            raise DeviceError(f"circular buffer indices {missing} have no page size")
        return sorted(self.data_formats)


@dataclass(slots=True)
class KernelSpec:
    """One kernel of a program on a set of cores."""

    handle: int
    name: str
    entry: Callable[..., object]
    cores: CoreRangeSet
    config: DataMovementConfig | ComputeConfig
    slot: str | None = None
    native: bool = False
    runtime_args: dict[CoreCoord, list[int]] = field(default_factory=dict)
    common_runtime_args: list[int] = field(default_factory=list)
    source: str | None = None

    @property
    def kind(self) -> str:
        return self.config.kind


@dataclass(slots=True)
class SemaphoreSpec:
    sem_id: int
    cores: CoreRangeSet
    initial_value: int


class Program:
    """Kernels, circular buffers, semaphores and runtime args for one launch."""

    def __init__(self, name: str = "program") -> None:
        self.name = name
        self.kernels: list[KernelSpec] = []
        self.circular_buffers: list[tuple[CoreRangeSet, CircularBufferConfig]] = []
        self.semaphores: list[SemaphoreSpec] = []

    def create_kernel(
        self,
        entry: Callable[..., object],
        core_spec,
        config: DataMovementConfig | ComputeConfig,
        *,
        name: str | None = None,
        slot: str | None = None,
        native: bool = False,
        source: str | None = None,
    ) -> int:
        """Add a kernel; return its handle.  ``entry`` is called with no arguments."""
        if not callable(entry):
            raise DeviceError(f"kernel entry must be callable, got {type(entry).__name__}")
        if not isinstance(config, (DataMovementConfig, ComputeConfig)):
            raise DeviceError("kernel config must be a DataMovementConfig or a ComputeConfig")
        handle = len(self.kernels)
        kname: str = name if name else getattr(entry, "__name__", f"kernel{handle}")
        self.kernels.append(
            KernelSpec(
                handle,
                kname,
                entry,
                as_core_range_set(core_spec),
                config,
                slot,
                native,
                source=source,
            )
        )
        return handle

    def create_circular_buffer(self, core_spec, config: CircularBufferConfig) -> int:
        config.indices()  # every index has a page size
        self.circular_buffers.append((as_core_range_set(core_spec), config))
        return len(self.circular_buffers) - 1

    def create_semaphore(self, core_spec, initial_value: int = 0) -> int:
        """Add a semaphore on ``core_spec``; return its id for ``get_semaphore(id)``."""
        cores = as_core_range_set(core_spec)
        if not 0 <= initial_value < 1 << 32:
            raise DeviceError(f"semaphore initial value {initial_value} is not a uint32")
        used = {s.sem_id for s in self.semaphores if _overlap(s.cores, cores)}
        sem_id = next(i for i in range(NUM_SEMAPHORES + 1) if i not in used)
        if sem_id >= NUM_SEMAPHORES:
            raise DeviceError(f"more than {NUM_SEMAPHORES} semaphores on one core")
        self.semaphores.append(SemaphoreSpec(sem_id, cores, int(initial_value)))
        return sem_id

    def create_semaphore_with_id(self, core_spec, sem_id: int, initial_value: int = 0) -> int:
        """Add semaphore ``sem_id`` on ``core_spec`` (ttnn ``SemaphoreDescriptor(id, ...)``)."""
        cores = as_core_range_set(core_spec)
        if not 0 <= sem_id < NUM_SEMAPHORES:
            raise DeviceError(f"semaphore id {sem_id} is outside 0..{NUM_SEMAPHORES - 1}")
        if not 0 <= initial_value < 1 << 32:
            raise DeviceError(f"semaphore initial value {initial_value} is not a uint32")
        if any(s.sem_id == sem_id and _overlap(s.cores, cores) for s in self.semaphores):
            raise DeviceError(f"semaphore id {sem_id} is already used on those cores")
        self.semaphores.append(SemaphoreSpec(sem_id, cores, int(initial_value)))
        return sem_id

    def set_runtime_args(self, kernel: int, core_spec, args: Sequence[int]) -> None:
        """Per-core runtime args (the same list on every core of ``core_spec``)."""
        spec = self._kernel(kernel)
        values = _u32_list(args, spec.name)
        for coord in as_core_range_set(core_spec).cores():
            if not spec.cores.contains(coord):
                raise DeviceError(f"kernel {spec.name!r} does not run on core {coord}")
            spec.runtime_args[coord] = list(values)
            self._check_arg_budget(spec, coord)

    def set_runtime_args_per_core(
        self, kernel: int, cores: Sequence, args: Sequence[Sequence[int]]
    ) -> None:
        if len(cores) != len(args):
            raise DeviceError("set_runtime_args_per_core: one argument list per core")
        for core, a in zip(cores, args, strict=True):
            self.set_runtime_args(kernel, core, a)

    def set_common_runtime_args(self, kernel: int, args: Sequence[int]) -> None:
        spec = self._kernel(kernel)
        spec.common_runtime_args = _u32_list(args, spec.name)
        for coord in spec.runtime_args:
            self._check_arg_budget(spec, coord)

    def get_runtime_args(self, kernel: int, core) -> list[int]:
        spec = self._kernel(kernel)
        coord = core if isinstance(core, CoreCoord) else CoreCoord(*core)
        return spec.runtime_args.setdefault(coord, [])

    def _kernel(self, handle: int) -> KernelSpec:
        if not 0 <= handle < len(self.kernels):
            raise DeviceError(f"no kernel with handle {handle} in program {self.name!r}")
        return self.kernels[handle]

    @staticmethod
    def _check_arg_budget(spec: KernelSpec, coord: CoreCoord) -> None:
        n = len(spec.runtime_args.get(coord, ())) + len(spec.common_runtime_args)
        if n > MAX_RUNTIME_ARGS:
            raise DeviceError(
                f"kernel {spec.name!r} on core {coord} has {n} runtime args; at most "
                f"{MAX_RUNTIME_ARGS} (unique + common)"
            )


def _overlap(a: CoreRangeSet, b: CoreRangeSet) -> bool:
    return any(ra.intersects(rb) for ra in a for rb in b)


def _u32_list(args: Sequence[int], kernel: str) -> list[int]:
    out = []
    for i, v in enumerate(args):
        if isinstance(v, bool) or not isinstance(v, int) and not hasattr(v, "__index__"):
            raise DeviceError(f"runtime arg {i} of kernel {kernel!r} is not an integer: {v!r}")
        v = int(v)
        if not -(1 << 31) <= v < 1 << 32:
            raise DeviceError(f"runtime arg {i} of kernel {kernel!r} does not fit in 32 bits: {v}")
        out.append(v & 0xFFFFFFFF)
    return out
