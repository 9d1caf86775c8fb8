"""What compiled TT-Lang kernels call at run time, on top of the device layer.

The compiler turns an operation into a device ``Program`` whose kernels are the
user's kernel functions; the language objects they touch at run time live here:
dataflow buffers and blocks (``dfb``) with their state machine (``blockstate``),
block expressions (``expr``), copies (``copy``), pipes (``pipes``), semaphores
(``semaphore``), and the per-launch state (``state``).
"""
