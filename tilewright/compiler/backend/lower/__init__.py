"""Lowering: logical kernels (explicit or split from a unified body) -> kernel IR.

:func:`.entry.lower_kernel` lowers one kernel function of an operation call, looking at
every node's evaluation of the body at once (:mod:`.values`), runs the IR through the
passes (``compiler/backend/passes``: DST chunking, CB protocol expansion, folding, dead
code) and returns its IR (verified) and the runtime-argument values of each node.
:mod:`.kernel` walks the statements (``Lowering``), :mod:`.exprs` / :mod:`.calls` /
:mod:`.methods` the expressions and calls, :mod:`.protocol` / :mod:`.dataflow` /
:mod:`.pipes` the DFB, copy and pipe protocol (checking the TT-Lang rules through
:mod:`.violations`), :mod:`.compute` the block math, :mod:`.scalars` the scalar
expressions, :mod:`.resources` the kernel prologue.
"""
