"""``tilewright sysdesc``: read, write, check and convert tt-mlir system descriptors.

Subcommands: ``default`` (compiler defaults and board presets), ``read`` (show a file as a
table, JSON or MLIR), ``check`` (every §11 rule; "OK ..." or a one-line reason) and
``convert`` (between ``.ttsys``, ``.json`` and ``.mlir`` by extension).  All work is done
by :mod:`tilewright.target`; this module only parses options and reports.  Every
descriptor problem exits 1 with one line on stderr, never a traceback.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import click

from tilewright.device.device import Mesh
from tilewright.device.requirements import RUN_HINT, runnable_findings
from tilewright.errors import TilewrightError
from tilewright.target import (
    ARCH,
    CHIP_CAPABILITY,
    CPU_ROLE,
    DATA_TYPE,
    ChipDesc,
    SystemDescRoot,
    SystemDescWarning,
    Version,
    board_preset,
    default_system_desc,
    file_format,
    make_root,
    parse_arch,
    print_mlir_module,
    read_descriptor_bytes,
    read_system_desc,
    resolve_schema_hash,
    to_json,
    validate,
    write_system_desc,
)
from tilewright.target.fields import CHIP_DESC, Text
from tilewright.target.presets import board_names
from tilewright.target.schema_hashes import schema_revision
from tilewright.target.ttsys import decode_with_findings

__all__ = ["sysdesc"]

_FORMATS = (".ttsys", ".json", ".mlir")


def _fail(message: str) -> NoReturn:
    """One line on stderr, exit status 1 (no traceback)."""
    raise click.ClickException(" ".join(message.split("\n")[:1]))


@contextmanager
def _reported() -> Iterator[None]:
    """Turn descriptor errors into one-line failures and warnings into stderr lines."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SystemDescWarning)
        try:
            yield
        except TilewrightError as err:
            _fail(err.message)
        except OSError as err:
            _fail(f"{err.filename or ''}: {err.strerror or err}")
        finally:
            for warning in caught:
                if issubclass(warning.category, SystemDescWarning):
                    click.echo(f"warning: {warning.message}", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def sysdesc() -> None:
    """Read, write, check and convert tt-mlir system descriptors.

    Formats are chosen by file extension: .ttsys (FlatBuffer, byte-compatible with
    tt-mlir), .json (like `ttrt query`) and .mlir (#ttcore.system_desc).
    """


# --- default --------------------------------------------------------------------------------


def _mesh(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(int(part) for part in text.replace(",", "x").split("x") if part)
    except ValueError:
        raise click.BadParameter(
            f"{text!r} is not a mesh shape like 2x4", param_hint="--mesh-shape"
        ) from None


@sysdesc.command("default")
@click.option(
    "--arch",
    type=click.Choice(ARCH.keywords()),
    default=None,
    help="Compiler default for this architecture (default wormhole_b0).",
)
@click.option(
    "--board",
    type=click.Choice(board_names()),
    default=None,
    help="A board's descriptor (real boards, derived multi-chip systems) instead of a compiler default.",
)
@click.option(
    "--chips",
    type=click.IntRange(min=1),
    default=None,
    help="Number of chips (compiler defaults only; ring channels when > 1).",
)
@click.option(
    "--mesh-shape",
    default=None,
    metavar="AxB",
    help="Mesh shape whose volume is the chip count (compiler defaults only).",
)
@click.option(
    "--schema-hash", default=None, help="Hash to store: 'head', a tt-mlir commit, or 64 hex digits."
)
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    help="Output file: .ttsys, .json or .mlir.",
)
def default_cmd(
    arch: str | None,
    board: str | None,
    chips: int | None,
    mesh_shape: str | None,
    schema_hash: str | None,
    output: str,
) -> None:
    """Write tt-mlir's compiler default or a board preset to OUTPUT.

    \b
    Examples:
      tilewright sysdesc default --arch wormhole_b0 -o wh.ttsys
      tilewright sysdesc default --arch blackhole --chips 4 -o bh4.mlir
      tilewright sysdesc default --board n300 -o n300.json
    """
    with _reported():
        if board is not None:
            if chips is not None or mesh_shape is not None:
                _fail("--board fixes the chips; drop --chips/--mesh-shape")
            root = board_preset(board)
            board_arch = root.get_chip_desc(0).arch
            if arch is not None and parse_arch(arch) != board_arch:
                _fail(f"board {board} is {ARCH.keyword(board_arch)}, not {arch}")
        else:
            root = default_system_desc(
                arch or "wormhole_b0", chips=chips, mesh_shape=_mesh(mesh_shape)
            )
        write_system_desc(root, output, schema_hash=schema_hash)
        click.echo(f"wrote {output}: {_summary(root)}")
        _say_if_not_runnable(root, output)


def _say_if_not_runnable(root: SystemDescRoot, output: str) -> None:
    """A descriptor the virtual device refuses gets a note: why, and what runs instead."""
    errors = [f for f in runnable_findings(root) if f.is_error]
    if errors:
        click.echo(
            f"note: {output} is for compiling only: `tilewright run --system-desc` refuses it "
            f"({errors[0]}); {RUN_HINT}",
            err=True,
        )


# --- read -----------------------------------------------------------------------------------


def _summary(root: SystemDescRoot) -> str:
    sd = root.system_desc
    arches = sorted({ARCH.keyword(c.arch) or "" for c in sd.chip_descs})
    revision = schema_revision(root.schema_hash)
    schema = f"tt-mlir {revision.commit}" if revision else "unknown schema"
    return (
        f"{sd.num_chips} chip(s) {'/'.join(arches) or '(none)'}, version {root.version}, {schema}"
    )


def _cell(f: Any, value: Any) -> str:
    """Short text of one ChipDesc value for the table view."""
    if f.text is Text.ARCH_ATTR:
        return ARCH.keyword(value) or str(value)
    if f.text is Text.DIMS:
        return f"{value.y}x{value.x}"
    if isinstance(value, tuple):
        return f"[{len(value)}]"
    return str(value)


def _list_text(f: Any, value: tuple[Any, ...]) -> str:
    if f.text is Text.DTYPE_LIST:
        return ", ".join(DATA_TYPE.keyword(t) or DATA_TYPE.fb_name(t) for t in value)
    if f.text is Text.VARG_LIST:
        return ", ".join(f"{t.y}x{t.x}" for t in value)
    return ", ".join(f"({d.y}, {d.x})" for d in value) or "(empty)"


def _table(root: SystemDescRoot, name: str) -> str:
    sd = root.system_desc
    lines = [
        f"{name}: {_summary(root)}",
        f"  schema_hash      {root.schema_hash}",
        f"  ttmlir_git_hash  {root.ttmlir_git_hash}",
        f"  product          {root.product_identifier}",
        "  cpus             "
        + ", ".join(f"{CPU_ROLE.keyword(c.role)} {c.target_triple}" for c in sd.cpu_descs),
        f"  chip_desc_indices {list(sd.chip_desc_indices)}",
        "  capabilities     "
        + ", ".join(
            CHIP_CAPABILITY.fb_name(c) if c in (0, 1) else str(int(c)) for c in sd.chip_capabilities
        ),
        "  chip_coords      "
        + ", ".join(f"{c.rack}x{c.shelf}x{c.y}x{c.x}" for c in sd.chip_coords),
        f"  chip_channels    {len(sd.chip_channels)}",
    ]
    lines += [
        f"    {c.device_id0} ({c.ethernet_core_coord0.y}, {c.ethernet_core_coord0.x}) <-> "
        f"{c.device_id1} ({c.ethernet_core_coord1.y}, {c.ethernet_core_coord1.x})"
        for c in sd.chip_channels
    ]
    chips: list[ChipDesc] = [sd.get_chip_desc(i) for i in range(sd.num_chips)]
    if not chips:
        lines.append("  (no chip descriptors)")
        return "\n".join(lines)
    width = max(len(f.name) for f in CHIP_DESC.fields) + 2
    lines.append(
        "  " + "field".ljust(width) + "".join(f"chip {i}".rjust(12) for i in range(len(chips)))
    )
    for f in CHIP_DESC.fields:
        cells = [_cell(f, getattr(c, f.name)) for c in chips]
        lines.append("  " + f.name.ljust(width) + "".join(cell.rjust(12) for cell in cells))
    for f in CHIP_DESC.fields:
        if isinstance(getattr(chips[0], f.name), tuple):
            groups: dict[tuple[Any, ...], list[int]] = {}
            for i, chip in enumerate(chips):
                groups.setdefault(getattr(chip, f.name), []).append(i)
            for value, positions in groups.items():
                lines.append(
                    f"  {f.name} (chips {', '.join(map(str, positions))}): {_list_text(f, value)}"
                )
    return "\n".join(lines)


_RENDER: dict[str, Callable[[SystemDescRoot, str], str]] = {
    "table": _table,
    "json": lambda root, name: to_json(root).rstrip("\n"),
    "mlir": lambda root, name: print_mlir_module(root).rstrip("\n"),
}


@sysdesc.command("read")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(tuple(_RENDER)),
    default="table",
    show_default=True,
    help="How to show the descriptor.",
)
@click.option("--strict", is_flag=True, help="Reject fields in unknown vtable slots (.ttsys).")
def read_cmd(file: str, fmt: str, strict: bool) -> None:
    """Show the descriptor in FILE (.ttsys, .json or .mlir)."""
    with _reported():
        root = read_system_desc(file, strict=strict)
        click.echo(_RENDER[fmt](root, Path(file).name))


