"""The IR -> IR passes of the back end, run from one list after lowering (``pipeline``).

Lowering (``compiler/backend/lower``) turns a kernel function's AST into kernel IR that
still holds two language-level ops: ``tile.store`` (a block expression stored into a
block: one output tile's math, not yet chunked to DST) and ``dfb.reserve`` / ``wait`` /
``push`` / ``pop`` (the DFB protocol in blocks).  The passes lower those and clean up:

* ``dst`` -- DST chunking: each ``tile.store`` becomes the tile-register handshake over
  chunks of output tiles that fit in DST (``dst.py``);
* ``cb`` -- CB protocol expansion: the DFB ops in blocks become tt-metal's circular-buffer
  calls in cumulative pages, and a data-movement block's address (``cbproto.py``);
* ``fold`` -- constant folding with the IR interpreter's scalar semantics (``fold.py``);
* ``dce`` -- dead-code elimination: what follows a ``fail`` or a jump, branches whose
  condition is a constant, empty branches (``dce.py``).

Each pass is a function ``Kernel -> Kernel`` with one job; ``tilewright explain --ir
--after PASS`` prints the IR a pass leaves (``pipeline.run(kernel, upto=PASS)``).
"""
