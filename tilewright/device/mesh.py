"""Mesh devices: several chips opened together, one scheduler, the fabric between them.

A :class:`MeshDevice` (tt-metal ``distributed::MeshDevice``) is a rows x columns grid of
chips of one system (placed by :class:`~tilewright.device.topology.SystemMesh`), each a
full :class:`~tilewright.device.device.Device` with its own L1, DRAM and allocators.
All chips share one :class:`~tilewright.device.engine.Engine`, so kernels on different
chips run in one deterministic schedule and a fabric write on one chip wakes a kernel
waiting on another.  A *mesh workload* (``MeshWorkload``: a program per mesh coordinate)
runs every chip's kernels together in one launch; a program enqueued on one chip's
command queue runs that chip alone.

Chips are cheap until used: L1 and DRAM pages exist only once written, so a 32-chip
Galaxy opens in milliseconds.  Native kernels run on every chip (each chip's L1 is a
shared-memory object; the native runtime maps the running core's L1 at its identity
addresses, ``memory.L1Arena``).

Sub-meshes (:meth:`MeshDevice.create_submesh`) are views of a rectangle of their parent:
they share its chips, engine and fabric.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from tilewright.device import offload, session
from tilewright.device.coords import CoreCoord
from tilewright.device.device import DEFAULT_L1_SMALL_SIZE, Device
from tilewright.device.engine import Engine, EngineOptions, LaunchResult
from tilewright.device.fabric import Fabric, FabricConfig, FabricMail
from tilewright.device.launch import prepare_launch, program_dispatch_ns, release_launch
from tilewright.device.topology import Layout, MeshCoordinate, MeshError, MeshShape, SystemMesh

if TYPE_CHECKING:
    from tilewright.device.program import Program

__all__ = [
    "MeshDevice",
    "MeshWorkload",
    "MeshCoordinateRange",
    "MeshShape",
    "MeshCoordinate",
    "MeshError",
]


class MeshCoordinateRange:
    """An inclusive rectangle of mesh coordinates (``ttnn.MeshCoordinateRange``)."""

    __slots__ = ("start", "end")

    def __init__(self, start, end=None) -> None:
        if end is None and isinstance(start, MeshShape):  # the whole of a shape
            start, end = MeshCoordinate(0, 0), MeshCoordinate(start.rows - 1, start.cols - 1)
        self.start = start if isinstance(start, MeshCoordinate) else MeshCoordinate(start)
        end = self.start if end is None else end
        self.end = end if isinstance(end, MeshCoordinate) else MeshCoordinate(end)
        if self.end.row < self.start.row or self.end.col < self.start.col:
            raise MeshError(f"mesh coordinate range {self.start}..{self.end} is empty")

    def __iter__(self) -> Iterator[MeshCoordinate]:
        for r in range(self.start.row, self.end.row + 1):
            for c in range(self.start.col, self.end.col + 1):
                yield MeshCoordinate(r, c)

    def __repr__(self) -> str:
        return f"MeshCoordinateRange({self.start}, {self.end})"


class MeshWorkload:
    """Programs for the chips of a mesh (tt-metal ``MeshWorkload``), run as one launch."""

    def __init__(self, name: str = "mesh workload") -> None:
        self.name = name
        self.programs: dict[MeshCoordinate, Program] = {}

    def add_program(self, coords, program) -> None:
        """Run ``program`` on each chip of ``coords`` (a coordinate, a range, or several)."""
        if isinstance(coords, MeshCoordinate):
            targets: Iterable[MeshCoordinate] = (coords,)
        elif isinstance(coords, MeshCoordinateRange):
            targets = coords
        else:
            targets = [c if isinstance(c, MeshCoordinate) else MeshCoordinate(c) for c in coords]
        for coord in targets:
            if coord in self.programs:
                raise MeshError(f"{self.name}: two programs for mesh coordinate {coord}")
            self.programs[coord] = program


class MeshDevice:
    """A rows x columns mesh of chips that run together (see the module docstring)."""

    def __init__(
        self,
        system_desc,
        system: SystemMesh,
        layout: Layout,
        *,
        l1_small_size: int = DEFAULT_L1_SMALL_SIZE,
        options: EngineOptions | None = None,
        fabric_config: FabricConfig = FabricConfig.DISABLED,
        name: str = "",
    ) -> None:
        self.system_desc = system_desc
        self.system = system
        self.layout = layout
        self.parent: MeshDevice | None = None
        self.root: MeshDevice = self
        self.name = name or system.name
        rows, cols = len(layout), len(layout[0]) if layout else 0
        self.engine = Engine(options, name=f"the {rows}x{cols} mesh device")
        self.devices: list[Device] = []
        self.submeshes: list[MeshDevice] = []
        self.closed = False
        try:
            for row in layout:
                for chip in row:
                    dev = Device(
                        system_desc,
                        chip=chip,
                        device_id=chip,
                        l1_small_size=l1_small_size,
                        options=options,
                    )
                    dev.engine = self.engine  # one schedule for the whole mesh
                    dev.mesh = self
                    dev.place_prefix = f"chip {chip} "
                    self.devices.append(dev)
        except BaseException:
            for dev in self.devices:
                dev.close()
            raise
        self._by_id = {dev.device_id: dev for dev in self.devices}
        self.fabric = Fabric(fabric_config, layout, system)
        self.engine.mail = FabricMail(self.device_by_id)
        for hook in offload.MESH_HOOKS:  # worker processes take the chips (distributed/)
            hook(self)

    @classmethod
    def _view(cls, parent: MeshDevice, r0: int, c0: int, rows: int, cols: int) -> MeshDevice:
        view = cls.__new__(cls)
        view.system_desc = parent.system_desc
        view.system = parent.system
        view.layout = tuple(tuple(row[c0 : c0 + cols]) for row in parent.layout[r0 : r0 + rows])
        view.parent = parent
        view.root = parent.root
        view.name = f"{parent.name} sub-mesh {rows}x{cols} at ({r0}, {c0})"
        view.engine = parent.engine
        view.devices = [parent.root._by_id[chip] for row in view.layout for chip in row]
        view._by_id = {dev.device_id: dev for dev in view.devices}
        view.submeshes = []
        view.closed = False
        view.fabric = parent.root.fabric
        parent.submeshes.append(view)
        return view

    # -- shape and chips -------------------------------------------------------------------

    @property
    def shape(self) -> MeshShape:
        return MeshShape(len(self.layout), len(self.layout[0]))

    def get_num_devices(self) -> int:
        return len(self.devices)

    num_devices = property(get_num_devices)

    def get_devices(self) -> list[Device]:
        """The chips in row-major mesh order."""
        return list(self.devices)

    def get_device_ids(self) -> list[int]:
        return [d.device_id for d in self.devices]

    def get_device_id(self, coord) -> int:
        return self.device_at(coord).device_id

    def device_at(self, coord) -> Device:
        """The chip at a mesh coordinate."""
        c = coord if isinstance(coord, MeshCoordinate) else MeshCoordinate(coord)
        rows, cols = self.shape
        if c.row >= rows or c.col >= cols:
            raise MeshError(f"mesh coordinate {c} is outside this {rows}x{cols} mesh")
        return self.devices[c.row * cols + c.col]

    def get_device(self, key) -> Device:
        """A chip by device id (int) or mesh coordinate."""
        if isinstance(key, int):
            return self.device_by_id(key)
        return self.device_at(key)

    def device_by_id(self, device_id: int) -> Device:
        dev = self._by_id.get(device_id)
        if dev is None:
            raise MeshError(
                f"device {device_id} is not part of this mesh (devices {self.get_device_ids()})"
            )
        return dev

    def coordinate_of(self, device: Device) -> MeshCoordinate:
        """The mesh coordinate of one of this mesh's chips."""
        index = self.devices.index(device)
        return MeshCoordinate(*divmod(index, self.shape.cols))

    def compute_with_storage_grid_size(self):
        """The worker grid every chip offers (the smallest, as tt-mlir's ``DeviceAttr``)."""
        return CoreCoord(min(d.grid_x for d in self.devices), min(d.grid_y for d in self.devices))

    def arch(self):
        return self.devices[0].arch()

    def id(self) -> int:
        return self.devices[0].device_id

    @property
    def dram_alignment(self) -> int:
        return self.devices[0].dram_alignment

    # -- sub-meshes ------------------------------------------------------------------------

    def create_submesh(self, shape, offset=None) -> MeshDevice:
        """A view of the ``shape`` rectangle at ``offset`` (default (0, 0)) of this mesh."""
        self._check_open()
        s = shape if isinstance(shape, MeshShape) else MeshShape(shape)
        o = MeshCoordinate(0, 0) if offset is None else offset
        o = o if isinstance(o, MeshCoordinate) else MeshCoordinate(o)
        rows, cols = self.shape
        if o.row + s.rows > rows or o.col + s.cols > cols:
            raise MeshError(
                f"sub-mesh {s.rows}x{s.cols} at offset ({o.row}, {o.col}) reaches outside this "
                f"{rows}x{cols} mesh"
            )
        return MeshDevice._view(self, o.row, o.col, s.rows, s.cols)

    def create_submeshes(self, shape) -> list[MeshDevice]:
        """Tile this mesh with ``shape`` sub-meshes, row-major."""
        s = shape if isinstance(shape, MeshShape) else MeshShape(shape)
        rows, cols = self.shape
        if rows % s.rows or cols % s.cols:
            raise MeshError(
                f"sub-mesh shape {s.rows}x{s.cols} does not tile this {rows}x{cols} mesh"
            )
        return [
            self.create_submesh(s, MeshCoordinate(r, c))
            for r in range(0, rows, s.rows)
            for c in range(0, cols, s.cols)
        ]

    def get_submeshes(self) -> list[MeshDevice]:
        return list(self.submeshes)

    # -- running ---------------------------------------------------------------------------

    def enqueue_mesh_workload(
        self, workload: MeshWorkload, *, place_word: str = "core"
    ) -> LaunchResult:
        """Run every chip's program of ``workload`` together on the shared engine."""
        self._check_open()
        items = sorted(workload.programs.items(), key=lambda kv: tuple(kv[0]))
        if not items:
            raise MeshError(f"{workload.name} has no programs")
        remote = self.devices[0].remote
        result = (
            remote.run_workload(self, workload, items, place_word) if remote is not None else None
        )
        if result is None:
            result = self._run_here(workload, items, place_word)
        result.dispatch_ns = max(
            program_dispatch_ns(self.device_at(coord), program) for coord, program in items
        )
        session.record_launch(workload.name, result, self.devices[0])
        return result

    def _run_here(self, workload: MeshWorkload, items, place_word: str) -> LaunchResult:
        """One engine run over the workload's chips, in this process."""
        tracer = session.tracer_for(self.devices[0])
        prepared: list[Device] = []
        try:
            runs = []
            for coord, program in items:
                device = self.device_at(coord)
                runs += prepare_launch(device, program, place_word=place_word)
                prepared.append(device)
            if tracer is not None:
                tracer.begin_launch(workload, runs)
            return self.engine.run(runs)
        finally:
            for device in prepared:
                release_launch(device)

    # -- lifecycle -------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed or self.root.closed:
            raise MeshError("the mesh device is closed")

    def close(self) -> None:
        """Close the mesh (a root mesh closes its chips; a sub-mesh only its view)."""
        if self.closed:
            return
        for sub in self.submeshes:
            sub.close()
        self.closed = True
        if self.root is self:
            for dev in self.devices:
                if dev.remote is not None:  # its worker unmaps the chip's memory
                    dev.remote.release(dev)
                    dev.remote = None
                dev.close()

    def __repr__(self) -> str:
        rows, cols = self.shape
        return f"<MeshDevice {rows}x{cols} of {self.name}: devices {self.get_device_ids()}>"
