"""Programs written for tt-lang (its simulator and older releases) run unmodified.

One test per name or behaviour of issue 15 items 2 and 3: the program, and what it must
give (values, or the diagnostic with its line).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.ttl.conftest import line_of
from tilewright import ttl, ttnn
from tilewright.errors import DeadlockError, InterfaceError, KernelError
from tilewright.lang import state

HEADER = "import torch\nfrom tilewright import ttl, ttnn\n"

COPY_OP = """
@ttl.operation(grid=(2, 1))
def scale(a, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        x, _ = ttl.node(dims=2)
        with a_dfb.reserve() as blk:
            ttl.copy(a[0, x], blk).wait()

    @ttl.compute()
    def compute():
        with a_dfb.wait() as v, o_dfb.reserve() as o:
            o.store(v * 2)

    @ttl.datamovement()
    def writer():
        x, _ = ttl.node(dims=2)
        with o_dfb.wait() as blk:
            ttl.copy(blk, out[0, x]).wait()
"""


def tile_dev(t, device, dtype=ttnn.bfloat16):
    return ttnn.from_torch(t, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)


# -- item 2: names real programs use ---------------------------------------------------------


def test_host_grid_size_is_the_last_launched_operations_grid(program, device, monkeypatch):
    ns = program(HEADER + COPY_OP)
    monkeypatch.setattr(state, "LAST_GRID", None)
    with pytest.raises(KernelError) as info:
        ttl.grid_size(dims=2)
    assert "ttl.grid_size() is used outside an @ttl.operation before any operation ran" in str(
        info.value
    )
    ns["scale"](tile_dev(torch.ones(32, 64), device), tile_dev(torch.zeros(32, 64), device))
    assert ttl.grid_size(dims=2) == (2, 1)
    assert ttl.grid_size(dims=1) == 2


def test_node_outside_an_operation_names_the_rule_and_line(program):
    ns = program(HEADER + "def where():\n    return ttl.node(dims=2)  # HOST NODE\n")
    with pytest.raises(KernelError) as info:
        ns["where"]()
    assert info.value.message.startswith("ttl.node() is used outside an @ttl.operation")
    assert info.value.loc.line == line_of(ns, "# HOST NODE")


def test_simulator_names_under_the_runner(tmp_path, capsys):
    from tilewright.cli.runner import run_program

    prog = tmp_path / "names.py"
    prog.write_text(
        "from ttl import ttl\n"
        "import ttl as T\n"
        "import ttl.utils\n"
        "from ttl.utils.block_allocation import split_work_to_nodes\n"
        "assert ttl is T\n"
        "assert ttl.TILE_SHAPE == (32, 32)\n"
        "print('names ok', split_work_to_nodes((2, 2), 5, True)[0])\n"
    )
    assert run_program(str(prog), []) == 0
    assert "names ok 4" in capsys.readouterr().out


def test_circular_buffer_constructor_is_a_dfb_factory(program, device):
    ns = program(
        HEADER
        + """
seen = []

@ttl.operation(grid=(1, 1))
def op(a, out):
    a_cb = ttl.CircularBuffer(a, shape=(1, 1), buffer_factor=2)
    o_cb = ttl.CircularBuffer(out, (1, 1))
    seen.append((isinstance(a_cb, ttl.CircularBuffer), a_cb.name, a_cb.block_count))

    @ttl.datamovement()
    def reader():
        with a_cb.reserve() as blk:
            ttl.copy(a[0, 0], blk).wait()

    @ttl.compute()
    def compute():
        with a_cb.wait() as v, o_cb.reserve() as o:
            o.store(v + 1)

    @ttl.datamovement()
    def writer():
        with o_cb.wait() as blk:
            ttl.copy(blk, out[0, 0]).wait()
"""
    )
    out = tile_dev(torch.zeros(32, 32), device)
    ns["op"](tile_dev(torch.ones(32, 32), device), out)
    assert ns["seen"] == [(True, "a_cb", 2)]
    assert torch.equal(ttnn.to_torch(out).float(), torch.full((32, 32), 2.0))


BROADCAST_OP = """
@ttl.operation(grid=(1, 1))
def op(a, col, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 2), block_count=1)
    c_dfb = ttl.make_dataflow_buffer_like(col, shape=(2, 1), block_count=1)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(2, 2), block_count=1)

    @ttl.datamovement()
    def reader():
        with a_dfb.reserve() as x, c_dfb.reserve() as y:
            ttl.copy(a[0:2, 0:2], x).wait()
            ttl.copy(col[0:2, 0:1], y).wait()

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, c_dfb.wait() as y, o_dfb.reserve() as o:
            o.store(FORM)

    @ttl.datamovement()
    def writer():
        with o_dfb.wait() as blk:
            ttl.copy(blk, out[0:2, 0:2]).wait()
