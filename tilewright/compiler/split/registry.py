"""The placement registry: which logical kernel a TT-Lang call pins (reference B.3).

The splitter classifies every statement by the TT-Lang calls inside it.  This
module is the table it reads: ``TTL_CALLS`` maps ``ttl.<name>(...)`` to a
``Placement``, ``TTL_NAMESPACES`` maps ``ttl.<ns>.<name>(...)``, and the method
tables cover DFB, block, PipeNet and semaphore receivers.  A ``ttl.<name>`` that
is not in the table is an error ("register its logical kernel classification"),
so a new language function cannot silently land on the wrong kernel; a test keeps
the table in step with ``tilewright.ttl``'s exports.

Both spellings of raw element access are registered (reference G.8): the public
``raw_element_read`` / ``raw_element_write`` and the splitter's historical
``element_read`` / ``element_write``.
"""

from __future__ import annotations

from enum import Enum

__all__ = [
    "BLOCK_METHODS",
    "DFB_ACQUIRE_METHODS",
    "DFB_FACTORIES",
    "DFB_METHODS",
    "EXTERN_CALL",
    "RAW_CALL",
    "is_extern_name",
    "EXTERN_SITE_KEYWORD",
    "FACTORY_ONLY",
    "PIPENET_CALLBACK_METHODS",
    "RESET_CALLS",
    "SEMAPHORE_METHODS",
    "SEMAPHORE_VIEW_METHODS",
    "SETUP_FACTORIES",
    "TTL_CALLS",
    "TTL_NAMESPACES",
    "Placement",
]


class Placement(Enum):
    """How a call constrains the kernel a statement runs on."""

    DATA_MOVEMENT = "data_movement"  # the current callback's data-movement kernel
    COMPUTE = "compute"  # the canonical compute kernel
    CONTROL = "control"  # not anchored: replicated where needed (scalars, queries)
    SETUP = "setup"  # a resource declaration: top-level `name = factory(...)` only
    SYNC = "sync"  # reset / reconfiguration: the declaration's participants
    EXTERN = "extern"  # call_extern_func: its kernel= selection or the callback's kernel
    FACTORY = "factory"  # created by an enclosing factory, never in an operation body


EXTERN_CALL = "call_extern_func"
RAW_CALL = ("raw", "call")  # ttl.raw.call: a raw IR function, placed like an external call
EXTERN_SITE_KEYWORD = "_site"  # composition names a copied call's validated site (B.8)

#: ``ttl.<name>(...)`` -> placement (reference B.3 table).
TTL_CALLS: dict[str, Placement] = {
    # Data movement: copies, scalar element access, DFB publication.
    "copy": Placement.DATA_MOVEMENT,
    "copy_tensor_page": Placement.DATA_MOVEMENT,
    "raw_element_read": Placement.DATA_MOVEMENT,
    "raw_element_write": Placement.DATA_MOVEMENT,
    "element_read": Placement.DATA_MOVEMENT,
    "element_write": Placement.DATA_MOVEMENT,
    "read_index": Placement.DATA_MOVEMENT,
    "wait_any": Placement.DATA_MOVEMENT,
    "GroupTransfer": Placement.DATA_MOVEMENT,
    # Compute: block math at the top level of ttl.
    "fill": Placement.COMPUTE,
    "matmul": Placement.COMPUTE,
    "reduce_sum": Placement.COMPUTE,
    "reduce_max": Placement.COMPUTE,
    "broadcast": Placement.COMPUTE,
    "transpose": Placement.COMPUTE,
    "typecast": Placement.COMPUTE,
    "exp": Placement.COMPUTE,
    "log": Placement.COMPUTE,
    "sqrt": Placement.COMPUTE,
    "rsqrt": Placement.COMPUTE,
    "recip": Placement.COMPUTE,
    "relu": Placement.COMPUTE,
    "sigmoid": Placement.COMPUTE,
    "tanh": Placement.COMPUTE,
    "gelu": Placement.COMPUTE,
    "abs": Placement.COMPUTE,
    "neg": Placement.COMPUTE,
    "sign": Placement.COMPUTE,
    "sin": Placement.COMPUTE,
    "cos": Placement.COMPUTE,
    "max": Placement.COMPUTE,
    "min": Placement.COMPUTE,
    "add": Placement.COMPUTE,
    "sub": Placement.COMPUTE,
    "mul": Placement.COMPUTE,
    "div": Placement.COMPUTE,
    # Control: compile-time or scalar producers, queries, types (not anchored).
    "node": Placement.CONTROL,
    "core": Placement.CONTROL,
    "grid_size": Placement.CONTROL,
    "dims": Placement.CONTROL,
    "cores": Placement.CONTROL,
    # The spec's type aliases (lang/types.py): annotations; called, an int conversion.
    **dict.fromkeys(
        ("PositiveInt", "NaturalInt", "Size", "Shape", "Index", "Count", "NodeCoord", "NodeRange"),
        Placement.CONTROL,
    ),
    "tile_index": Placement.CONTROL,
    "signpost": Placement.CONTROL,
    "static_range": Placement.CONTROL,
    "dfb_descriptor": Placement.CONTROL,
    "get_dfb_id": Placement.CONTROL,
    "raw_addr": Placement.CONTROL,
    "uint32": Placement.CONTROL,
    "KernelKind": Placement.CONTROL,
    "ScalarType": Placement.CONTROL,
    "DataflowBuffer": Placement.CONTROL,
    "TensorBlock": Placement.CONTROL,
    "Block": Placement.CONTROL,
    "BlockExpr": Placement.CONTROL,
    "CopyTransferHandler": Placement.CONTROL,
    "Transfer": Placement.CONTROL,
    "ReceiveRequest": Placement.CONTROL,
    "ReadyReceive": Placement.CONTROL,
    "SrcPipeIdentity": Placement.CONTROL,
    "DstPipeIdentity": Placement.CONTROL,
    "UnicastRemoteSemaphore": Placement.CONTROL,
    "MulticastRemoteSemaphore": Placement.CONTROL,
    "DFB": Placement.CONTROL,
    "Operation": Placement.CONTROL,
    "Program": Placement.CONTROL,
    "CompilerOptions": Placement.CONTROL,
    "DFBEffect": Placement.CONTROL,
    "DFBAccess": Placement.CONTROL,
    # Resource declarations: lifted out of the body (reference B.2).
    "make_dfb": Placement.SETUP,
    "make_dataflow_buffer_like": Placement.SETUP,
    "make_circular_buffer_like": Placement.SETUP,
    "CircularBuffer": Placement.SETUP,
    "make_tensor_backed_dfb": Placement.SETUP,
    "make_dfb_allocation_group": Placement.SETUP,
    "Pipe": Placement.SETUP,
    "PipeNet": Placement.SETUP,
    "Semaphore": Placement.SETUP,
    "Kernel": Placement.SETUP,
    # Synchronisation boundaries: replicated to the declaration's participants (A.8).
    "reset_dfbs": Placement.SYNC,
    "reset_all_dfbs": Placement.SYNC,
    "reconfigure_dfbs": Placement.SYNC,
    # External C++ calls: kernel= selection (B.6, C.2).
    EXTERN_CALL: Placement.EXTERN,
    # Created by an enclosing factory and captured (reference A.2).
    "DFBReset": Placement.FACTORY,
    "DFBReconfiguration": Placement.FACTORY,
    "DFBAllocationGroup": Placement.FACTORY,
    "DispatchCondition": Placement.FACTORY,
    # Runtime resources: built by the operation's runtime_resource_factory (C.11).
    "ProgramRuntimeResources": Placement.FACTORY,
    "KernelRuntimeResources": Placement.FACTORY,
    "CoreRuntimeArgs": Placement.FACTORY,
    "KernelDefine": Placement.FACTORY,
    # Decorators: their presence makes the operation multi-kernel (never split).
    "operation": Placement.CONTROL,
    "kernel": Placement.CONTROL,
    "compute": Placement.CONTROL,
    "datamovement": Placement.CONTROL,
}

