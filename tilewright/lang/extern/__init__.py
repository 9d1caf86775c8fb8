"""The kernel-time half of external C++ calls (reference section C).

* :mod:`.surface` -- the language objects a program writes (``ttl.call_extern_func``,
  ``ttl.dfb_descriptor``, ``ttl.DFBEffect``, ...);
* :mod:`.plan` -- the validated plan of an operation's calls, produced by the
  compiler's front end (``tilewright.compiler.extern``) and read here at run time;
* :mod:`.runtime` -- binding a call on a kernel, building and calling it;
  :mod:`.glue` -- the C++ generated around a call; :mod:`.contract` -- checking the
  DFB actions the C++ performs.
"""
