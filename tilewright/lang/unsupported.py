"""TT-Lang names Tilewright does not implement: each raises an error that names it and why.

One table; ``ttl/__init__`` binds every entry so that a program using one gets a clear
``InterfaceError`` at the line that uses it instead of an ``AttributeError``.  The
splitter reads the same table (a statement using one of these names is placed as the
error it will raise).  ``Program`` is the spelling removed in spec 0.2.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from tilewright.errors import InterfaceError, user_location

__all__ = ["UNSUPPORTED", "Program", "unsupported"]

UNSUPPORTED: dict[str, str] = {
    "make_tensor_backed_dfb": "tensor-backed DFBs (a DFB inside an L1-sharded tensor) are not supported",
    "copy_tensor_page": "ttl.copy_tensor_page (row-major page reads into a DFB) is not supported",
    "ProgramRuntimeResources": "runtime resources are a hardware-only runtime feature (reference C.11)",
    "KernelRuntimeResources": "runtime resources are a hardware-only runtime feature (reference C.11)",
    "CoreRuntimeArgs": "runtime resources are a hardware-only runtime feature (reference C.11)",
    "KernelDefine": "runtime resources are a hardware-only runtime feature (reference C.11)",
    "FabricManagerClaim": "fabric managers need the multi-chip fabric, which is not modelled",
    "FabricConnectionBinding": "fabric managers need the multi-chip fabric, which is not modelled",
    "FabricConnectionRequirement": "fabric managers need the multi-chip fabric, which is not modelled",
    "DeviceDomain": "multi-device domains are not supported (one chip per operation)",
    "DeviceRange": "multi-device domains are not supported (one chip per operation)",
    "DeviceRef": "multi-device domains are not supported (one chip per operation)",
    "DomainComponent": "multi-device domains are not supported (one chip per operation)",
    "TransferGraph": "multi-device transfer graphs are not supported",
    "TransferEdge": "multi-device transfer graphs are not supported",
    "AxisNeighborTransfer": "multi-device transfer graphs are not supported",
    "StencilTransfer": "multi-device transfer graphs are not supported",
    "GatherTransfer": "multi-device transfer graphs are not supported",
    "ScatterTransfer": "multi-device transfer graphs are not supported",
    "AllToAllTransfer": "multi-device transfer graphs are not supported",
    "MeshProgramPlacement": "mesh program placements are not supported",
    "SRAMStorage": "the compiler-sram memory model is not supported (Tilewright uses metal-cb)",
}


def unsupported(name: str) -> Callable[..., NoReturn]:
    """A stand-in for ``ttl.<name>`` that raises when used (called or instantiated)."""
    why = UNSUPPORTED[name]

    def fn(*_args: object, **_kwargs: object) -> NoReturn:
        raise InterfaceError(f"ttl.{name}: {why}", loc=user_location(), rule="unsupported")

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"Not supported by Tilewright: {why}."
    return fn


def Program(*threads: object) -> NoReturn:  # noqa: N802 - the legacy spelling
    """Removed in spec 0.2: kernels are collected automatically."""
    raise InterfaceError(
        "ttl.Program was removed in spec 0.2: kernel functions are collected automatically; "
        "delete the `return ttl.Program(...)(...)` statement"
    )
