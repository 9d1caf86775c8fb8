"""The caches of compiled calls are proofs: a changed input is never served a stale result.

The warm-call cache (``compiler/warm.py``) and the lowering cache
(``compiler/backend/compile.py``) both read one call signature
(``compiler/signature.py``).  The randomized test below mutates one input kind between
calls -- argument aliasing, a closure cell, a module global, a class attribute, a module
attribute, a captured tuple, an int, the dtype, the shape, the memory config, the grid,
the engine -- and compares every compiled result with the interpreter's on the same
inputs, for an operation that is warm-callable (both caches) and for one that is not (the
lowering cache alone).  Unchanged repeats must hit the cache, so the test can fail both
ways.  Before, an aliased call poisoned every later call of the operation and changed
class / module attributes and signed zeros were not seen.
"""

from __future__ import annotations

import math
import random
import struct
import types

import pytest
import torch

from tilewright import ttl, ttnn
from tilewright.compiler import warm as warm_calls
from tilewright.compiler.backend import compile as backend_compile
from tilewright.compiler.signature import value_sig
from tilewright.device import session


class Cfg:
    SCALE = 1.0


consts = types.ModuleType("tw_cache_test_consts")
consts.SCALE = 1.0
G = 1.0
TUP = (1.0,)
ZERO = 0.0
GRID = [(1, 1)]


