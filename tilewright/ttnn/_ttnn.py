"""``ttnn._ttnn``: the name of ttnn's compiled extension module, for code that reaches into it.

ttnn's C++ bindings live in ``ttnn._ttnn`` and its submodules; programs and compilers that
call them by that path (tt-lang's compiler calls ``ttnn._ttnn.reports.get_device_info``)
find Tilewright's implementations under the same names.
"""

from tilewright.ttnn import reports

__all__ = ["reports"]
