"""The device-time model: what every kernel's clock advances by (docs/performance-model.md).

* :mod:`.arch` -- per-architecture numbers (clock, NoC, DRAM, dispatch) and the floorplan;
* :mod:`.costs` -- tile math by op / format / fidelity / DST mode, kernel-API bookkeeping;
* :mod:`.state` -- the C layouts Python and native kernels share (per run, per device);
* :mod:`.noc` -- transfers: routes, hops, link / NIU / DRAM contention, multicast;
* :mod:`.pipeline` -- a compute kernel's unpack / math / pack processors;
* :mod:`.kernel` -- the Python kernel API's NoC calls on the model;
* :mod:`.dispatch` -- per-program dispatch and launch;
* :mod:`.report` -- per-operation device time, bound, tt-metal's op-perf CSV.

Time never changes results: the model only reads the program's actions.
"""
