"""The kernel IR: plain frozen data at the tt-metal kernel-API level, and its interpreter.

Modules (see docs/compiler.md):

* ``ir`` -- the data (types, expressions, ops, kernels, functions);
* ``optable`` -- one row per op code, read by every pass;
* ``printer`` / ``verify`` / ``effects`` / ``builder`` -- its text form, its verifier, the
  DFB effects computed from it, a small construction helper;
* ``interp`` / ``interp_ops`` / ``interp_scalar`` -- the Python engine of IR kernels (raw
  IR functions): every op code run through the Python kernel API with the emitted C++'s
  scalar semantics.

The package sits below ``lang`` and ``compiler``: it knows the device's kernel API and
nothing of the language.
"""