# --- check ----------------------------------------------------------------------------------


@sysdesc.command("check")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--strict",
    is_flag=True,
    help="Unknown vtable slots and schema hashes are errors, not warnings.",
)
@click.option(
    "--mlir",
    "for_mlir",
    is_flag=True,
    help="Also require that the descriptor prints as #ttcore.system_desc text.",
)
@click.option(
    "--schema-hash",
    default=None,
    help="Target hash ('head', a tt-mlir commit or 64 hex digits); a mismatch warns, "
    "or fails with --strict.",
)
@click.option(
    "--compiler-only",
    is_flag=True,
    help="Only tt-mlir's rules (§11): skip the physical limits (rule 26) and what the "
    "virtual device needs (rule 27), i.e. do not promise that `tilewright run` accepts it.",
)
def check_cmd(
    file: str, strict: bool, for_mlir: bool, schema_hash: str | None, compiler_only: bool
) -> None:
    """Check FILE against every validation rule; print "OK ..." or fail with one line.

    By default this is exactly the check `tilewright run --system-desc FILE` and
    `ttnn.open_device(system_desc=FILE)` make: tt-mlir's rules, the architecture's
    physical limits and what the virtual device needs.
    """
    with _reported():
        source: Any
        if file_format(file) == "ttsys":
            source = read_descriptor_bytes(file)  # validate the container too (rules 1-5)
        else:
            source = read_system_desc(file)
            for_mlir = for_mlir or file_format(file) == "mlir"
        if compiler_only:
            findings = validate(source, strict=strict, for_mlir=for_mlir, schema_hash=schema_hash)
        else:
            findings = runnable_findings(
                source, strict=strict, for_mlir=for_mlir, schema_hash=schema_hash
            )
        errors = [f for f in findings if f.is_error]
        if errors:
            more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
            how = f"; {RUN_HINT} (or --compiler-only)" if errors[0].rule == 27 else ""
            _fail(f"{file}: {errors[0]}{more}{how}")
        for finding in findings:
            click.echo(f"warning: {finding}", err=True)
        root = source if isinstance(source, SystemDescRoot) else decode_with_findings(source)[0]
        click.echo(f"OK {file}: {_summary(root)}, {len(findings)} warning(s)")


