"""ttnn-compatible tensor front end on the virtual device.

``import ttnn`` under ``tilewright run`` (or ``from tilewright import ttnn``) gives
the ttnn surface that TT-Lang programs use: devices, tensors, data types, layouts,
memory configurations, core types, conversion to and from torch, creation
functions and a registry of operations with golden functions.
"""

from tilewright.device.buffer import ShardSpecBuffer  # noqa: F401
from tilewright.device.fabric import FabricConfig, Topology  # noqa: F401
from tilewright.device.mesh import (  # noqa: F401
    MeshCoordinate,
    MeshCoordinateRange,
    MeshDevice,
    MeshShape,
    MeshWorkload,
)
from tilewright.ttnn import _ttnn, reports  # noqa: E402,F401  (ttnn._ttnn.reports)
from tilewright.ttnn.ccl import all_gather, all_reduce, reduce_scatter  # noqa: F401
from tilewright.ttnn.convert import (  # noqa: F401
    deallocate,
    from_device,
    to_layout,
    to_memory_config,
    to_numpy,
    typecast,
)
from tilewright.ttnn.creation import (  # noqa: F401
    empty,
    empty_like,
    full,
    full_like,
    ones,
    ones_like,
    rand,
    rand_like,
    randn,
    zeros,
    zeros_like,
)
from tilewright.ttnn.device import (  # noqa: F401
    DEFAULT_L1_SMALL_SIZE,
    GetNumAvailableDevices,
    close_device,
    get_num_devices,
    manage_device,
    open_device,
    synchronize_device,
)
from tilewright.ttnn.distributed import *  # noqa: F401,F403
from tilewright.ttnn.distributed import __all__ as _distributed_all
from tilewright.ttnn.distributed import from_numpy, from_torch, to_device, to_torch  # noqa: F401
from tilewright.ttnn.generic_op import (  # noqa: F401
    CBDescriptor,
    CBFormatDescriptor,
    ComputeConfigDescriptor,
    DataMovementConfigDescriptor,
    KernelDescriptor,
    MathFidelity,
    MeshProgramDescriptor,
    ProgramDescriptor,
    ReaderConfigDescriptor,
    RuntimeArgs,
    SemaphoreDescriptor,
    TensorAccessorArgs,
    UnpackToDestMode,
    WriterConfigDescriptor,
    cb_descriptor_from_sharded_tensor,
    generic_op,
)
from tilewright.ttnn.memory import (  # noqa: F401
    create_sharded_memory_config,
    get_memory_config,
    is_sharded,
    num_cores_to_corerangeset,
    split_work_to_cores,
)
from tilewright.ttnn.mesh_device import (  # noqa: F401
    FabricReliabilityMode,
    GetNumPCIeDevices,
    close_mesh_device,
    create_mesh_device,
    get_device_ids,
    get_fabric_config,
    get_num_pcie_devices,
    get_pcie_device_ids,
    open_mesh_device,
    set_fabric_config,
)
from tilewright.ttnn.operations import *  # noqa: F401,F403
from tilewright.ttnn.operations import __all__ as _ops_all
from tilewright.ttnn.program_config import (  # noqa: F401
    BlackholeComputeKernelConfig,
    GrayskullComputeKernelConfig,
    MatmulMultiCoreReuseMultiCast1DProgramConfig,
    MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig,
    MatmulMultiCoreReuseMultiCastProgramConfig,
    MatmulMultiCoreReuseProgramConfig,
    WormholeComputeKernelConfig,
    init_device_compute_kernel_config,
)
from tilewright.ttnn.tensor import Tensor, TensorSlice  # noqa: F401
from tilewright.ttnn.types import *  # noqa: F401,F403
from tilewright.ttnn.types import __all__ as _types_all

__all__ = [
    "Tensor",
    "TensorSlice",
    "open_device",
    "close_device",
    "manage_device",
    "synchronize_device",
    "from_torch",
    "to_torch",
    "from_numpy",
    "to_numpy",
    "to_device",
    "from_device",
    "to_layout",
    "to_memory_config",
    "typecast",
    "deallocate",
    "rand",
    "randn",
    "zeros",
    "ones",
    "full",
    "empty",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand_like",
    "create_sharded_memory_config",
    "num_cores_to_corerangeset",
    "generic_op",
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
    "MathFidelity",
    "MatmulMultiCoreReuseProgramConfig",
    "MatmulMultiCoreReuseMultiCastProgramConfig",
    "MatmulMultiCoreReuseMultiCast1DProgramConfig",
    "MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig",
    "WormholeComputeKernelConfig",
    "BlackholeComputeKernelConfig",
    "GrayskullComputeKernelConfig",
    "init_device_compute_kernel_config",
    "cb_descriptor_from_sharded_tensor",
    "split_work_to_cores",
    "is_sharded",
    "get_memory_config",
    "GetNumAvailableDevices",
    "get_num_devices",
    "MeshShape",
    "MeshCoordinate",
    "MeshCoordinateRange",
    "MeshDevice",
    "MeshWorkload",
    "FabricConfig",
    "FabricReliabilityMode",
    "Topology",
    "open_mesh_device",
    "close_mesh_device",
    "create_mesh_device",
    "set_fabric_config",
    "get_fabric_config",
    "get_device_ids",
    "GetNumPCIeDevices",
    "get_num_pcie_devices",
    "get_pcie_device_ids",
    "all_gather",
    "reduce_scatter",
    "all_reduce",
    *_distributed_all,
    *_types_all,
    *_ops_all,
]