"""


@pytest.mark.parametrize(
    "form",
    [
        "x * ttl.math.broadcast(y, dims=[1])",  # spec 0.4: shaped by the other operand
        "ttl.math.broadcast(y, dims=[1]) * x",
        "x * ttl.math.broadcast(y, o, dims=[1])",  # 1.1.1: the output block gives the shape
    ],
)
def test_math_broadcast_legacy_forms(program, device, form):
    ns = program(HEADER + BROADCAST_OP.replace("FORM", form))
    a = torch.rand(64, 64)
    col = torch.rand(64, 32)
    out = tile_dev(torch.zeros(64, 64), device, ttnn.float32)
    with pytest.warns(DeprecationWarning):
        ns["op"](tile_dev(a, device, ttnn.float32), tile_dev(col, device, ttnn.float32), out)
    want = a * col[:, :1].expand(64, 64)  # column 0 of each tile, across every column
    assert torch.allclose(ttnn.to_torch(out).float(), want, rtol=1e-6)


@pytest.mark.parametrize(
    "form", ["ttl.math.broadcast(x, dims=[1])", "ttl.math.broadcast(x, o, dims=[1])"]
)
def test_math_broadcast_of_a_same_shape_multi_tile_block(program, device, form):
    src = (  # the column DFB stays unused
        BROADCAST_OP.replace("FORM", form)
        .replace(", c_dfb.wait() as y", "")
        .replace(", c_dfb.reserve() as y", "")
        .replace("            ttl.copy(col[0:2, 0:1], y).wait()\n", "")
    )
    ns = program(HEADER + src)
    a = torch.rand(64, 64)
    out = tile_dev(torch.zeros(64, 64), device, ttnn.float32)
    with pytest.warns(DeprecationWarning):
        ns["op"](tile_dev(a, device, ttnn.float32), tile_dev(a[:, :32], device, ttnn.float32), out)
    # a same-shape multi-tile block: column 0 of every tile fills that tile (item 3)
    want = a.reshape(2, 32, 2, 32)[:, :, :, :1].expand(2, 32, 2, 32).reshape(64, 64)
    assert torch.equal(ttnn.to_torch(out).float(), want)


def test_pipe_has_current_core(program, device):
    ns = program(
        HEADER
        + """
hits = []

@ttl.operation(grid=(3, 1))
def op(a):
    pipe = ttl.Pipe((0, 0), (1, 0))
    hits.append((ttl.node(dims=2), pipe.has_current_core()))

    @ttl.datamovement()
    def dm():
        pass
"""
    )
    ns["op"](tile_dev(torch.zeros(32, 32), device))
    assert sorted(ns["hits"]) == [((0, 0), True), ((1, 0), True), ((2, 0), False)]


def test_host_tensors_are_staged_on_the_operations_device(program, device):
    ns = program(HEADER + COPY_OP)
    a = ttnn.from_torch(torch.full((32, 64), 3.0), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.from_torch(torch.zeros(32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    dev_out = tile_dev(torch.zeros(32, 64), device)
    ns["scale"](a, dev_out)  # a host input next to a device tensor: that device
    assert torch.equal(ttnn.to_torch(dev_out).float(), torch.full((32, 64), 6.0))
    ns["scale"](a, out)  # every tensor on the host: the one open device; results written back
    assert out.device() is None and a.device() is None
    assert torch.equal(ttnn.to_torch(out).float(), torch.full((32, 64), 6.0))


def test_host_tensors_without_a_device_are_diagnosed(program, monkeypatch):
    from tilewright.ttnn import chips

    ns = program(HEADER + COPY_OP + "def call(a, out):\n    scale(a, out)  # HOST CALL\n")
    a = ttnn.from_torch(torch.ones(32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    monkeypatch.setattr(chips, "open_devices", lambda: [])
    with pytest.raises(InterfaceError) as info:
        ns["call"](a, a)
    assert "runtime argument 'a' is a host tensor and no other tensor names the device" in str(
        info.value.message
    )
    assert "no device is open" in info.value.message
    assert info.value.loc.line == line_of(ns, "# HOST CALL")


def test_ttnn_creation_takes_torch_dtypes(device):
    e = ttnn.empty((32, 32), dtype=torch.float32, layout=ttnn.TILE_LAYOUT, device=device)
    assert e.dtype == ttnn.float32
    t = ttnn.from_torch(torch.ones(32, 32), dtype=torch.bfloat16, layout=ttnn.TILE_LAYOUT)
    assert t.dtype == ttnn.bfloat16
    with pytest.raises(Exception, match="torch.complex64 is not a ttnn data type"):
        ttnn.zeros((32, 32), dtype=torch.complex64)


def test_legacy_program_return(program, device):
    ns = program(
        HEADER
        + """
@ttl.kernel(grid=(1, 1))
def op(a, out):
    a_cb = ttl.make_circular_buffer_like(a, shape=(1, 1), buffer_factor=2)
    o_cb = ttl.make_circular_buffer_like(out, shape=(1, 1), buffer_factor=2)

    @ttl.datamovement()
    def dm0():
        with a_cb.reserve() as blk:
            ttl.copy(a[0, 0], blk).wait()

    @ttl.compute()
    def compute():
        with a_cb.wait() as v, o_cb.reserve() as o:
            o.store(v * 3)

    @ttl.datamovement()
    def dm1():
        with o_cb.wait() as blk:
            ttl.copy(blk, out[0, 0]).wait()

    return ttl.Program(compute, dm0, dm1)(a, out)
