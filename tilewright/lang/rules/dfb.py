"""Rules of the DFB protocol and of block use (spec D.1, D.2, A.4, A.5).

Each check takes the facts it needs -- names, counts, the blocks a kernel holds
(anything with ``describe()``: the interpreter's ``TensorBlock``, the lowering's
``Held``) -- and raises its rule's error.  The interpreter (``lang.dfb``,
``lang.expr``) calls it as the program runs; the lowering (``compiler/backend/lower``)
calls it on the facts it proves at compile time and emits a violation as a ``fail``
op at the same line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from tilewright.device.ops import OpError, bind_params, result_shape
from tilewright.errors import (
    BlockStateError,
    DFBContractError,
    InterfaceError,
    KernelError,
    TilewrightError,
)
from tilewright.lang.rules.registry import rule, shape_text

__all__ = [
    "RESERVE",
    "WAIT",
    "Side",
    "check_acquire_args",
    "check_acquire",
    "check_role",
    "check_release_order",
    "check_legacy_release",
    "READ",
    "STORE",
    "expression",
    "check_compute_only",
    "check_store_shape",
    "check_store_layout",
    "check_block_layouts",
    "operand_violation",
    "check_op",
    "op_violation",
    "SPSC",
]


class Described(Protocol):
    def describe(self) -> str: ...


class DFBFacts(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def block_count(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Side:
    """The producer or consumer side of a DFB: what differs between reserve() and wait()."""

    method: str  # "reserve" | "wait"
    producer: bool
    pointer: str  # the data-movement pointer: "write" | "read"
    release: str  # "push" | "pop"
    role: str  # "producer" | "consumer"


RESERVE = Side("reserve", True, "write", "push", "producer")
WAIT = Side("wait", False, "read", "pop", "consumer")

ACQUIRE_KERNEL = rule(
    "dfb-acquire-kernel",
    DFBContractError,
    "B.6",
    "kernel= selects release ownership on push() / pop(), never on reserve() / wait()",
)
ACQUIRE_ARGS = rule(
    "dfb-acquire-args", InterfaceError, "A.4", "reserve() and wait() take no arguments"
)
ONE_POINTER = rule(
    "dfb-one-pointer",
    DFBContractError,
    "D.1",
    "a data-movement kernel holds at most one block of a DFB per side (one read or write pointer)",
)
CAPACITY = rule(
    "dfb-capacity",
    DFBContractError,
    "D.1",
    "a kernel cannot acquire more blocks than the DFB has",
)
SPSC = rule(
    "dfb-spsc",
    DFBContractError,
    "D.1",
    "a DFB has one producer and one consumer kernel per node",
)
RELEASE_ORDER = rule(
    "dfb-release-order",
    DFBContractError,
    "D.1",
    "blocks of a DFB are pushed / popped in the order they were acquired",
)
RELEASE_NOTHING = rule(
    "dfb-release-nothing",
    DFBContractError,
    "A.12",
    "the legacy dfb.push() / dfb.pop() need a held block",
)
COMPUTE_ONLY = rule(
    "compute-only",
    KernelError,
    "A.5",
    "block expressions and store() run on compute kernels",
)
STORE_SHAPE = rule(
    "store-shape",
    BlockStateError,
    "A.5",
    "the stored expression has the block's shape",
)
STORE_LAYOUT = rule(
    "store-layout",
    BlockStateError,
    "A.5",
    "tiled and row-major values do not mix in a store",
)
BLOCK_LAYOUTS = rule(
    "block-layouts",
    KernelError,
    "A.5",
    "the block operands of one block op are all tiled or all row-major",
)
BLOCK_OPERAND = rule(
    "block-operand",
    KernelError,
    "A.5",
    "block expression operands are blocks, block expressions or numbers",
)
BLOCK_OP = rule(
    "block-op",
    KernelError,
    "A.5",
    "a block op's operands and parameters satisfy its registry entry (shape rule, signature)",
)


def check_acquire_args(side: Side, positional: int, keywords: Sequence[str]) -> None:
    """``dfb.reserve(...)`` / ``dfb.wait(...)`` take no arguments; ``kernel=`` has its own
    message (it belongs on the release)."""
    if "kernel" in keywords:
        raise ACQUIRE_KERNEL.violation(
            f"kernel= is not supported on DFB {side.method}(); select release ownership on "
            "push() or pop()"
        )
    if keywords:
        raise ACQUIRE_ARGS.violation(
            f"DFB {side.method}() takes no arguments; got keyword argument(s): "
            f"{', '.join(keywords)}"
        )
    if positional:
        raise ACQUIRE_ARGS.violation(
            f"DFB {side.method}() takes no arguments; got {positional} positional argument(s)"
        )


def check_acquire(
    dfb: DFBFacts,
    side: Side,
    kernel: str,
    compute: bool,
    held: Sequence[Described],
    need_pages: int,
    capacity_pages: int,
) -> None:
    """One more block of ``dfb`` on ``side`` for a kernel already holding ``held`` of it
    (``need_pages``: the cumulative page count the acquisition asks the circular buffer)."""
    if held and not compute:
        raise ONE_POINTER.violation(
            f"{dfb.name}.{side.method}(): kernel '{kernel}' still holds block "
            f"{held[-1].describe()}; a data-movement kernel addresses a DFB through one "
            f"{side.pointer} pointer: {side.release} each block before the next acquisition"
        )
    if need_pages > capacity_pages:
        raise CAPACITY.violation(
            f"{dfb.name}.{side.method}(): kernel '{kernel}' already holds all "
            f"{dfb.block_count} blocks of the DFB; {side.release} one before acquiring another"
        )


class Named(Protocol):
    @property
    def name(self) -> str: ...


def check_role(dfb: DFBFacts, side: Side, node: object, owner: Named, kernel: Named) -> None:
    """The SPSC rule: ``kernel`` acquires on ``side`` of a DFB whose side ``owner`` took
    (on ``node``)."""
    if owner is not kernel:
        raise SPSC.violation(
            f"DFB '{dfb.name}' has two {side.role}s on node {node}: kernels '{owner.name}' and "
            f"'{kernel.name}'; a DFB has one producer and one consumer kernel per node (use one "
            "DFB per consumer)"
        )


def check_release_order(
    block: Described, position: int | None, oldest: Described | None, push: bool
) -> None:
    """``block.push()`` / ``pop()``: ``position`` is the block's place in the FIFO of held
    blocks of its DFB and side (None: it is not held there -- released already, or the
    wrong release for its side, which the block state machine reports)."""
    if position:
        verb = "pushed" if push else "popped"
        assert oldest is not None
        raise RELEASE_ORDER.violation(
            f"{block.describe()} is {verb} before {oldest.describe()}: blocks of a DFB are "
            f"{verb} in the order they were acquired"
        )


def check_legacy_release(dfb: DFBFacts, push: bool, held: int) -> None:
    """The legacy buffer-level ``dfb.push()`` / ``dfb.pop()`` release the oldest held block."""
    if not held:
        verb, what = ("push", "reserved") if push else ("pop", "waited")
        raise RELEASE_NOTHING.violation(f"{dfb.name}.{verb}(): there is no {what} block to {verb}")


READ = "reading a block in a block expression"
STORE = "store()"


def expression(name: str) -> str:
    """The construct name of registry op ``name`` in an expression (compute-only)."""
    return f"block expression '{name}'"


def check_compute_only(what: str, kernel: str, compute: bool) -> None:
    """Block math (reading a block, an expression, ``store()``) runs on compute kernels."""
    if not compute:
        raise COMPUTE_ONLY.violation(
            f"{what} runs on compute kernels; '{kernel}' is a data-movement kernel"
        )


def check_store_shape(
    block: Described, value_shape: Sequence[int], block_shape: Sequence[int]
) -> None:
    """``blk.store(expr)``: the expression has exactly the block's shape."""
    if tuple(value_shape) != tuple(block_shape):
        raise STORE_SHAPE.violation(
            f"store: expression of shape {shape_text(value_shape)} does not match "
            f"{block.describe()} of shape {shape_text(block_shape)}; shapes must match exactly"
        )