#: ``ttl.<ns>.<name>(...)`` -> placement for every name of the namespace.
TTL_NAMESPACES: dict[str, Placement] = {
    "math": Placement.COMPUTE,
    "block": Placement.COMPUTE,
    "DFBEffect": Placement.CONTROL,
    "DFBAccess": Placement.CONTROL,
    "KernelKind": Placement.CONTROL,
    "ScalarType": Placement.CONTROL,
    "raw": Placement.CONTROL,  # ttl.raw.call is an external-like call (is_extern_name)
}


def is_extern_name(name: tuple[str, ...] | None) -> bool:
    """Whether ``ttl.<name>(...)`` is placed by its ``kernel=`` selection and contributes a
    validated call site (``call_extern_func``, ``raw.call``)."""
    return name == (EXTERN_CALL,) or name == RAW_CALL


DFB_FACTORIES = frozenset(
    {
        "make_dfb",
        "make_dataflow_buffer_like",
        "make_circular_buffer_like",
        "CircularBuffer",
        "make_tensor_backed_dfb",
    }
)
SETUP_FACTORIES = frozenset(name for name, p in TTL_CALLS.items() if p is Placement.SETUP)
FACTORY_ONLY = frozenset(name for name, p in TTL_CALLS.items() if p is Placement.FACTORY)
RESET_CALLS = frozenset(name for name, p in TTL_CALLS.items() if p is Placement.SYNC)

#: Methods on a DFB name that acquire a block.
DFB_ACQUIRE_METHODS = frozenset({"reserve", "wait"})
#: Other methods on a DFB name: ``publish`` moves no bytes but is a DM-side protocol step;
#: DFB-level ``push`` / ``pop`` are legacy spellings (spec < 0.7) a unified body rejects.
DFB_METHODS: dict[str, Placement | None] = {
    "publish": Placement.DATA_MOVEMENT,
    "push": None,
    "pop": None,
}
#: Methods on a block name: ``store`` computes; releases go to the transaction owner.
BLOCK_METHODS: dict[str, Placement | None] = {"store": Placement.COMPUTE, "push": None, "pop": None}
RELEASE_METHODS = frozenset({"push", "pop"})
#: PipeNet callbacks run on the pipe-source kernel (sends) or the canonical DM kernel.
PIPENET_CALLBACK_METHODS: dict[str, str] = {"if_src": "pipe_source", "if_dst": "data_movement"}
#: Semaphore operations (spec: data-movement kernels) on declared semaphores and their views.
SEMAPHORE_METHODS = frozenset({"wait_eq", "wait_ge", "set", "inc", "value"})
#: ``name = sem.get_remote(...)`` at top level is setup (a per-node view of a declared semaphore).
SEMAPHORE_VIEW_METHODS = frozenset({"get_remote", "get_remote_multicast"})
