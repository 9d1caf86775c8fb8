"""``tilewright explain prog.py [args]``: run a program and show how its operations compiled.

The program runs exactly as under ``tilewright run``.  For every operation it
compiles (each distinct compilation once, in order), the report shows the form
(unified or multi-kernel), the grid, the setup declarations of a unified body, each
logical kernel with its processor slot and its body (for a unified operation, the
function the splitter generated, written as the explicit form would write it), and
the DFB table: physical index, L1 address, bytes, declaration line, and the
allocator's sharing decision, followed by how the indices were chosen (first-fit,
or the exact colouring search's outcome when first-fit exceeded the index limit).  The report is deterministic: no object addresses,
no timestamps; files are shown relative to the program's directory.

``--coverage`` instead lists, per operation the program calls (each distinct outcome
once, in order), whether it ran compiled or interpreted and, for each of its kernels,
whether it compiles or the first construct that stops it with file:line -- each kernel
lowered on its own, so one refused kernel does not hide the others' reasons.
"""

from __future__ import annotations

import ast
import os
import sys

import click

from tilewright.cli.runner import run_program
from tilewright.device import session
from tilewright.lazy import lazy_import

# The compiler loads when the command runs, not when the command line starts.
backend = lazy_import("tilewright.compiler.backend.engine")
program_builder = lazy_import("tilewright.compiler.program_builder")
raw_site = lazy_import("tilewright.compiler.raw.site")
passes_ops = lazy_import("tilewright.compiler.backend.passes.ops")
passes_pipeline = lazy_import("tilewright.compiler.backend.passes.pipeline")

__all__ = [
    "coverage_records",
    "describe_compilation",
    "describe_coverage",
    "explain",
    "run_with_coverage",
]


def _where(path: str, base: str) -> str:
    rel = os.path.relpath(path, base)
    return path if rel.startswith("..") else rel


def _indent(text: str, by: str = "    ") -> str:
    return "\n".join(by + line if line else line for line in text.splitlines())


def _explicit_kernels(op, setup) -> dict[str, str]:
    defs = {k.name: k for k in op.interface.kernel_defs}
    return {
        d.name: ast.unparse(defs[d.name]) if d.name in defs else "<kernel function not found>"
        for d in setup.kernels
    }


def describe_compilation(op, program, setups, base: str) -> str:
    """The explain report of one compiled operation (its record, program and setups)."""
    first = next(iter(setups.values()))
    plan = getattr(program, "split_plan", None)
    form = "multi-kernel" if op.multi_kernel else "unified"
    src = op.source
    lines = [
        f"operation {op.name} ({form}) at {_where(src.file, base)}:{src.tree.lineno}, grid {tuple(first.grid)}"
    ]
    if plan is not None and plan.setup:
        lines.append("  setup:")
        for decl in plan.setup:
            lines.append(
                f"    {decl.name} = ttl.{decl.factory}(...)  # line {decl.line} ({decl.kind})"
            )
    if plan is not None:
        bodies = dict(plan.kernel_sources)
    else:
        bodies = _explicit_kernels(op, first)
    slots = getattr(program, "kernel_slots", {})
    logical = getattr(program, "logical_kernels", [])
    for decl, lk in zip(first.kernels, logical):
        lines.append(f"  kernel {decl.name}: {lk.describe()}, slot {slots.get(decl.name, '?')}")
        lines.append(_indent(bodies.get(decl.name, ""), "      "))
    lines.append("  DFBs:")
    lines.append(f"    {'name':<24} {'index':>5} {'address':>10} {'bytes':>7}  declared  decision")
    allocation = getattr(program, "dfb_allocation", None)
    notes = allocation.notes if allocation is not None else ("",) * len(first.dfbs)
    for d, (index, address), note in zip(first.dfbs, allocation or (), notes):
        line = d.loc.line if d.loc is not None else "?"
        lines.append(
            f"    {d.name:<24} {index:>5} {address:>#10x} {d.total_bytes:>7}  line {line:<4}  {note or 'own index'}"
        )
    if allocation is not None and allocation.summary:
        lines.append(f"  DFB indices: {allocation.summary}")
    lines += _raw_calls(getattr(getattr(first, "op", None), "extern_plan", None), base)
    return "\n".join(lines)


