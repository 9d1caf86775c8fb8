"""ttnn mesh devices: which system a program sees, opening meshes, the fabric setting.

The virtual system (tt-metal's ``SystemMesh``) is chosen once per request:

* ``--system-desc FILE`` / ``system_desc=``: that descriptor (mesh layout from its links);
* ``--board NAME`` / ``board=``: a board preset and its mesh shape (``n300`` 1x2, ``t3k``
  2x4, ``galaxy`` 4x8, ``p300`` 1x2, ``quietbox`` 1x4, single chips 1x1);
* neither: a program that opens one device (``open_device(device_id=0)``) gets the
  ``n150``; anything that asks for more chips -- ``GetNumAvailableDevices``,
  ``open_mesh_device``, ``open_device(device_id>0)`` -- gets the default multi-chip
  system, the ``galaxy`` (32 Wormhole chips that are n150 chips, a 4x8 torus), so
  multi-device programs run without flags.  ``MeshShape(1, 2)`` on it is a line of two
  linked Galaxy chips, as on a real Galaxy.

``--num-devices N`` (tt-lang-sim's flag) shows the program N chips of that system: the
chips of its default N-chip mesh (the whole system's shape when N is every chip, else a
1xN line), which ``GetNumAvailableDevices`` counts, ``open_mesh_device()`` opens and
``get_device_ids`` lists; other chips cannot be opened.

``set_fabric_config`` (before ``open_mesh_device``, as in tt-metal) decides how the chips
of a mesh reach each other (:mod:`tilewright.device.fabric`).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from tilewright import target
from tilewright.device import session
from tilewright.device.device import DEFAULT_L1_SMALL_SIZE
from tilewright.device.engine import EngineOptions
from tilewright.device.fabric import MODELLED_CONFIGS, FabricConfig
from tilewright.device.mesh import MeshDevice
from tilewright.device.requirements import check_runnable
from tilewright.device.topology import MeshCoordinate, MeshError, MeshShape, SystemMesh
from tilewright.errors import SystemDescError
from tilewright.target.model import SystemDesc
from tilewright.target.presets import board_mesh_shape
from tilewright.ttnn import chips as open_chips

__all__ = [
    "DEFAULT_MULTI_CHIP_BOARD",
    "resolve_system",
    "visible_layout",
    "check_visible",
    "open_mesh_device",
    "close_mesh_device",
    "create_mesh_device",
    "set_fabric_config",
    "get_fabric_config",
    "GetNumAvailableDevices",
    "get_num_devices",
    "get_device_ids",
    "GetNumPCIeDevices",
    "get_num_pcie_devices",
    "get_pcie_device_ids",
    "FabricReliabilityMode",
]

DEFAULT_SINGLE_CHIP_BOARD = "n150"
DEFAULT_MULTI_CHIP_BOARD = "galaxy"


@dataclass(frozen=True)
class System:
    """A resolved system: its descriptor, name and chip layout."""

    system_desc: SystemDesc
    name: str
    mesh: SystemMesh


_SYSTEMS: dict[tuple[int, str], System] = {}  # (id of the descriptor, name) -> System
_OPEN_MESHES: list[MeshDevice] = []


def resolve_system(system_desc=None, board: str | None = None, *, multi_chip: bool) -> System:
    """The system a request sees (see the module docstring)."""
    if system_desc is None and board is None:
        system_desc, board = session.OPTIONS.system_desc, session.OPTIONS.board
    if system_desc is not None:
        name = "the system descriptor"
        if isinstance(system_desc, (str, os.PathLike)):
            name = os.fspath(system_desc)
            system_desc = target.read_system_desc(system_desc)
            try:  # the device checks again; here the error can name the file
                check_runnable(system_desc)
            except SystemDescError as err:
                err.add_note(f"in system descriptor {name}")
                raise
        sd = getattr(system_desc, "system_desc", system_desc)
        return _system(sd, name, None)
    name = board or (DEFAULT_MULTI_CHIP_BOARD if multi_chip else DEFAULT_SINGLE_CHIP_BOARD)
    sd = target.board_preset(name).system_desc
    return _system(sd, name, board_mesh_shape(name))


def visible_layout(system: System):
    """The chips the program sees (``--num-devices``): a layout, or None for every chip."""
    n = session.OPTIONS.num_devices
    if n is None:
        return None
    if n > system.mesh.num_chips:
        raise MeshError(
            f"--num-devices {n}: {system.name} has {system.mesh.num_chips} chips",
            hint="ask for fewer devices, or choose a bigger system with --board",
        )
    rows, cols = system.mesh.shape if n == system.mesh.num_chips else (1, n)
    return system.mesh.place(rows, cols)


def check_visible(system: System, chips) -> None:
    """Refuse chips outside the ones ``--num-devices`` shows."""
    layout = visible_layout(system)
    if layout is None:
        return
    seen = {chip for row in layout for chip in row}
    outside = [c for c in chips if c not in seen]
    if outside:
        raise MeshError(
            f"device {outside[0]} is not one of the {session.OPTIONS.num_devices} devices "
            f"--num-devices shows (devices {sorted(seen)})",
            hint="open at most --num-devices chips (ttnn.GetNumAvailableDevices())",
        )


def _system(sd, name: str, shape) -> System:
    if shape is None:  # a descriptor from a file or object: read afresh each time
        return System(sd, name, SystemMesh(sd, None, name))
    key = (id(sd), name)  # presets are module constants: lay them out once
    system = _SYSTEMS.get(key)
    if system is None or system.system_desc is not sd:
        system = _SYSTEMS[key] = System(sd, name, SystemMesh(sd, shape, name))
    return system


# -- the fabric -------------------------------------------------------------------------------


class FabricReliabilityMode:
    """``ttnn.FabricReliabilityMode``: accepted; links never fail here."""

    STRICT_SYSTEM_HEALTH_SETUP_MODE = "STRICT_SYSTEM_HEALTH_SETUP_MODE"
    RELAXED_SYSTEM_HEALTH_SETUP_MODE = "RELAXED_SYSTEM_HEALTH_SETUP_MODE"
    DYNAMIC_RECONFIGURATION_SETUP_MODE = "DYNAMIC_RECONFIGURATION_SETUP_MODE"


def set_fabric_config(config, reliability_mode=None, num_planes=None, *_args, **_kwargs) -> None:
    """Choose the fabric of the mesh devices opened from now on (``ttnn.set_fabric_config``).

    Raises:
        MeshError: a mesh device is open (the fabric is set up when a mesh opens), or the
            configuration is not modelled.
    """
    cfg = FabricConfig(config)
    open_meshes = [m for m in _OPEN_MESHES if not m.closed]
    if open_meshes and cfg != session.OPTIONS.fabric:
        raise MeshError(
            f"set_fabric_config({cfg.name}) while a mesh device is open: the fabric is set up "
            "when a mesh device opens",
            hint="call ttnn.set_fabric_config before ttnn.open_mesh_device (or after closing it)",
        )
    if cfg not in MODELLED_CONFIGS:
        raise MeshError(
            f"set_fabric_config({cfg.name}): this fabric configuration is not modelled; use "
            "DISABLED, FABRIC_1D, FABRIC_1D_RING or FABRIC_2D"
        )
    session.OPTIONS.fabric = cfg


def get_fabric_config() -> FabricConfig:
    return session.OPTIONS.fabric


# -- mesh devices ------------------------------------------------------------------------------


def open_mesh_device(
    mesh_shape=None,
    l1_small_size: int = DEFAULT_L1_SMALL_SIZE,
    trace_region_size: int = 0,
    num_command_queues: int = 1,
    dispatch_core_config=None,
    offset=None,
    physical_device_ids=None,
    worker_l1_size=None,
    *,
    system_desc=None,
    board: str | None = None,
    options: EngineOptions | None = None,
    **_ignored,
) -> MeshDevice:
    """Open a ``mesh_shape`` mesh of chips (default: the whole system mesh).

    Raises:
        MeshError: the shape does not fit the system, the offset reaches outside it, or a
            chip is already open.
    """
    with open_chips.OPEN_LOCK:  # two threads opening the same chips: exactly one succeeds
        return _open_mesh(
            mesh_shape, l1_small_size, offset, physical_device_ids, system_desc, board, options
        )


def _open_mesh(
    mesh_shape, l1_small_size, offset, physical_device_ids, system_desc, board, options
) -> MeshDevice:
    system = resolve_system(system_desc, board, multi_chip=True)
    visible = visible_layout(system) if system_desc is None and board is None else None
    if mesh_shape is None:
        shape = MeshShape(
            *(system.mesh.shape if visible is None else (len(visible), len(visible[0])))
        )
    else:
        shape = mesh_shape if isinstance(mesh_shape, MeshShape) else MeshShape(mesh_shape)
    off = None
    if offset is not None:
        coord = offset if isinstance(offset, MeshCoordinate) else MeshCoordinate(offset)
        off = (coord.row, coord.col)
    if (
        visible is not None
        and off is None
        and not physical_device_ids
        and ((shape.rows, shape.cols) == (len(visible), len(visible[0])))
    ):
        layout = visible
    else:
        layout = system.mesh.place(
            shape.rows, shape.cols, offset=off, device_ids=physical_device_ids or None
        )
    chips = [chip for row in layout for chip in row]
    if system_desc is None and board is None:
        check_visible(system, chips)
    for chip in chips:
        held = open_chips.holder_of(chip)
        if held is not None:
            raise MeshError(f"device {chip} is already open ({held}); close it first")
    mesh = MeshDevice(
        system.system_desc,
        system.mesh,
        layout,
        l1_small_size=l1_small_size,
        options=options or session.engine_options(),
        fabric_config=session.OPTIONS.fabric,
        name=system.name,
    )
    for dev in mesh.devices:
        open_chips.register(dev, f"in a {shape.rows}x{shape.cols} mesh device")
    _OPEN_MESHES.append(mesh)
    return mesh


def close_mesh_device(mesh_device: MeshDevice) -> None:
    """Close a mesh device (a sub-mesh closes only its view)."""

    if not isinstance(mesh_device, MeshDevice):
        raise MeshError(f"close_mesh_device takes a mesh device, got {type(mesh_device).__name__}")
    mesh_device.close()
    if mesh_device.root is mesh_device:
        for dev in mesh_device.devices:
            open_chips.unregister(dev)
        if mesh_device in _OPEN_MESHES:
            _OPEN_MESHES.remove(mesh_device)


@contextlib.contextmanager
def create_mesh_device(*args, **kwargs):
    """``with ttnn.create_mesh_device(MeshShape(1, 2)) as mesh:`` -- opens and closes."""
    mesh = open_mesh_device(*args, **kwargs)
    try:
        yield mesh
    finally:
        close_mesh_device(mesh)


# -- counting chips ----------------------------------------------------------------------------


def GetNumAvailableDevices(system_desc=None, board=None) -> int:  # noqa: N802
    """Chips of the system (32 without flags: the default multi-chip system; N with
    ``--num-devices N``)."""
    return len(get_device_ids(system_desc, board))


get_num_devices = GetNumAvailableDevices


def get_device_ids(system_desc=None, board=None) -> list[int]:
    system = resolve_system(system_desc, board, multi_chip=True)
    visible = visible_layout(system) if system_desc is None and board is None else None
    if visible is None:
        return list(range(system.mesh.num_chips))
    return sorted(chip for row in visible for chip in row)


def GetNumPCIeDevices(system_desc=None, board=None) -> int:  # noqa: N802
    """Chips with a PCIe link to the host (HostMMIO)."""
    sd = resolve_system(system_desc, board, multi_chip=True).system_desc
    return sum(1 for i in range(len(sd.chip_desc_indices)) if sd.is_mmio(i))


get_num_pcie_devices = GetNumPCIeDevices


def get_pcie_device_ids(system_desc=None, board=None) -> list[int]:
    sd = resolve_system(system_desc, board, multi_chip=True).system_desc
    return [i for i in range(len(sd.chip_desc_indices)) if sd.is_mmio(i)]
