import pytest
import torch

from tilewright import ttnn


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(device_id=0)
    yield dev
    ttnn.close_device(dev)


@pytest.fixture
def to_dev(device):
    def make(t, dtype=ttnn.bfloat16):
        return ttnn.from_torch(
            t,
            dtype=dtype,
            layout=ttnn.TILE_LAYOUT,
            device=device,
            memory_config=ttnn.DRAM_MEMORY_CONFIG,
        )

    return make


def bf16(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (2 * torch.rand(*shape, generator=g) - 1).to(torch.bfloat16)


@pytest.fixture
def program(tmp_path):
    """Write ``source`` to a file, execute it, return its namespace (locations point into it)."""
    import textwrap

    counter = [0]

    def load(source: str) -> dict:
        counter[0] += 1
        path = tmp_path / f"prog{counter[0]}.py"
        path.write_text(textwrap.dedent(source).lstrip("\n"))
        ns: dict = {"__name__": f"prog{counter[0]}"}
        exec(compile(path.read_text(), str(path), "exec"), ns)
        ns["__file__"] = str(path)
        return ns

    return load


def line_of(ns: dict, marker: str) -> int:
    """1-based line of the first source line containing ``marker``."""
    with open(ns["__file__"]) as f:
        for i, text in enumerate(f, 1):
            if marker in text:
                return i
    raise AssertionError(f"marker {marker!r} not found")


@pytest.fixture(autouse=True, params=["python", "auto"], ids=["interpreted", "compiled"])
def engine(request):
    """Every end-to-end program here runs on both engines: interpreted, and compiled where it
    compiles (``--engine auto``); each test's own checks hold on both (docs/compiler.md)."""
    from tilewright.device import session

    saved = session.OPTIONS.engine
    session.OPTIONS.engine = request.param
    yield request.param
    session.OPTIONS.engine = saved