def make_add():
    """``y = a * (F + G + Cfg.SCALE + consts.SCALE + TUP[0]) + b + K`` over the tiles of
    ``a``, on a grid from ``GRID``.  ``F`` and ``K`` are closure cells (``set_cell``)."""
    f_val = 1.0
    k_val = 0

    def body(a, b, y):
        rows = a.shape[0] // 32
        cols = a.shape[1] // 32
        per = rows * cols // ttl.grid_size(dims=1)
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def reader():
            node = ttl.node(dims=1)
            for i in range(per):
                t = node * per + i
                with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
                    ttl.copy(a[t // cols, t % cols], ab).wait()
                    ttl.copy(b[t // cols, t % cols], bb).wait()

        @ttl.compute()
        def compute():
            for _ in range(per):
                with a_dfb.wait() as x, b_dfb.wait() as z, y_dfb.reserve() as o:
                    o.store(x * (f_val + G + Cfg.SCALE + consts.SCALE + TUP[0]) + z + k_val)

        @ttl.datamovement()
        def writer():
            node = ttl.node(dims=1)
            for i in range(per):
                t = node * per + i
                with y_dfb.wait() as ob:
                    ttl.copy(ob, y[t // cols, t % cols]).wait()

    op = ttl.operation(grid=lambda a, b, y: GRID[0])(body)

    def set_cell(name: str, value) -> None:
        nonlocal f_val, k_val
        if name == "F":
            f_val = value
        else:
            k_val = value

    return op, set_cell


class Inputs:
    """What a call is made with (everything the test mutates that is not a captured value)."""

    def __init__(self) -> None:
        self.alias = False
        self.dtype = ttnn.float32
        self.shape = (32, 64)
        self.memory = ttnn.DRAM_MEMORY_CONFIG
        self.engine = "native"


def _tensors(device, inputs: Inputs, seed: int):
    gen = torch.Generator().manual_seed(seed)
    xa = torch.randint(0, 5, inputs.shape, generator=gen).float()
    xb = torch.randint(0, 5, inputs.shape, generator=gen).float()
    kw = dict(dtype=inputs.dtype, layout=ttnn.TILE_LAYOUT, device=device)
    a = ttnn.from_torch(xa, memory_config=inputs.memory, **kw)
    b = a if inputs.alias else ttnn.from_torch(xb, memory_config=inputs.memory, **kw)
    y = ttnn.from_torch(torch.zeros(inputs.shape), memory_config=inputs.memory, **kw)
    return a, b, y


def _call(op, device, inputs: Inputs, engine: str, seed: int) -> torch.Tensor:
    saved = session.OPTIONS.engine
    session.OPTIONS.engine = engine
    try:
        a, b, y = _tensors(device, inputs, seed)
        op(a, b, y)
        return ttnn.to_torch(y).float()
    finally:
        session.OPTIONS.engine = saved


MUTATIONS = (
    "repeat",
    "alias",
    "cell float",
    "cell int",
    "module global",
    "class attribute",
    "module attribute",
    "tuple",
    "dtype",
    "shape",
    "memory config",
    "grid",
    "engine",
)


def _mutate(kind: str, rng: random.Random, inputs: Inputs, set_cell) -> None:
    global G, TUP
    scale = rng.choice([0.5, 1.0, 2.0, -1.0, 3.0])
    if kind == "alias":
        inputs.alias = not inputs.alias
    elif kind == "cell float":
        set_cell("F", scale)
    elif kind == "cell int":
        set_cell("K", rng.choice([0, 1, 2, -3]))
    elif kind == "module global":
        G = scale
    elif kind == "class attribute":
        Cfg.SCALE = scale
    elif kind == "module attribute":
        consts.SCALE = scale
    elif kind == "tuple":
        TUP = (scale,)
    elif kind == "dtype":
        inputs.dtype = ttnn.bfloat16 if inputs.dtype == ttnn.float32 else ttnn.float32
    elif kind == "shape":
        inputs.shape = rng.choice([(32, 32), (32, 64), (64, 64)])
    elif kind == "memory config":
        inputs.memory = (
            ttnn.L1_MEMORY_CONFIG
            if inputs.memory == ttnn.DRAM_MEMORY_CONFIG
            else ttnn.DRAM_MEMORY_CONFIG
        )
    elif kind == "grid":
        GRID[0] = (1, 1) if GRID[0] == (2, 1) else (2, 1)
    elif kind == "engine":
        inputs.engine = "auto" if inputs.engine == "native" else "native"


@pytest.fixture
def restore():
    global G, TUP
    saved = (G, TUP, Cfg.SCALE, consts.SCALE, GRID[0])
    yield
    G, TUP, Cfg.SCALE, consts.SCALE, GRID[0] = saved


@pytest.mark.parametrize("warm", [True, False], ids=["warm+lowering", "lowering"])
@pytest.mark.parametrize("seed", [1, 2])
def test_randomized_mutations_match_the_interpreter(warm, seed, restore, monkeypatch):
    lowered = []
    original = backend_compile._compile
    monkeypatch.setattr(
        backend_compile, "_compile", lambda *a, **k: lowered.append(1) or original(*a, **k)
    )
    if not warm:  # the lowering cache alone (as for a body that is not declarative)
        monkeypatch.setattr(warm_calls, "key_of", lambda *a, **k: None)
    rng = random.Random(seed)
    device = ttnn.open_device(device_id=0)
    try:
        op, set_cell = make_add()
        inputs = Inputs()
        hits = repeats = 0
        compiled = None
        for step in range(14):
            kind = "repeat" if step % 4 == 1 else rng.choice(MUTATIONS[1:])
            _mutate(kind, rng, inputs, set_cell)
            before = len(lowered)
            got = _call(op, device, inputs, inputs.engine, seed * 100 + step)
            # nothing changed: a cache must serve it (with L1 tensors, where the next ones
            # are placed changes where the compiler's circular buffers may go: a new key)
            if kind == "repeat" and inputs.memory == ttnn.DRAM_MEMORY_CONFIG:
                repeats += 1
                hits += len(lowered) == before
                if warm:
                    assert op.last_program is compiled, "an unchanged call missed the warm cache"
            compiled = op.last_program
            expected = _call(op, device, inputs, "python", seed * 100 + step)
            assert torch.equal(got, expected), f"step {step}: after changing the {kind}"
        assert repeats >= 2, "too few unchanged calls: the test would not see a stale hit"
        assert hits == repeats, "unchanged calls were lowered again"
    finally:
        ttnn.close_device(device)


def test_aliased_arguments_do_not_poison_later_calls(restore):
    """``add(a, a, y)`` then ``add(a, b, y)``: the second computes ``a * s + b``."""
    device = ttnn.open_device(device_id=0)
    try:
        for _ in range(2):
            op, _ = make_add()
            inputs = Inputs()
            for alias in (True, False, True, False):
                inputs.alias = alias
                got = _call(op, device, inputs, "native", 7)
                assert torch.equal(got, _call(op, device, inputs, "python", 7)), alias
    finally:
        ttnn.close_device(device)


def make_recip():
    """``y = 1 / (a * ZERO)``: the sign of a captured zero is the sign of the infinity."""

    @ttl.operation(grid=(1, 1))
    def op(a, b, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def reader():
            with a_dfb.reserve() as ab:
                ttl.copy(a[0, 0], ab).wait()

        @ttl.compute()
        def compute():
            with a_dfb.wait() as x, y_dfb.reserve() as o:
                o.store(ttl.math.recip(x * ZERO))

        @ttl.datamovement()
        def writer():
            with y_dfb.wait() as ob:
                ttl.copy(ob, y[0, 0]).wait()

    return op


@pytest.mark.parametrize("engine", ["native", "auto", "python"])
def test_a_captured_signed_zero_is_its_own_key(engine, monkeypatch):
    device = ttnn.open_device(device_id=0)
    try:
        op = make_recip()
        inputs = Inputs()
        inputs.shape = (32, 32)
        signs = []
        for zero in (0.0, -0.0, 0.0):
            monkeypatch.setitem(globals(), "ZERO", zero)
            got = _call(op, device, inputs, engine, 3)
            signs.append(math.copysign(1.0, float(got[0, 0])))
        assert signs == [1.0, -1.0, 1.0]
    finally:
        ttnn.close_device(device)


def test_value_signatures_tell_bit_patterns_and_types_apart():
    nan_a = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000001))[0]
    nan_b = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000002))[0]
    assert value_sig(0.0) != value_sig(-0.0)
    assert value_sig(nan_a) != value_sig(nan_b)
    assert value_sig(nan_a) == value_sig(struct.unpack("<d", struct.pack("<d", nan_a))[0])
    assert value_sig(1) != value_sig(1.0) != value_sig(True)
    assert value_sig((1, [2.0])) != value_sig((1, [-2.0]))
    assert value_sig({"blocks": 2}) != value_sig({"blocks": 3})


@pytest.mark.parametrize("engine", ["native", "auto", "python"])
@pytest.mark.parametrize("what", ["class attribute", "module attribute"])
def test_a_changed_class_or_module_attribute_is_seen(engine, what, restore):
    """A kernel reading ``Cfg.SCALE`` / ``consts.SCALE``: the second call sees the new value."""
    device = ttnn.open_device(device_id=0)
    try:
        op, _ = make_add()
        inputs = Inputs()
        first = _call(op, device, inputs, engine, 5)
        if what == "class attribute":
            Cfg.SCALE = 4.0
        else:
            consts.SCALE = 4.0
        second = _call(op, device, inputs, engine, 5)
        a, b = _tensors(device, inputs, 5)[:2]
        expected = ttnn.to_torch(a).float() * 8.0 + ttnn.to_torch(b).float()
        assert torch.equal(second, expected) and not torch.equal(first, second)
    finally:
        ttnn.close_device(device)
