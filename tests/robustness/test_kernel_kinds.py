"""Generator and ``async`` kernels never run their body: the engine says so at the def line.

(TT-Lang's ``@ttl.compute`` / ``@ttl.datamovement`` wrap the kernel; rejecting generator
and async kernels at decoration belongs to the compiler and is left for a later round.)
"""

from __future__ import annotations

import inspect
from types import SimpleNamespace

import pytest

from tilewright.device.coords import CoreCoord
from tilewright.device.engine import Engine, KernelRun
from tilewright.errors import KernelError


def gen_kernel():
    yield


async def async_kernel():
    return None


async def async_gen_kernel():
    yield


@pytest.mark.parametrize(
    ("fn", "kind"),
    [
        (gen_kernel, "a generator function"),
        (async_kernel, "an async function"),
        (async_gen_kernel, "an async generator function"),
    ],
)
def test_deferred_kernels_are_reported_at_their_definition(fn, kind, recwarn):
    core = SimpleNamespace(logical=CoreCoord(0, 0))
    with pytest.raises(KernelError, match=f"kernel k is {kind}: .* its body never runs") as e:
        Engine().run([KernelRun(core, "k", "trisc", fn)])
    assert e.value.loc is not None
    assert (e.value.loc.file, e.value.loc.line) == (__file__, inspect.getsourcelines(fn)[1])
    assert not [w for w in recwarn if "never awaited" in str(w.message)]