# --- convert --------------------------------------------------------------------------------


@sysdesc.command("convert")
@click.argument("input_file", metavar="IN", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    help="Output file: .ttsys, .json or .mlir.",
)
@click.option(
    "--schema-hash",
    default=None,
    help="Hash to store: 'head', a tt-mlir commit or 64 hex digits "
    "(default: keep the input's; HEAD for .mlir input).",
)
@click.option(
    "--version",
    "version",
    default=None,
    metavar="X.Y.Z",
    help="tt-mlir version to store (default: keep; HEAD's for .mlir input).",
)
@click.option("--git-hash", default=None, help="ttmlir_git_hash to store (same defaults).")
@click.option("--product", default=None, help="product_identifier to store.")
def convert_cmd(
    input_file: str,
    output: str,
    schema_hash: str | None,
    version: str | None,
    git_hash: str | None,
    product: str | None,
) -> None:
    """Convert IN to OUTPUT; formats by extension (.ttsys, .json, .mlir).

    .ttsys -> .json -> .ttsys reproduces the bytes.  .mlir carries no envelope (version,
    schema hash, git hash): it is dropped when writing .mlir and taken from the options
    (default tt-mlir HEAD) when reading it.
    """
    with _reported():
        file_format(output)  # fail before reading if the output extension is wrong
        root = read_system_desc(input_file)
        if file_format(input_file) == "mlir":
            root = make_root(
                root.system_desc, schema_hash=schema_hash, version=version, ttmlir_git_hash=git_hash
            )
        else:
            root = replace(
                root,
                schema_hash=resolve_schema_hash(schema_hash) if schema_hash else root.schema_hash,
                version=Version.parse(version) if version else root.version,
                ttmlir_git_hash=git_hash or root.ttmlir_git_hash,
            )
        if product is not None:
            root = replace(root, product_identifier=product)
        write_system_desc(root, output)
        click.echo(f"wrote {output}: {_summary(root)}")


# --- query ----------------------------------------------------------------------------------


@sysdesc.command("query")
@click.option("--board", default=None, help="Board preset of the virtual system (default n150).")
@click.option(
    "--system-desc",
    "system_desc",
    type=click.Path(dir_okay=False),
    default=None,
    help="Build the virtual system from this descriptor instead of a preset.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(tuple(_RENDER)),
    default="table",
    show_default=True,
    help="How to show the descriptor.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also save it (format by extension: .ttsys, .json, .mlir), like `ttrt query --save-artifacts`.",
)
def query_cmd(board: str | None, system_desc: str | None, fmt: str, output: str | None) -> None:
    """Open the virtual device(s) and print their system descriptor (like `ttrt query`)."""
    with _reported():
        if system_desc is not None:
            root = read_system_desc(system_desc)
            name = Path(system_desc).name
        else:
            name = board or "n150"
            root = board_preset(name)
        mesh = Mesh(root.system_desc)
        try:
            # What the opened chips report, in chip-position order (the device is built from
            # the descriptor, so an unusable one fails here rather than at a program's launch).
            chips = tuple(dev.chip_desc for dev in mesh.devices)
            indices = tuple(range(len(chips)))
            sd = replace(root.system_desc, chip_descs=chips, chip_desc_indices=indices)
            queried = replace(root, system_desc=sd)
        finally:
            mesh.close()
        click.echo(_RENDER[fmt](queried, f"virtual {name}"))
        if output is not None:
            write_system_desc(queried, output)
