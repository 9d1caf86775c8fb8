"""Rules of ``ttl.copy`` and transfer handles (spec A.6, D.5).

A copy runs on a data-movement kernel, moves data between exactly one block and a
tensor slice or a pipe, writes only reserved blocks, and pairs a tensor and a DFB of
one layout, format and tile shape whose slice covers the block exactly; a transfer
handle is waited once.  The tensor-slice bounds are the tensor's own rule
(``ttnn.tensor``: its messages are functions, so the lowering's run-time check prints
the same text); they are registered here with the copy rules.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from tilewright.errors import DeviceError, DFBContractError, KernelError, TilewrightError
from tilewright.lang.rules.registry import rule, shape_text
from tilewright.ttnn.tensor import SLICE_RULE

__all__ = [
    "CopyEnd",
    "check_dm_only",
    "copy_ends_violation",
    "COPY_INTO_BLOCK",
    "RECEIVE_INTO_BLOCK",
    "check_copy_into",
    "check_copy_pair",
    "covers",
    "check_covers",
    "check_row_pages",
    "transfer_what",
    "check_not_waited",
    "handle_waited",
    "PIPE_SEND_WAITED",
    "RECEIVE_WAITED",
    "check_group_open",
    "check_group_item",
]


class Described(Protocol):
    def describe(self) -> str: ...


DM_ONLY = rule(
    "dm-only",
    KernelError,
    "A.6",
    "copies, pipe nets and raw element access run on data-movement kernels",
)
COPY_ENDS = rule(
    "copy-ends",
    KernelError,
    "A.6",
    "a copy moves data between a block and a tensor slice or a pipe: exactly one side is a block",
)
COPY_INTO_RESERVED = rule(
    "copy-into-reserved",
    KernelError,
    "D.1",
    "a copy writes only a block from reserve()",
)
COPY_LAYOUT = rule(
    "copy-layout", KernelError, "D.5", "a copy does not mix tiled and row-major data"
)
COPY_FORMAT = rule(
    "copy-format", KernelError, "D.5", "a copy moves bytes: tensor and DFB share a format"
)
COPY_TILE = rule("copy-tile", KernelError, "D.5", "tensor and DFB share a tile shape")
COPY_COVERS = rule(
    "copy-covers-block", KernelError, "D.5", "the tensor slice covers the block exactly"
)
COPY_ROW_PAGES = rule(
    "copy-row-pages",
    KernelError,
    "D.5",
    "a row-major copy needs whole-row pages (interleaved or height-sharded tensors)",
)
SINGLE_USE = rule(
    "transfer-single-use", DFBContractError, "A.6", "a transfer handle is waited once"
)
GROUP_SINGLE_USE = rule(
    "group-transfer-single-use",
    DFBContractError,
    "D.5",
    "a GroupTransfer is waited once and takes no transfer after wait_all()",
)
GROUP_ITEM = rule(
    "group-transfer-item", KernelError, "D.5", "GroupTransfer.add() takes a transfer handle"
)
SLICE = rule(
    SLICE_RULE,
    DeviceError,
    "D.5",
    "a tensor slice has one index or unit-step range per dimension, inside the tensor",
)

COPY_INTO_BLOCK = "ttl.copy(tensor_slice, block)"
RECEIVE_INTO_BLOCK = "ttl.copy(pipe, block)"
PIPE_SEND_WAITED = "this pipe send was already waited; a handle is single-use"
RECEIVE_WAITED = "this receive was already waited; a request is single-use"


@dataclass(frozen=True, slots=True)
class CopyEnd:
    """What a copy pairs of a tensor or a DFB: layout, format, tile shape."""

    tiled: bool
    data_format: object  # compared for equality only (a DataFormat, or its name)
    dtype_name: str
    tile: tuple[int, int]


def check_dm_only(what: str, kernel: str, compute: bool) -> None:
    """``what`` (``ttl.copy``, ``net.if_src``, raw element access) on a compute kernel."""
    if compute:
        raise DM_ONLY.violation(
            f"{what} runs on data-movement kernels; '{kernel}' is a compute kernel"
        )


def copy_ends_violation(src_kind: str, dst_kind: str) -> TilewrightError:
    """``ttl.copy(src, dst)`` whose ends are not one block and one slice or pipe."""
    return COPY_ENDS.violation(
        f"ttl.copy({src_kind}, {dst_kind}): a copy moves data between a block and a tensor "
        "slice or a pipe; exactly one side must be a block"
    )


def check_copy_into(construct: str, block: Described, reserved: bool) -> None:
    """``construct`` (``ttl.copy(tensor_slice, block)``, ``ttl.copy(pipe, block)``) writes
    ``block``, which must come from reserve()."""
    if not reserved:
        raise COPY_INTO_RESERVED.violation(
            f"{construct} writes the block, so it must come from reserve(); "
            f"{block.describe()} comes from wait()"
        )


def check_copy_pair(dfb_name: str, tensor: CopyEnd, dfb: CopyEnd) -> None:
    """A tensor and a DFB a copy moves bytes between: one layout, format and tile shape."""
    if tensor.tiled != dfb.tiled:
        raise COPY_LAYOUT.violation(
            f"ttl.copy: cannot mix a {'tiled' if tensor.tiled else 'row-major'} tensor with a "
            f"{'tiled' if dfb.tiled else 'row-major'} DFB '{dfb_name}'"
        )
    if tensor.data_format != dfb.data_format:
        raise COPY_FORMAT.violation(
            f"ttl.copy: tensor of {tensor.dtype_name} and DFB '{dfb_name}' of {dfb.dtype_name} "
            "differ in format; the NoC copies bytes, so formats must match"
        )
    if tensor.tiled and tensor.tile != dfb.tile:
        raise COPY_TILE.violation(
            f"ttl.copy: tensor tiles {tensor.tile[0]}x{tensor.tile[1]} and DFB '{dfb_name}' "
            f"tiles {dfb.tile[0]}x{dfb.tile[1]} differ"
        )


def covers(full_shape: Sequence[int], shape: Sequence[int], block_shape: Sequence[int]) -> bool:
    """A slice covers a block: the block's shape equals the slice's extents with squeezed
    (scalar-index) dimensions dropped, or its trailing extents with every leading extent 1
    (spec D.5: 1x1 blocks may be addressed with scalar indices; leading scalar indices
    squeeze).  ``full_shape``: every dimension's extent; ``shape``: without squeezed ones."""
    block = tuple(block_shape)
    if tuple(shape) == block:
        return True
    r = len(block)
    if r > len(full_shape):
        return False
    lead = len(full_shape) - r
    return tuple(full_shape[lead:]) == block and all(e == 1 for e in full_shape[:lead])


