"""Build an emitted kernel with strict warnings: the translation unit the native engine
compiles (``native.kernels.kernel_source``) through the project's C++ compiler
(``native.toolchain``), ``-fsyntax-only -Wall -Wextra -Werror``.  The tt-metal API
emulation headers are system headers: only the generated code is held to the warnings."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tilewright.compiler.backend.build import INCLUDE_DIR
from tilewright.device.ops.numerics import FIDELITY_NAMES
from tilewright.native import toolchain
from tilewright.native.kernels import kernel_source
from tilewright.native.runtime import generated_dir
from tilewright.native.toolchain import INCLUDE_DIR as API_DIR

__all__ = ["STRICT", "strict_build", "strict_build_emitted", "strict_build_kernel"]

STRICT = ("-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Werror")

_FIDELITY = {name: value for value, name in FIDELITY_NAMES.items()}  # numerics: one list


def strict_build(unit: Path, include_paths=()) -> subprocess.CompletedProcess:
    """Compile the translation unit ``unit``; the completed process (stderr: the warnings)."""
    cmd = [
        toolchain.OPTIONS.resolved_compiler(), *STRICT,
        "-isystem", str(API_DIR), "-isystem", str(generated_dir()), f"-I{INCLUDE_DIR}",
        *(f"-I{p}" for p in include_paths), str(unit),
    ]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True)


def strict_build_kernel(tmp_path: Path, name: str, k) -> subprocess.CompletedProcess:
    """Build one compiled kernel ``k`` (a ``CompiledKernel``) from its emitted C++."""
    from tilewright.compiler.backend.emit import emit_kernel

    unit = tmp_path / f"{name}.cpp"
    unit.write_text(kernel_source(None, k.kind, k.compile_args, text=emit_kernel(k)))
    return strict_build(unit, k.include_paths)


def strict_build_emitted(folder: Path, kernel: dict) -> subprocess.CompletedProcess:
    """Build one kernel of a ``tilewright emit`` folder (``kernel``: its ``program.json``
    entry) as the rerun builds it: the folder's own ``ttlang/support.h`` and headers first."""
    source = folder / kernel["source"]
    compute = kernel.get("compute")
    config = (
        (_FIDELITY[compute["math_fidelity"]], False, bool(compute["fp32_dest_acc_en"]))
        if compute
        else (4, False, False)
    )
    unit = folder / f"{source.stem}.strict.cc"
    unit.write_text(
        kernel_source(
            str(source),
            kernel["kind"],
            kernel["compile_args"],
            noc=kernel.get("noc", 0),
            compute=config,
        )
    )
    try:
        return strict_build(unit, [folder, *kernel["include_paths"]])
    finally:
        unit.unlink()
