"""SPMD over a mesh: an operation called with mesh tensors runs on every chip with its shard.

ttnn operations and TT-Lang operations alike: the call is repeated once per chip of the
mesh (row-major), each time with every mesh tensor argument replaced by that chip's
device tensor; the per-chip results are gathered into mesh tensors.  Mesh tensors of
one call must live on one mesh device; a single-device tensor among them is an error
(ttnn requires it distributed too).  TT-Lang launches of one call start together in the
trace (the chips run in parallel); an error on one chip names the chip.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from tilewright.device import offload, session
from tilewright.device.topology import MeshError
from tilewright.errors import TilewrightError
from tilewright.ttnn.mesh_tensor import MeshTensor
from tilewright.ttnn.tensor import Tensor

__all__ = ["mesh_of_arguments", "call_per_chip", "run_operation_per_chip", "param_names"]


@functools.cache
def param_names(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The positional parameter names of ``fn`` (to name arguments in errors)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - builtins without signatures
        return ()
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def _walk(value: Any, found: list[tuple[str, Tensor]], where: str) -> None:
    if isinstance(value, Tensor):
        found.append((where, value))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _walk(v, found, f"{where}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            _walk(v, found, f"{where}[{k!r}]")


def mesh_of_arguments(args: tuple, kwargs: dict, names: tuple[str, ...] = ()):
    """The mesh of a call's mesh tensors (device or host ``MeshTensor`` template), or None.

    Raises:
        MeshError: mesh tensors on different meshes, or mixed with single-device tensors.
    """
    found: list[tuple[str, Tensor]] = []
    for i, a in enumerate(args):
        _walk(a, found, f"'{names[i]}'" if i < len(names) else f"argument {i}")
    for k, v in kwargs.items():
        _walk(v, found, f"'{k}'")
    meshes = [(w, t) for w, t in found if isinstance(t, MeshTensor)]
    if not meshes:
        return None
    where0, first = meshes[0]
    for where, t in found:
        if not isinstance(t, MeshTensor):
            place = "the host" if t.device() is None else f"device {t.device().device_id}"
            raise MeshError(
                f"{where} is a single-device tensor on {place}, but {where0} is a mesh tensor; "
                "the tensors of one call are all distributed over the mesh",
                hint="distribute it: ttnn.from_torch(..., device=mesh, "
                "mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))",
            )
        if t.mesh is not first.mesh or tuple(t.mesh_shape) != tuple(first.mesh_shape):
            raise MeshError(
                f"{where} and {where0} are mesh tensors of different meshes ({t!r} and {first!r})"
            )
    return first


def _substitute(value: Any, k: int) -> Any:
    if isinstance(value, MeshTensor):
        return value.shards[k]
    if isinstance(value, list):
        return [_substitute(v, k) for v in value]
    if isinstance(value, tuple):
        return tuple(_substitute(v, k) for v in value)
    if isinstance(value, dict):
        return {key: _substitute(v, k) for key, v in value.items()}
    return value


def _gather(results: list[Any], template: MeshTensor) -> Any:
    first = results[0]
    if first is None:
        if any(r is not None for r in results):  # pragma: no cover - per-chip calls agree
            raise MeshError("an operation returned a tensor on some chips only")
        return None
    if isinstance(first, Tensor):
        return MeshTensor(results, template.mesh, template.mesh_shape)
    if isinstance(first, (list, tuple)):
        parts = [_gather([r[i] for r in results], template) for i in range(len(first))]
        return type(first)(parts)
    if all(r == first for r in results):
        return first
    raise MeshError(
        f"the operation returned {type(first).__name__} values that differ between chips"
    )


def _note_chip(exc: BaseException, template: MeshTensor, k: int) -> None:
    if template.mesh is not None:
        chip = template.mesh.devices[k].device_id
        r, c = divmod(k, template.mesh_shape.cols)
        exc.add_note(f"on chip {chip} (mesh coordinate ({r}, {c}))")


def call_per_chip(fn: Callable[..., Any], template: MeshTensor, args: tuple, kwargs: dict) -> Any:
    """``fn`` once per chip with each chip's shards; the results as mesh tensors.

    The chips' launches are independent: where worker processes run the chips
    (``tilewright.distributed``) they run at the same time, and the call waits for all of
    them before it returns; the first error in chip order is raised, as it would be here.
    """
    results = []
    with offload.launch_batch() as batch:

        def note(exc: BaseException, device) -> None:
            devices = template.mesh.devices if template.mesh is not None else []
            if isinstance(exc, TilewrightError) and device in devices:
                _note_chip(exc, template, devices.index(device))

        for k in range(len(template.shards)):
            try:
                results.append(fn(*_substitute(args, k), **_substitute(kwargs, k)))
            except TilewrightError as exc:
                offload.wait_for(batch, note)  # an earlier chip's error comes first
                _note_chip(exc, template, k)
                raise
        offload.wait_for(batch, note)
    return _gather(results, template)


def run_operation_per_chip(
    operation: Callable[..., Any], args: tuple, names: tuple[str, ...], loc=None
) -> bool:
    """The TT-Lang hook: run ``operation`` on every chip of its mesh tensors' mesh.

    Returns False when no argument is a mesh tensor (the call runs on one device).
    Errors about the arguments point at ``loc`` (the operation's call).
    """
    try:
        template = mesh_of_arguments(args, {}, names)
        if template is not None and template.mesh is None:
            raise MeshError(
                "the operation's mesh tensors are on the host; place them on a mesh device "
                "(ttnn.to_device(t, mesh) or from_torch(..., device=mesh))"
            )
    except MeshError as exc:
        exc.loc = exc.loc or loc
        raise
    if template is None:
        return False
    tracer = session.tracer_for(template.mesh.devices[0])  # None unless tracing
    if tracer is not None:
        tracer.begin_step()
    try:
        call_per_chip(operation, template, args, {})
    finally:
        if tracer is not None:
            tracer.end_step()
    return True
