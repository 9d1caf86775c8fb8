"""Start-up (issue 22): what ``import ttl`` and the command line load before any operation.

``import tilewright.ttl`` (and ``from tilewright import ttl, ttnn``, what a program does)
loads the language runtime and the tensor front end only: the compiler, the native build,
the kernel IR and ``ml_dtypes`` (about a second to import) load when an operation first
needs them.  Structural checks on ``sys.modules`` in a fresh interpreter, not timings
(``benchmarks/bench_startup.py`` measures those).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HEAVY = ("tilewright.compiler", "tilewright.native.build", "tilewright.kir", "ml_dtypes")
"""Modules (and their submodules) that ``import ttl`` must not load."""


def loaded_after(code: str, tmp_path: Path) -> set[str]:
    """The modules a fresh interpreter has after running ``code`` (a file: decoration reads
    the operation's source)."""
    probe = tmp_path / "probe.py"
    probe.write_text(code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n")
    out = subprocess.run(
        [sys.executable, str(probe)], capture_output=True, text=True, check=True
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize(
    "code",
    ["import tilewright.ttl", "from tilewright import ttl, ttnn", "import tilewright.ttnn"],
)
def test_import_loads_no_compiler_native_build_kir_or_ml_dtypes(code: str, tmp_path) -> None:
    modules = loaded_after(code, tmp_path)
    assert "tilewright.lang.dfb" in modules or "ttl" not in code  # the language did load
    assert not heavy(modules), f"{code!r} loads {heavy(modules)}"


def test_the_first_operation_loads_the_compiler(tmp_path) -> None:
    # The same probe sees the modules once they are needed: the check above can fail.
    code = textwrap.dedent(
        """
        from tilewright import ttl

        @ttl.operation(grid=(1, 1))
        def noop(a) -> None:
            @ttl.compute()
            def compute():
                pass
        """
    )
    modules = loaded_after(code, tmp_path)
    assert "tilewright.compiler.operation" in modules
    assert "ml_dtypes" not in modules  # never: the codecs are Tilewright's own


def test_ttl_names_from_the_compiler_are_the_compilers() -> None:
    from tilewright import ttl
    from tilewright.compiler import operation as compiler_operation
    from tilewright.ttl import raw

    assert ttl.operation is compiler_operation.operation
    assert ttl.kernel is compiler_operation.operation
    assert ttl.Operation is compiler_operation.Operation
    assert ttl.raw is raw and raw.__name__ == "tilewright.ttl.raw"
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        ttl.no_such_name  # noqa: B018


def test_the_command_line_loads_no_compiler_and_no_ttnn(tmp_path) -> None:
    # `tilewright run` imports its command line first; the program's `import ttnn` loads
    # the tensor front end, the first operation the compiler.
    modules = loaded_after("import tilewright.cli.main", tmp_path)
    assert "tilewright.cli.run" in modules
    found = heavy(modules) + sorted(m for m in modules if m.startswith("tilewright.ttnn"))
    assert not found, f"the command line loads {found}"


PLAIN_RUN_MAX_MODULES = 270
"""Tilewright modules a whole run of ``benchmarks/programs/eltwise_add.py`` loads (issue 22:
284 before the raw / external-call front ends were deferred, 263 after)."""

RAW_AND_EXTERN = ("tilewright.compiler.raw", "tilewright.compiler.extern")


def run_modules(program: Path, tmp_path: Path) -> set[str]:
    """The modules a fresh interpreter has after ``tilewright run program`` (the runner in
    process, so the probe sees its ``sys.modules``)."""
    code = (
        "import sys\n"
        "from tilewright.cli.runner import run_program\n"
        f"status = run_program({str(program)!r}, [])\n"
        "assert status == 0, status\n"
    )
    return loaded_after(code, tmp_path)


def test_a_plain_run_loads_no_raw_or_extern_front_end(tmp_path) -> None:
    program = Path(__file__).resolve().parents[1] / "benchmarks" / "programs" / "eltwise_add.py"
    modules = run_modules(program, tmp_path)
    assert "tilewright.compiler.backend.engine" in modules  # it did compile and run
    found = sorted(
        m for m in modules if any(m == r or m.startswith(r + ".") for r in RAW_AND_EXTERN)
    )
    assert not found, f"a run with no ttl.raw / call_extern_func loads {found}"
    ours = [m for m in modules if m == "tilewright" or m.startswith("tilewright.")]
    assert len(ours) <= PLAIN_RUN_MAX_MODULES, f"{len(ours)} Tilewright modules"


def test_an_operation_that_calls_raw_loads_the_raw_front_end(tmp_path) -> None:
    # The front ends still run for an operation that can call them (the gate in
    # compiler.operation): `ttl.raw.call` written out is found by name at decoration and
    # refused there, before the raw package was ever imported.
    code = textwrap.dedent(
        """
        from tilewright import ttl

        @ttl.operation(grid=(1, 1))
        def noop(a) -> None:
            @ttl.compute()
            def compute():
                if False:
                    ttl.raw.call(None)
        """
    )
    with pytest.raises(subprocess.CalledProcessError) as info:
        loaded_after(code, tmp_path)
    assert "the first argument must be a @ttl.raw.ir function" in info.value.stderr


def test_an_operation_that_calls_an_extern_loads_the_extern_front_end(tmp_path) -> None:
    code = textwrap.dedent(
        """
        from tilewright import ttl

        @ttl.operation(grid=(1, 1))
        def noop(a) -> None:
            @ttl.compute()
            def compute():
                ttl.call_extern_func(None)
        """
    )
    with pytest.raises(subprocess.CalledProcessError) as info:
        loaded_after(code, tmp_path)
    assert "ttl.call_extern_func" in info.value.stderr  # the front end ran and refused it


FREEZE_PROBE = """
import gc, sys
provided = "tilewright.ttl" in sys.modules
frozen = gc.get_freeze_count()
class Node:
    pass
a, b = Node(), Node()
a.other, b.other = b, a  # the program's own cycle: still collected
del a, b
print("PROBE", provided, frozen, gc.collect() >= 2)
"""


def test_the_command_freezes_what_it_provides_before_the_program(tmp_path) -> None:
    # `tilewright run` as the process's command: ttl is loaded and the collector's view of
    # it frozen before the program starts (runner._load_provided); the program's own
    # garbage is collected as always.
    program = tmp_path / "prog.py"
    program.write_text(FREEZE_PROBE)
    out = subprocess.run(
        [sys.executable, "-m", "tilewright", "run", str(program)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    provided, frozen, collected = out.split("PROBE ")[1].split()
    assert provided == "True" and int(frozen) > 10_000 and collected == "True"


def test_running_in_process_leaves_the_callers_collector_alone(tmp_path) -> None:
    program = tmp_path / "prog.py"
    program.write_text(FREEZE_PROBE)
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            f"from tilewright.cli.runner import run_program; run_program({str(program)!r}, [])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.split("PROBE ")[1].split()[1] == "0"
