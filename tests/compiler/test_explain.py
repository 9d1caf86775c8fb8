"""``tilewright explain``: the compiled kernels, slots and DFB table, deterministically."""

from click.testing import CliRunner

from tests.e2e.conftest import EXAMPLES
from tilewright.cli.main import cli


def explain(path) -> str:
    result = CliRunner().invoke(cli, ["explain", str(path)])
    assert result.exit_code == 0, result.output
    return result.output


def test_explain_example_04():
    out = explain(EXAMPLES / "04_unified_add.py")
    assert "PASS 04_unified_add" in out
    assert "== tilewright explain: 2 compiled operation(s)" in out
    assert "operation unified_add (unified) at 04_unified_add.py:72, grid (2, 1)" in out
    assert "  kernel compute: compute, slot trisc" in out
    assert "  kernel data_movement: data_movement, slot ncrisc" in out
    assert "@ttl.compute(kernel=ttl.KernelKind.COMPUTE)" in out
    assert "ttl.copy(a[r0:r0 + BR, c0:c0 + BC], a_in).wait()" in out
    assert "    a_dfb                        0    0x195a0   16384  line 73    own index" in out


def test_explain_is_deterministic():
    assert explain(EXAMPLES / "04_unified_add.py") == explain(EXAMPLES / "04_unified_add.py")


def test_explain_shows_explicit_kernels():
    out = explain(EXAMPLES / "01_fused_eltwise.py")
    assert "operation fused_relu_mul_add (multi-kernel)" in out
    assert "  kernel reader: data_movement kernel 'reader', slot ncrisc" in out
    assert "@ttl.datamovement()\n" in out and "def writer():" in out
    assert (
        "not shared with 'a_dfb': no split plan proves disjoint lifetimes (explicit operation)"
        in out
    )