def _raw_calls(plan, base: str) -> list[str]:
    """The ``ttl.raw.call`` sites and the DFB effects computed from their IR."""
    sites = [s for s in getattr(plan, "sites", ()) if isinstance(s, raw_site.RawCallSite)]
    if not sites:
        return []
    out = ["  raw IR calls:"]
    for s in sites:
        where = f"{_where(s.loc.file, base)}:{s.loc.line}"
        out.append(f"    {s.title} at {where} on the {s.kind} kernel")
        out.append(f"      effects {s.describe_effects()}")
    return out


def _reason(exc, base: str) -> str:
    where = f"{_where(exc.loc.file, base)}:{exc.loc.line}: " if exc.loc is not None else ""
    return f"{where}{exc.message}"


def describe_coverage(record, engine: str, kernels, outcome, base: str) -> str:
    """One operation call's coverage: how it ran (``outcome``: "compiled", an error, or
    None for an operation the engine choice interprets) and each kernel's verdict."""
    src = record.source
    head = f"operation {record.name} at {_where(src.file, base)}:{src.tree.lineno}: "
    if outcome == "compiled":
        head += "compiled"
    elif outcome is None:
        why = "--engine python" if engine == "python" else "interpreted by the engine choice"
        head += f"interpreted ({why})"
    else:
        head += f"interpreted ({_reason(outcome, base)})"
    lines = [head]
    for name, exc in kernels:
        verdict = "compiles" if exc is None else f"not compilable: {_reason(exc, base)}"
        lines.append(f"  kernel {name}: {verdict}")
    return "\n".join(lines)


def describe_ir(compiled, after: str | None = None) -> str:
    """The kernel IR of a compiled operation call (``tilewright explain --ir``): as compiled,
    or as it is after pass ``after`` (``--after``; ``lower``: before any pass)."""
    if after is None:
        kernels = list(compiled.kernels)
    else:
        kernels = [passes_pipeline.run(low.lowered, upto=after) for low in compiled.lowered]
    return "\n".join(_indent(passes_ops.print_lowered(k), "    ") for k in kernels)


class _PassName(click.ParamType):
    """A name of ``passes.pipeline.PASS_NAMES``, read when the option is given (so the
    command line does not load the compiler to build its options)."""

    name = "pass"

    def convert(self, value, param, ctx):
        names = passes_pipeline.PASS_NAMES
        if value not in names:
            self.fail(f"{value!r} is not one of {', '.join(names)}", param, ctx)
        return value


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--ir", "show_ir", is_flag=True, help="Also print each operation's kernel IR.")
@click.option(
    "--coverage",
    is_flag=True,
    help="Instead list, per operation, compiled or interpreted, and for each kernel whether "
    "it compiles or the first construct that stops it (file:line).",
)
@click.option(
    "--after",
    "after",
    type=_PassName(),
    default=None,
    help="With --ir: the IR after this pass (lower: as lowering writes it, before any pass); "
    "default: as compiled, after every pass.",
)
@click.option(
    "--engine",
    type=click.Choice(["auto", "python", "native"]),
    default="auto",
    show_default=True,
    help="How TT-Lang operations run (see `tilewright run --engine`).",
)
@click.argument("program", type=click.Path(exists=True, dir_okay=False))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def explain(
    program: str,
    args: tuple[str, ...],
    show_ir: bool,
    coverage: bool,
    engine: str,
    after: str | None,
) -> None:
    """Run PROGRAM like `tilewright run` and explain every operation it compiles."""
    session.reset(engine=engine)
    if coverage:
        sys.exit(_coverage(program, args, engine))
    show_ir = show_ir or after is not None
    base = os.path.dirname(os.path.abspath(program))
    reports: list[str] = []
    current: dict[str, str] = {}

    def observe(op, built, setups) -> None:
        current["text"] = describe_compilation(op, built, setups, base)
        if not show_ir:
            _add(reports, current["text"])

    def compiled(record, result, built) -> None:
        title = "kernel IR" if after is None else f"kernel IR after {after}"
        _add(reports, current.pop("text", "") + f"\n  {title}:\n" + describe_ir(result, after))

    def interpreted(record, exc, built) -> None:
        where = f"{exc.loc.file}:{exc.loc.line}: " if exc.loc is not None else ""
        _add(
            reports, current.pop("text", "") + f"\n  kernel IR: interpreted ({where}{exc.message})"
        )

    program_builder.BUILD_OBSERVERS.append(observe)
    if show_ir:
        backend.COMPILE_OBSERVERS.append(compiled)
        backend.FALLBACK_OBSERVERS.append(interpreted)
    try:
        status = run_program(program, list(args))
    finally:
        program_builder.BUILD_OBSERVERS.remove(observe)
        if show_ir:
            backend.COMPILE_OBSERVERS.remove(compiled)
            backend.FALLBACK_OBSERVERS.remove(interpreted)
        if show_ir and current.get("text"):  # interpreted by choice (--engine python)
            _add(reports, current.pop("text") + "\n  kernel IR: interpreted (--engine python)")
    sys.stdout.flush()
    click.echo("")
    click.echo(f"== tilewright explain: {len(reports)} compiled operation(s)")
    for text in reports:
        click.echo("")
        click.echo(text)
    sys.exit(status)


