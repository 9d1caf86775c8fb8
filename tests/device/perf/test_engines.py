"""One model, two engines: Python and C++ kernels advance their clocks identically;
the same program gives the same times; timing never changes results."""

import dataclasses

import pytest
import torch

from tilewright import ttnn
from tilewright.device.perf import arch as perf_arch
from tilewright.device.perf.noc import NocModel

from .programs import mm_program

KT, NCOLS = 3, 4


@pytest.fixture
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


def _inputs(device):
    torch.manual_seed(0)
    kw = dict(dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    a = ttnn.from_torch((torch.randn(32, 32 * KT) / 8).to(torch.bfloat16), **kw)
    b = ttnn.from_torch((torch.randn(32 * KT, 32 * NCOLS) / 8).to(torch.bfloat16), **kw)
    return a, b, kw


def _run(device, native: bool):
    a, b, kw = _inputs(device)
    out = ttnn.from_torch(torch.zeros(32, 32 * NCOLS), **kw)
    result = device.command_queue.enqueue_program(
        mm_program(device, a, b, out, native=native, ncols=NCOLS, kt=KT)
    )
    times = [(s.place, s.kernel, s.cycles, s.blocked_cycles, s.waits) for s in result.stats]
    return times, result, ttnn.to_torch(out), (ttnn.to_torch(a), ttnn.to_torch(b))


def test_python_and_native_kernels_get_identical_modelled_cycles(device):
    py, r_py, out_py, (a, b) = _run(device, native=False)
    cc, r_cc, out_cc, _ = _run(device, native=True)
    assert py == cc
    assert r_py.makespan == r_cc.makespan > 0
    for s_py, s_cc in zip(r_py.stats, r_cc.stats):  # the model's state too
        assert bytes(s_py.perf) == bytes(s_cc.perf)
    want = torch.exp(a.float() @ b.float())
    assert torch.equal(out_py, out_cc)
    assert torch.allclose(out_py.float(), want, rtol=0.02, atol=0.02)


def test_the_same_program_gives_the_same_times(device):
    first, *_ = _run(device, native=False)
    second, *_ = _run(device, native=False)
    assert first == second


def test_timing_never_changes_results(device, monkeypatch):
    """The same program on a NoC ten times slower: other times, the same bits."""
    base_times, _, base_out, _ = _run(device, native=False)
    slow = dataclasses.replace(perf_arch.WORMHOLE_B0, hop=90, issue_write=220, issue_read=230)
    monkeypatch.setattr(device, "perf", _model_with(device, slow))
    slow_times, _, slow_out, _ = _run(device, native=False)
    assert [t[2] for t in slow_times] != [t[2] for t in base_times]
    assert torch.equal(slow_out, base_out)


def _model_with(device, arch):
    saved = perf_arch._BY_ARCH["WORMHOLE_B0"]  # noqa: SLF001 - a test of the model's numbers
    perf_arch._BY_ARCH["WORMHOLE_B0"] = arch  # noqa: SLF001
    try:
        model = NocModel(device)
    finally:
        perf_arch._BY_ARCH["WORMHOLE_B0"] = saved  # noqa: SLF001
    device.shared.info.perf = __import__("ctypes").addressof(model.state)
    return model


@pytest.mark.parametrize("native", [False, True], ids=["python", "native"])
def test_a_dry_run_keeps_the_semaphore_protocol_and_its_times(native):
    """Semaphore sets and multicasts are protocol, not payload: a dry run still moves them,
    so the multicast handshake completes and takes the same modelled time; the tiles do not."""
    from tilewright.device import session

    runs = []
    for dry in (False, True):
        session.reset(dry_run=dry)
        dev = ttnn.open_device(device_id=0)
        try:
            times, _, out, _ = _run(dev, native=native)
            runs.append((times, out))
        finally:
            ttnn.close_device(dev)
            session.reset()
    (real, real_out), (dry, dry_out) = runs
    assert dry == real
    assert real_out.abs().sum() > 0 and dry_out.abs().sum() == 0
