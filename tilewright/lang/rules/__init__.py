"""The rules of TT-Lang, each written once (spec: reference/ttlang-language.md).

Every rule is a :class:`~.registry.Rule` (a stable id, its error type, the spec section)
and a check function that raises the rule's error with its message.  The interpreter
calls the check as the program runs; the compiler's lowering calls the same function on
what it knows at compile time and turns a violation into a ``fail`` op raising the same
error at the same line when the compiled kernel reaches it -- or, for a check that needs
run-time numbers, emits the check with the message the same function formats
(``%lld`` in place of the numbers).  One message, one rule id, one place.

* ``registry`` -- the ``Rule`` record and the table of every rule (``RULES``);
* ``dfb`` -- the DFB protocol and the use of blocks (spec D.1, D.2, A.4, A.5);
* ``copy`` -- copies and transfer handles (spec A.6, D.5);
* ``sync`` -- semaphores and pipes (spec D.3, D.4).

The block state machine itself is ``lang.blockstate`` (rule ``block-state``).
"""
