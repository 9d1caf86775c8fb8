"""``ttl.utils``: host-side helpers TT-Lang programs and test suites import.

* :mod:`.block_allocation` -- splitting work over a grid of nodes
  (``split_work_to_nodes``, ``get_number_of_nodes_from_ranges``) and choosing matmul
  block and sub-block sizes (``get_large_matmul_params``);
* :mod:`.correctness` -- comparing results with a golden: ``assert_with_ulp``,
  ``assert_allclose``, ``assert_pcc`` / ``comp_pcc``.

They run on the host (never inside a kernel) and hold no language semantics;
written for Tilewright from the behaviour tt-lang's and tt-metal's tests pin down.
"""

from tilewright.ttl.utils import block_allocation, correctness

__all__ = ["block_allocation", "correctness"]