def check_store_layout(
    block: Described, values: Sequence[int], expected: Sequence[int], tiled: bool
) -> None:
    """The stored values fill the block's layout (tiles, or row-major elements)."""
    if tuple(values) != tuple(expected):
        layout = "tiles" if tiled else "row-major elements"
        raise STORE_LAYOUT.violation(
            f"store: the expression's values ({'x'.join(map(str, values))}) do not "
            f"fit {block.describe()}, which holds {'x'.join(map(str, expected))} {layout}; "
            "tiled and row-major blocks do not mix"
        )


def _layout_text(tiled: bool, shape: Sequence[int]) -> str:
    unit = "tiles" if tiled else "elements"
    return f"a {'tiled' if tiled else 'row-major'} block of {shape_text(shape)} {unit}"


def check_block_layouts(op: str, operands: Sequence[tuple[int, bool, Sequence[int]]]) -> None:
    """The block operands of op ``op`` -- (position, tiled, shape) each -- share one layout
    (a tiled block's shape counts tiles, a row-major one's elements); a mix names both."""
    if not operands:
        return
    j, tiled, shape = operands[0]
    for i, other, other_shape in operands[1:]:
        if other != tiled:
            raise BLOCK_LAYOUTS.violation(
                f"{op}: operand {j + 1} is {_layout_text(tiled, shape)} and operand {i + 1} is "
                f"{_layout_text(other, other_shape)}; tiled and row-major blocks do not mix",
                hint="make both dataflow buffers from tensors of one layout "
                "(ttnn.to_layout(t, ttnn.TILE_LAYOUT) on the host)",
            )


def operand_violation(kind: str, stored: bool = False) -> TilewrightError:
    """An operand (``stored``: the value of a ``store``) that is not a block, a block
    expression or (for an operand) a number; ``kind`` names its Python type."""
    if stored:
        return BLOCK_OPERAND.violation(f"expected a block or block expression, got {kind}")
    return BLOCK_OPERAND.violation(
        f"block expression operand must be a block or a number, got {kind}"
    )


def op_violation(exc: OpError) -> KernelError:
    """A block op the registry rejects (``OpError``: its signature or shape rule), as the
    kernel error both engines raise; the registry's rule id (``op-shape``, ``op-param``,
    ...) and its hint are kept."""
    message = f"{exc.message} ({exc.hint})" if exc.hint else exc.message
    return KernelError(message, rule=exc.rule or BLOCK_OP.id)


def check_op(spec, shapes: Sequence[Sequence[int]], extra: Sequence[object], params: dict):
    """Bind a registry op's parameters and apply its shape rule (the registry's own
    ``bind_params`` / ``result_shape``): ``(bound parameters, result shape)``, or the
    op's violation."""
    try:
        bound = bind_params(spec, extra, params)
        return bound, tuple(result_shape(spec, *shapes, **bound))
    except OpError as exc:
        raise op_violation(exc) from None
