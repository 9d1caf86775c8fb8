"""Raw escape hatch (``ttl.raw``, TLE-Raw for TT-Lang): code below the language.

* :mod:`.types` -- the typed parameter markers (``i32`` ... ``DFB``) both flavours share;
* :mod:`.cpp` -- the C++ flavour, ``ttl.raw.cpp(...)``, built on ``call_extern_func``
  (its call sites: :mod:`.cpp_calls`; its effects: :mod:`.cpp_effects`).
"""
