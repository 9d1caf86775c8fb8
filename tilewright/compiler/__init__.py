"""The TT-Lang compiler model: operation → device Program.

Decoration reads the operation's AST once (``source``), checks the interface
(``interface``), and for unified bodies splits them into logical kernels
(``split``).  A call evaluates the body per node (``setup``, ``declare``), assigns
kernel slots against the target's capacity (``capacity``, ``selectors``), places
DFBs (``dfb_alloc``) and builds the device program (``program_builder``).  What
compiled kernels call at run time lives in ``compiler.runtime``.
"""
