"""The kernel IR: plain frozen data at the tt-metal kernel-API level, and its interpreter.

Modules (see docs/compiler.md):

* ``ir`` -- the data (types, expressions, ops, kernels, functions);
* ``optable`` -- one row per op code (``opdef.OpDef``: operands, kinds, regions, effect,
  and the interpreter, C++, verifier, effects and printer rules side by side), defined by
  family in ``ops/`` (``control``, ``cb``, ``noc``, ``compute``, ``calls``);
* ``scalar`` -- the one scalar table: types and conversions, operators (text, C++,
  evaluator, typing), intrinsics; constant folding calls its evaluator;
* ``printer`` / ``verify`` / ``effects`` / ``builder`` -- its text form, its verifier, the
  DFB effects computed from it, a small construction helper;
* ``interp`` / ``interp_scalar`` -- the Python engine of IR kernels (raw IR functions):
  every op's interpreter rule, through the Python kernel API, with the emitted C++'s
  scalar semantics.

The package sits below ``lang`` and ``compiler``: it knows the device's kernel API and
nothing of the language.  The C++ writer that drives the rows' C++ rules is
``compiler/backend/emit.py``.
"""
