"""The virtual device: the tt-metal analogue.

Chips and Tensix cores with L1 and DRAM as real bytes at real addresses, the
allocator and buffers, tile formats, circular buffers, the NoC, semaphores, the
host program API (``Program`` / ``CommandQueue``) and the engine that runs every
kernel of every core as a greenlet.  See ``docs/device.md``.
"""
