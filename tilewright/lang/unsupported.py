"""TT-Lang names Tilewright does not implement: each raises an error that names it and why.

One table; ``ttl/__init__`` binds every entry so that a program using one gets a clear
``InterfaceError`` at the line that uses it instead of an ``AttributeError``.  The
splitter reads the same table (a statement using one of these names is placed as the
error it will raise).  ``Program`` is the spelling removed in spec 0.2, accepted (it
does nothing: kernels are collected automatically).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from tilewright.errors import InterfaceError, user_location

__all__ = ["UNSUPPORTED", "Program", "unsupported"]

UNSUPPORTED: dict[str, str] = {
    "make_tensor_backed_dfb": "tensor-backed DFBs (a DFB inside an L1-sharded tensor) are not supported",
    "copy_tensor_page": "ttl.copy_tensor_page (row-major page reads into a DFB) is not supported",
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


class Program:
    """``return ttl.Program(compute, dm0, dm1)(a, b, out)``: the spelling removed in spec 0.2
    (reference A.12), accepted.  Kernel functions are collected by their decorators, so the
    program object only checks it was given kernel functions; calling it does nothing."""

    def __init__(self, *threads: object) -> None:
        for t in threads:
            if not callable(t):
                raise InterfaceError(
                    f"ttl.Program(...) takes the operation's kernel functions, got "
                    f"{type(t).__name__}",
                    loc=user_location(),
                )
        self.threads = threads

    def __call__(self, *args: object, **kwargs: object) -> None:
        return None
