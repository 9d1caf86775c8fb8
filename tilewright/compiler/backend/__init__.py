"""The compiler back end: logical kernels -> kernel IR -> tt-metal C++ -> native execution.

Modules (see docs/compiler.md); the kernel IR itself is ``tilewright.kir``:

* ``lower/`` -- lowering kernel functions (explicit or split) from the Python AST;
* ``passes/`` -- the IR -> IR passes, run from one list (DST chunking, CB protocol
  expansion, constant folding, dead-code elimination);
* ``emit`` -- C++ per kernel with ``#line`` directives to the user's Python lines;
* ``build`` -- native kernels cached by the IR's content hash;
* ``compile`` -- one operation call: lower, verify, rewire the program to native kernels;
* ``engine`` -- ``--engine auto|python|native``, the not-compilable notice, and
  ``run_engine`` (compile one call unless it runs interpreted) with its observers;
* ``host`` -- the host description (JSON and a ttnn ``generic_op`` program) of ``tilewright emit``.
"""