def check_covers(
    slice_text: str,
    full_shape: Sequence[int],
    shape: Sequence[int],
    block: Described,
    block_shape: Sequence[int],
    tile: tuple[int, int] | None,
) -> None:
    """``ttl.copy`` between the slice ``slice_text`` and a block (``tile``: the tensor's
    tile for a tiled tensor, None for row-major)."""
    if covers(full_shape, shape, block_shape):
        return
    n_t, n_b = math.prod(shape), math.prod(block_shape)
    if tile is not None:
        elems = tuple(full_shape[:-2]) + (full_shape[-2] * tile[0], full_shape[-1] * tile[1])
        what, unit = f"Tensor shape {shape_text(elems)}", "tile"
    else:
        what, unit = f"Tensor shape {shape_text(shape)}", "element"
    raise COPY_COVERS.violation(
        f"{what} does not match Block shape {shape_text(block_shape)} "
        f"({unit} counts: {n_t} vs {n_b}): the slice {slice_text} must cover exactly the block "
        f"of {block.describe()}"
    )


def check_row_pages(page_size: int, row_bytes: int) -> None:
    """A row-major tensor's pages are whole rows (interleaved or height-sharded)."""
    if page_size != row_bytes:
        raise COPY_ROW_PAGES.violation(
            "ttl.copy of a row-major tensor needs whole-row pages (interleaved or "
            "height-sharded); this tensor is width- or block-sharded"
        )


def transfer_what(direction: str, slice_text: str, block_text: str) -> str:
    """What a copy moves, as diagnostics name it (``direction``: "read" tensor -> block)."""
    if direction == "read":
        return f"copy {slice_text} -> {block_text}"
    return f"copy {block_text} -> {slice_text}"


def check_not_waited(waited: bool, message: str) -> None:
    """``handle.wait()`` of a handle already waited (``message``: :func:`handle_waited`,
    :data:`PIPE_SEND_WAITED` or :data:`RECEIVE_WAITED`)."""
    if waited:
        raise SINGLE_USE.violation(message)


def handle_waited(what: str) -> str:
    """The message of a copy handle waited twice (``what``: :func:`transfer_what`)."""
    return f"transfer handle of {what} was already waited; a handle is single-use"


def check_group_open(done: bool, method: str) -> None:
    """``GroupTransfer.add()`` / ``wait_all()`` after ``wait_all()``."""
    if done:
        if method == "add":
            raise GROUP_SINGLE_USE.violation(
                "GroupTransfer.add() after wait_all(); a group is single-use"
            )
        raise GROUP_SINGLE_USE.violation(
            "GroupTransfer.wait_all() was already called; a group is single-use"
        )


def check_group_item(item: object) -> None:
    """What ``GroupTransfer.add()`` takes: a transfer handle."""
    if not hasattr(item, "wait"):
        raise GROUP_ITEM.violation(
            f"GroupTransfer.add() takes a transfer handle, got {type(item).__name__}"
        )
