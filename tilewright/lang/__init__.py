"""The TT-Lang runtime: what a running kernel and an operation body touch.

Below the compiler in the layer order (``lang`` never imports ``compiler``); the
compiler's ``Operation`` and program builder call into it.  Modules by concern:

* setup of one node: ``node`` (``NodeSetup``, what the body declares), ``declare``
  (DFB factories, ``@ttl.compute`` / ``@ttl.datamovement``, ``ttl.node`` /
  ``ttl.grid_size``), ``selectors`` (``KernelKind``, ``Kernel`` handles and the one
  ``LogicalKernel`` representation);
* one call: ``launch`` (per-node setup evaluation, the kernel entry the engine runs,
  the launch) and ``state`` (the running launch and its tracer);
* the rules of the language: ``rules`` (each a check function with an id and its spec
  section, run by the interpreter and, at compile time, by the compiler's lowering);
* kernel time: ``dfb`` / ``dfb_share`` (DFBs and blocks), ``blockstate`` (the block
  state machine), ``expr`` / ``math`` / ``block`` (block expressions and the math
  library), ``copy``, ``pipes``, ``semaphore``, ``resets``, ``misc`` (signposts,
  ``static_range``, raw element access), ``debug_print``, ``unsupported``;
* ``extern``: the kernel-time half of external C++ calls (surface, plan, run time,
  glue, contract checking).
"""