"""
    )
    out = tile_dev(torch.zeros(32, 32), device)
    ns["op"](tile_dev(torch.ones(32, 32), device), out)
    assert torch.equal(ttnn.to_torch(out).float(), torch.full((32, 32), 3.0))


# -- item 3: programs that were wrongly rejected or ran wrong ---------------------------------


def test_return_in_nested_functions_and_early_return_in_kernels(program, device):
    ns = program(
        HEADER
        + """
@ttl.operation(grid=(1, 1))
def explicit(a, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    def twice(x):
        return x * 2

    @ttl.datamovement()
    def reader():
        with a_dfb.reserve() as blk:
            ttl.copy(a[0, 0], blk).wait()
            return

    @ttl.compute()
    def compute():
        with a_dfb.wait() as v, o_dfb.reserve() as o:
            o.store(twice(v))
        return

    @ttl.datamovement()
    def writer():
        with o_dfb.wait() as blk:
            ttl.copy(blk, out[0, 0]).wait()


@ttl.operation(grid=(1, 1))
def unified(a, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    def column(i):
        if i > 3:
            return 0
        return i

    with a_dfb.reserve() as blk:
        ttl.copy(a[0, column(0)], blk).wait()
    with a_dfb.wait() as v, o_dfb.reserve() as o:
        o.store(v * 5)
    with o_dfb.wait() as blk:
        ttl.copy(blk, out[0, 0]).wait()


def returns(a):
    @ttl.operation(grid=(1, 1))
    def op(a):
        return 1  # BODY RETURN
"""
    )
    out = tile_dev(torch.zeros(32, 32), device)
    ns["explicit"](tile_dev(torch.ones(32, 32), device), out)
    assert torch.equal(ttnn.to_torch(out).float(), torch.full((32, 32), 2.0))
    ns["unified"](tile_dev(torch.ones(32, 32), device), out)
    assert torch.equal(ttnn.to_torch(out).float(), torch.full((32, 32), 5.0))
    with pytest.raises(InterfaceError) as info:  # the body's own return stays rejected
        ns["returns"](None)
    assert "an operation body must not return" in info.value.message
    assert info.value.loc.line == line_of(ns, "# BODY RETURN")


def test_legacy_store_acc_assigns_first_then_accumulates(program, device):
    ns = program(
        HEADER
        + """
@ttl.operation(grid=(1, 1))
def total(a, out):
    a_cb = ttl.make_circular_buffer_like(a, shape=(2, 2), buffer_factor=2)
    o_cb = ttl.make_circular_buffer_like(out, shape=(2, 2), buffer_factor=2)

    @ttl.datamovement()
    def reader():
        for _ in range(6):
            with a_cb.reserve() as blk:
                ttl.copy(a[0:2, 0:2], blk).wait()

    @ttl.compute()
    def compute():
        for _ in range(2):  # a fresh reserve each time: its first acc=True store assigns
            with o_cb.reserve() as o:
                for _ in range(3):
                    with a_cb.wait() as x:
                        o.store(x, acc=True)

    @ttl.datamovement()
    def writer():
        for _ in range(2):
            with o_cb.wait() as blk:
                ttl.copy(blk, out[0:2, 0:2]).wait()
"""
    )
    src = torch.arange(64 * 64, dtype=torch.float32).reshape(64, 64) / 4096
    out = tile_dev(torch.zeros(64, 64), device, ttnn.float32)
    ns["total"](tile_dev(src, device, ttnn.float32), out)
    assert torch.allclose(ttnn.to_torch(out).float(), 3 * src, rtol=1e-6)


def test_circular_buffer_keeps_the_users_name_in_diagnostics(program, device):
    ns = program(
        HEADER
        + """
@ttl.operation(grid=(1, 1))
def stuck(a):
    in_cb = ttl.make_circular_buffer_like(a, shape=(1, 1), buffer_factor=2)
    my_cb = ttl.make_circular_buffer_like(a, shape=(1, 1), buffer_factor=2)

    @ttl.compute()
    def compute():
        with my_cb.wait() as x:  # WAITS FOREVER
            pass

    @ttl.datamovement()
    def dm():
        pass
"""
    )
    with pytest.raises(DeadlockError) as info:
        ns["stuck"](tile_dev(torch.zeros(32, 32), device))
    text = str(info.value)
    assert f":{line_of(ns, '# WAITS FOREVER')}: my_cb.wait(): my_cb holds 0 filled blocks" in text


def test_ttnn_rand_draws_new_values_unless_seeded(device):
    def values(**kw):
        return ttnn.to_torch(ttnn.rand((32, 64), device=device, **kw)).float()

    assert not torch.equal(values(), values())  # ttnn's seed=0: a new draw each call
    assert torch.equal(values(seed=7), values(seed=7))
    torch.manual_seed(3)  # unseeded draws follow torch's generator (the simulator's behaviour)
    first = values()
    torch.manual_seed(3)
    assert torch.equal(values(), first)
    r = values(low=-2.0, high=-1.0, seed=11).numpy()
    assert r.min() >= -2.0 and r.max() <= -1.0 and np.unique(r).size > 100
