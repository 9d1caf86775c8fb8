"""Collective communication on mesh tensors (ttnn's CCL): programs on the virtual fabric.

``ops`` (all_gather, reduce_scatter, all_reduce), ``gather`` and ``reduce`` (their
per-chip programs and kernels), ``plan`` (groups, topology, pages, L1), ``pages`` (what
the kernels do to memory).
"""

from tilewright.ttnn.ccl.ops import all_gather, all_reduce, reduce_scatter

__all__ = ["all_gather", "reduce_scatter", "all_reduce"]