def run_with_coverage(program: str, args: list[str]) -> tuple[int, list[list]]:
    """Run the program; its exit status and, per operation call in order,
    ``[record, engine, kernels, outcome]`` (see :func:`describe_coverage`)."""
    calls: list[list] = []

    def observe(record, choice, kernels) -> None:
        calls.append([record, choice, kernels, None])

    def compiled(record, result, built) -> None:
        if calls and calls[-1][0] is record:
            calls[-1][3] = "compiled"

    def interpreted(record, exc, built) -> None:
        if calls and calls[-1][0] is record:
            calls[-1][3] = exc

    backend.COVERAGE_OBSERVERS.append(observe)
    backend.COMPILE_OBSERVERS.append(compiled)
    backend.FALLBACK_OBSERVERS.append(interpreted)
    try:
        status = run_program(program, args)
    finally:
        backend.COVERAGE_OBSERVERS.remove(observe)
        backend.COMPILE_OBSERVERS.remove(compiled)
        backend.FALLBACK_OBSERVERS.remove(interpreted)
    return status, calls


def coverage_records(calls: list[list], base: str) -> list[dict]:
    """The distinct operation outcomes of :func:`run_with_coverage`, in order, as data
    (``benchmarks/bench_coverage.py``): name, where, compiled, the operation's reason and
    each kernel's (None where it compiles); reasons as ``message`` and ``where``."""

    def reason(exc) -> dict | None:
        if exc is None:
            return None
        where = f"{_where(exc.loc.file, base)}:{exc.loc.line}" if exc.loc is not None else None
        return {"message": exc.message, "where": where}

    seen: dict[str, dict] = {}
    for record, choice, kernels, outcome in calls:
        text = describe_coverage(record, choice, kernels, outcome, base)
        if text in seen:
            continue
        src = record.source
        if outcome == "compiled":
            why = None
        elif outcome is None:
            why = {"message": f"interpreted by the engine choice ({choice})", "where": None}
        else:
            why = reason(outcome)
        seen[text] = {
            "operation": record.name,
            "where": f"{_where(src.file, base)}:{src.tree.lineno}",
            "compiled": outcome == "compiled",
            "reason": why,
            "kernels": [{"name": name, "reason": reason(exc)} for name, exc in kernels],
        }
    return list(seen.values())


def _coverage(program: str, args: tuple[str, ...], engine: str) -> int:
    """Run the program; print the coverage of every operation call (distinct ones once)."""
    base = os.path.dirname(os.path.abspath(program))
    status, calls = run_with_coverage(program, list(args))
    reports: dict[str, list] = {}  # distinct outcomes, in order
    for record, choice, kernels, outcome in calls:
        reports.setdefault(describe_coverage(record, choice, kernels, outcome, base), kernels)
    n_compiled = sum(text.splitlines()[0].endswith(": compiled") for text in reports)
    n_kernels = sum(len(kernels) for kernels in reports.values())
    n_ok = sum(exc is None for kernels in reports.values() for _, exc in kernels)
    n_ops = len(reports)
    sys.stdout.flush()
    click.echo("")
    click.echo(
        f"== tilewright explain --coverage: {n_compiled} of {n_ops} operation(s) compiled, "
        f"{n_ok} of {n_kernels} kernel(s) compile"
    )
    for text in reports:
        click.echo("")
        click.echo(text)
    return status


def _add(reports: list[str], text: str) -> None:
    if text and text not in reports:
        reports.append(text)
