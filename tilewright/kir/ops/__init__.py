"""The op rows of the kernel IR, by family: each op code defined once, every rule beside it.

* :mod:`.control` -- ``set``, structured control flow (``for``, ``while``, ``if``,
  ``break``, ``continue``), the run-time checks ``fail`` / ``failf``, ``comment``;
* :mod:`.cb` -- the circular-buffer protocol (``cb.*``);
* :mod:`.noc` -- NoC transfers through accessors and addresses, semaphores (``noc.*``,
  ``sem.*``);
* :mod:`.compute` -- the DST handshake, unpack / math / SFPU, pack, and the tile-op name
  tables (``SFPU``, ``BINARY``, ``SFPU_BINARY``) their rows read;
* :mod:`.calls` -- calls of external C++ (``extern.call``) and of the kernel's static inline
  functions (``raw.call``);
* :mod:`.trace` -- trace events of compiled code (``trace.clock``, ``trace.span``);
* :mod:`.debug` -- TT-Lang's ``print`` as a DPRINT statement (``debug.print``).

Each module's ``ROWS`` lists its :class:`~tilewright.kir.opdef.OpDef` rows;
:data:`tilewright.kir.optable.OPS` is all of them.
"""
