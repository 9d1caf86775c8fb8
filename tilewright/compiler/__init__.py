"""The TT-Lang compiler model: operation → device ``Program``.

Decoration (``operation``) reads the operation's AST once (``source``), checks the
interface (``interface``), validates external calls (``extern``), binds kernel
handles and, for unified bodies, composes (``compose``) and splits them into logical
kernels (``split``).  Each pass reads a frozen ``record.OperationRecord``, never the
``Operation`` orchestrator, and resolves names statically through one resolver
(``scope``).  A call assigns kernel slots against the target's capacity
(``capacity``), places DFBs (``dfb_alloc``, ``dfb_reuse``, ``dfb_coloring``) and
builds the device program (``program_builder``).  What kernels touch at run time --
per-node setup, DFBs, blocks, copies, pipes, semaphores, the launch -- is
``tilewright.lang``, below this package.
"""
