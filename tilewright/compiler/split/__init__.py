"""Splitting unified operation bodies into logical kernels (reference B.1-B.7, B.11).

``splitter.split_operation(op)`` runs at decoration of a unified ``@ttl.operation``:

1. checks (decorators, captured DFBs, factory-only globals, aliased receivers);
2. composition: standalone calls of unified operations are expanded (``compose``);
3. setup lifting: resource declarations are found and validated (``lift``);
   ``ttl.Kernel`` declarations are evaluated and bound;
4. placement and DFB transaction ownership (``placement``), scalar liveness
   (``liveness``), reset rules (``sync``) and DFB lifecycle facts (``lifecycle``)
   give an immutable ``SplitPlan`` -- all before any AST is changed;
5. code generation (``codegen``) builds the explicit multi-kernel function that the
   per-node setup evaluates like a hand-written one.

It returns ``(plan, body_fn)``; for an expand-only operation ``body_fn`` is the
original function (it is never called directly).  Capacity against the target's
slot table is checked at call time, when the device is known, by
``program_builder`` (the generated kernel decorators carry the location of the
statement that introduced each kernel).
"""
