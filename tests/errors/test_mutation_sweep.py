"""A mutation sweep over the shared examples: no internal exception escapes for any input.

Each mutant changes one call of the TT-Lang / ttnn surface or of the program's own
operations (an argument dropped, added, replaced by a value of the wrong type, swapped;
an unknown keyword) and runs the program in-process as ``tilewright run`` does.  Every
failure raised inside Tilewright must be a ``TilewrightError`` that has (or whose
traceback gives) the user's line; a failure raised in the program's own code (a Python
TypeError at the call, the program's checks) is the program's.  Deterministic: fixed
seeds; a finding prints the mutant.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import io
import random
import runpy
from pathlib import Path

import pytest

from tilewright.cli.runner import install_aliases
from tilewright.errors import TilewrightError, internal_file, traceback_location

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SWEEP = {  # example -> mutants (kept small: CI time)
    "01_fused_eltwise.py": 10,
    "04_unified_add.py": 10,
    "05_pipe_multicast.py": 8,
    "08_legacy_spellings.py": 8,
}
WRONG_VALUES = [None, "x", -1, 0, 2.5, (1,), True]
METHODS = {"reserve", "wait", "push", "pop", "store", "if_src", "if_dst", "wait_eq", "set"}
BUILTINS = {"range", "print", "len", "tuple", "list", "int", "float", "zip", "min", "max"}


def _root(f: ast.expr) -> str | None:
    while isinstance(f, ast.Attribute):
        f = f.value
    return f.id if isinstance(f, ast.Name) else None


def _surface_calls(tree: ast.AST) -> list[ast.Call]:
    out = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        f, root = n.func, _root(n.func)
        if root in ("ttl", "ttnn") or (isinstance(f, ast.Attribute) and f.attr in METHODS):
            out.append(n)
        elif isinstance(f, ast.Name) and f.id not in BUILTINS and f.id[:1].islower():
            out.append(n)
    return out


def mutants(source: str, count: int, seed: int):
    rng = random.Random(seed)
    tree = ast.parse(source)
    n_calls = len(_surface_calls(tree))
    made = 0
    while made < count:
        t = copy.deepcopy(tree)
        call = _surface_calls(t)[rng.randrange(n_calls)]
        what = rng.choice(("drop", "extra", "replace", "keyword", "swap"))
        before = ast.unparse(call)
        if what == "drop" and call.args:
            call.args.pop(rng.randrange(len(call.args)))
        elif what == "extra":
            call.args.append(ast.Constant(rng.choice(WRONG_VALUES)))
        elif what == "replace" and call.args:
            call.args[rng.randrange(len(call.args))] = ast.Constant(rng.choice(WRONG_VALUES))
        elif what == "replace" and call.keywords:
            call.keywords[rng.randrange(len(call.keywords))].value = ast.Constant(
                rng.choice(WRONG_VALUES)
            )
        elif what == "keyword":
            call.keywords.append(ast.keyword("bogus", ast.Constant(1)))
        elif what == "swap" and len(call.args) >= 2:
            call.args[0], call.args[1] = call.args[1], call.args[0]
        else:
            continue
        made += 1
        yield (
            f"line {call.lineno}: {before[:70]} -> {ast.unparse(call)[:70]}",
            ast.unparse(ast.fix_missing_locations(t)),
        )


def run(path: Path) -> BaseException | None:
    from tilewright.ttnn import chips, device

    install_aliases()
    before = list(chips.open_devices())
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            runpy.run_path(str(path), run_name="__main__")
        return None
    except BaseException as exc:  # noqa: BLE001 - every outcome is classified
        return exc
    finally:
        for d in chips.open_devices():
            if all(d is not b for b in before):
                device.close_device(d)


def finding(exc: BaseException | None) -> str | None:
    """Why ``exc`` breaks the rule, or None."""
    if exc is None or isinstance(exc, SystemExit):
        return None
    if isinstance(exc, TilewrightError):
        return None if (exc.loc or traceback_location(exc)) is not None else "no user line"
    tb, last = exc.__traceback__, None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    if last is not None and not last.startswith("<") and internal_file(last):
        return f"internal {type(exc).__name__}: {exc}"
    return None  # the program's own failure


@pytest.mark.parametrize("example", sorted(SWEEP))
def test_no_internal_exception_escapes(example, tmp_path):
    source = (EXAMPLES / example).read_text()
    problems = []
    for i, (what, text) in enumerate(mutants(source, SWEEP[example], seed=1500 + len(example))):
        path = tmp_path / f"mutant{i}_{example}"
        path.write_text(text)
        why = finding(run(path))
        if why is not None:
            problems.append(f"{example} {what}: {why}")
    assert not problems, "\n".join(problems)
