"""The precompiled kernel prelude (native/pch.py): built once, used, invalidated, repaired,
safe under concurrent builders."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tilewright import native
from tilewright.compiler.backend.build import INCLUDE_DIR as SUPPORT_DIR
from tilewright.compiler.backend.build import CompiledKernel
from tilewright.native import build as nbuild
from tilewright.native import pch, toolchain
from tilewright.native.cachefs import file_hash
from tilewright.native.kernels import kernel_source

ROOT = Path(__file__).resolve().parents[2]
KERNEL_API_DIRS = (pch.KERNEL_STD.root, SUPPORT_DIR)  # the kernel API, ttlang/support.h

pytestmark = pytest.mark.skipif(
    not pch.is_gcc(native.OPTIONS.resolved_compiler()), reason="PCH lookup is GCC's"
)


def compute_source(value: int) -> str:
    """A compute kernel's translation unit (``value`` makes each one a new object)."""
    body = f"namespace NAMESPACE {{ void MAIN {{ volatile int x = {value}; (void)x; }} }}"
    return kernel_source(None, "compute", text=body)


def build(source: str, cache: Path):
    opts = dataclasses.replace(native.OPTIONS, cache_dir=str(cache))
    return native.build_shared_object(source, options=opts, prelude=pch.KERNEL_STD)


def new_process() -> None:
    """Forget what this process verified: only the on-disk cache is left."""
    nbuild._VERIFIED.clear()
    pch._VERIFIED.clear()


@pytest.fixture
def header_builds(monkeypatch):
    """The PCH compiles run from now on (their commands)."""
    runs: list[list[str]] = []
    real = toolchain.run_compiler

    def spy(command, cwd=None, timeout=None):
        if "c++-header" in command:
            runs.append(command)
        return real(command, cwd, timeout)

    monkeypatch.setattr(toolchain, "run_compiler", spy)
    return runs


def pch_file(cache: Path, prelude: pch.Prelude = pch.KERNEL_STD) -> Path:
    (found,) = (cache / "pch").glob(f"*/{prelude.name}.gch")
    return found


def used_pch(result, source: str, tmp_path: Path) -> str:
    """The first file the compiler opens for ``result``'s command (``-H``): '! <gch>'
    when it loads the PCH, the header itself when it parses it."""
    src = tmp_path / "again.cpp"
    src.write_text(source)
    cmd = list(result.command)
    flags = [f for f in cmd[1 : cmd.index("-MMD")] if f != "-shared"]
    proc = subprocess.run(
        [cmd[0], *flags, "-H", "-fsyntax-only", str(src)],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, LC_ALL="C"),
    )
    return proc.stderr.splitlines()[0]


def std_includes(path: Path) -> set[str]:
    return set(re.findall(r"^\s*#include <([\w/.]+)>", path.read_text(), re.M))


def api_std_includes(root: Path, skip: Path) -> dict[str, str]:
    """Standard header -> a header under ``root`` that includes it."""
    used: dict[str, str] = {}
    for header in sorted(root.rglob("*.h")):
        if header != skip:
            for name in std_includes(header):
                used.setdefault(name, str(header.relative_to(root)))
    return used


def test_the_prelude_lists_exactly_the_standard_headers_its_kernels_include():
    """Every kernel -- C++ and compiled from TT-Lang (ttlang/support.h) -- finds all its
    standard headers in the one precompiled prelude."""
    prelude = pch.KERNEL_STD
    used: dict[str, str] = {}
    for root in KERNEL_API_DIRS:
        used.update(api_std_includes(root, prelude.path))
    used.pop("tilewright/kernel_std.h", None)
    listed = std_includes(prelude.path)
    missing = {name: where for name, where in used.items() if name not in listed}
    assert not missing, (
        f"included by the kernel API but not precompiled in {prelude.name}: {missing}"
    )
    assert listed <= set(used) | std_includes(pch.KERNEL_STD.path), (
        f"{prelude.name} lists headers no kernel API header includes: {listed - set(used)}"
    )


def test_pch_is_built_once_used_and_reused_by_a_new_process(tmp_path, header_builds):
    cache = tmp_path / "cache"
    first = build(compute_source(1), cache)
    assert len(header_builds) == 1
    gch = pch_file(cache)
    manifest = json.loads((gch.parents[1] / "manifest.json").read_text())
    assert manifest["sha256"] == file_hash(str(gch))
    assert any(dep.endswith("/type_traits") for dep, _h in manifest["deps"])  # system headers too
    assert used_pch(first, compute_source(1), tmp_path) == f"! {gch}"
    build(compute_source(2), cache)  # another kernel, same process
    new_process()
    build(compute_source(3), cache)  # another kernel, a new process
    assert len(header_builds) == 1
    assert not list((cache / "pch").glob("build-*"))  # no temporary directory left


def test_pch_and_objects_are_keyed_by_the_flags(tmp_path, header_builds):
    cache = tmp_path / "cache"
    a = build(compute_source(1), cache)
    opts = dataclasses.replace(native.OPTIONS, cache_dir=str(cache), opt_level="-O2")
    b = native.build_shared_object(compute_source(1), options=opts, prelude=pch.KERNEL_STD)
    assert len(header_builds) == 2 and a.key != b.key
    assert used_pch(b, compute_source(1), tmp_path).startswith("! ")
    assert len(list((cache / "pch").glob(f"*/{pch.KERNEL_STD.name}.gch"))) == 2


@pytest.fixture
def own_prelude(tmp_path):
    """A prelude of the test's own (a standard header and a header of its own, so that a
    change to a header the PCH was built from shows)."""
    root = tmp_path / "include"
    (root / "tw_test").mkdir(parents=True)
    (root / "tw_test" / "prelude.h").write_text(
        '#pragma once\n#include <cstdint>\n#include "extra.h"\n'
    )
    (root / "tw_test" / "extra.h").write_text("#pragma once\nconstexpr int tw_extra = 1;\n")
    return pch.Prelude(root, "tw_test/prelude.h")


def own_source(prelude: pch.Prelude, value: int) -> str:
    return (
        f'{prelude.include_line}\n#include "tilewright/glue.h"\n'
        "TW_EXPORT int32_t tw_entry(const int64_t*, int64_t* r) {\n"
        f"    TW_ENTRY_BEGIN\n    *r = tw_extra + {value};\n    TW_ENTRY_END\n}}\n"
    )


def test_an_edited_prelude_or_header_it_reads_rebuilds_the_pch(
    tmp_path, own_prelude, header_builds
):
    cache = tmp_path / "cache"
    opts = dataclasses.replace(native.OPTIONS, cache_dir=str(cache))

    def build_own(value: int):
        return native.build_shared_object(
            own_source(own_prelude, value),
            include_paths=[own_prelude.root],
            options=opts,
            prelude=own_prelude,
        )

    first = build_own(1)
    assert len(header_builds) == 1
    assert (
        used_pch(first, own_source(own_prelude, 1), tmp_path) == f"! {pch_file(cache, own_prelude)}"
    )
    # A header the PCH was built from changes (as a library upgrade would): rebuilt in place.
    (own_prelude.root / "tw_test" / "extra.h").write_text(
        "#pragma once\nconstexpr int tw_extra = 2;\n"
    )
    new_process()
    second = build_own(2)
    assert len(header_builds) == 2
    assert (
        used_pch(second, own_source(own_prelude, 2), tmp_path)
        == f"! {pch_file(cache, own_prelude)}"
    )
    # The prelude itself changes: a new key, a new PCH and new objects.
    own_prelude.path.write_text(own_prelude.path.read_text() + "#include <cstddef>\n")
    new_process()
    third = build_own(1)
    assert len(header_builds) == 3 and third.key != first.key and not third.cached
    assert len(list((cache / "pch").glob(f"*/{own_prelude.name}.gch"))) == 2


def test_compiled_kernels_load_the_kernel_api_prelude_precompiled(tmp_path, header_builds):
    """A kernel compiled from TT-Lang starts with the kernel API's prelude, and
    ttlang/support.h adds no standard header to parse (its float repr and divmod are in the
    runtime): the PCH is used and is the only prelude built."""
    assert CompiledKernel.prelude is pch.KERNEL_STD
    body = '#include "ttlang/support.h"\nvoid kernel_main() { (void)ttlang::PyFloat(0.1); }'
    text = kernel_source(None, "data_movement", text=body)
    cache = tmp_path / "cache"
    opts = dataclasses.replace(native.OPTIONS, cache_dir=str(cache))
    result = native.build_shared_object(
        text, include_paths=[SUPPORT_DIR], options=opts, prelude=pch.KERNEL_STD
    )
    assert used_pch(result, text, tmp_path) == f"! {pch_file(cache)}"
    assert len(header_builds) == 1


@pytest.mark.parametrize("damage", ["truncated", "bit flip", "no manifest", "bad manifest"])
def test_a_damaged_pch_is_rebuilt_not_a_crash(tmp_path, header_builds, damage):
    cache = tmp_path / "cache"
    build(compute_source(1), cache)
    gch = pch_file(cache)
    manifest = gch.parents[1] / "manifest.json"
    data = gch.read_bytes()
    if damage == "truncated":  # a copy cut short, a full disk
        gch.write_bytes(data[: len(data) // 2])
    elif damage == "bit flip":
        mid = len(data) // 2
        gch.write_bytes(data[:mid] + bytes([data[mid] ^ 0x10]) + data[mid + 1 :])
    elif damage == "no manifest":  # killed between the two renames
        manifest.unlink()
    else:
        manifest.write_text('{"sha256": 3}')
    new_process()
    result = build(compute_source(2), cache)  # needs the PCH: rebuilt first
    assert len(header_builds) == 2 and not result.cached
    assert json.loads(manifest.read_text())["sha256"] == file_hash(str(gch))
    assert used_pch(result, compute_source(2), tmp_path) == f"! {gch}"


def test_threads_of_one_launch_build_the_pch_once(tmp_path, header_builds):
    cache = tmp_path / "cache"
    results: list = []
    threads = [
        threading.Thread(target=lambda v=v: results.append(build(compute_source(v), cache)))
        for v in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3 and len(header_builds) == 1


_BUILDER = """
import dataclasses, sys
from tilewright import native
from tilewright.native import pch, runtime
from tilewright.native.kernels import kernel_source
runtime.library()  # the session's runtime (XDG_CACHE_HOME), not a new one
opts = dataclasses.replace(native.OPTIONS, cache_dir=sys.argv[1])
for v in range(int(sys.argv[2]), int(sys.argv[2]) + 2):
    body = f"namespace NAMESPACE {{ void MAIN {{ volatile int x = {v}; (void)x; }} }}"
    r = native.build_shared_object(kernel_source(None, "compute", text=body), options=opts,
                                   prelude=pch.KERNEL_STD)
    print(r.path)
"""


def test_concurrent_processes_share_one_cache(tmp_path, native_cache):
    """Processes starting together on an empty cache each build the PCH (or find the
    other's) and their kernels; every PCH they leave is whole and vouched for."""
    cache = tmp_path / "cache"
    env = dict(os.environ, XDG_CACHE_HOME=str(native_cache), PYTHONPATH=str(ROOT))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _BUILDER, str(cache), str(10 * i)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(3)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [err for _out, err in outs]
    assert all(len(out.split()) == 2 for out, _err in outs)
    gch = pch_file(cache)
    manifest = json.loads((gch.parents[1] / "manifest.json").read_text())
    assert manifest["sha256"] == file_hash(str(gch))
    assert not list((cache / "pch").glob("build-*"))


def test_a_compiler_other_than_gcc_builds_without_a_pch(tmp_path, header_builds):
    """clang finds a ``.gch`` only for ``-include``: no PCH directory, the header parsed."""
    fake = tmp_path / "clang++"
    gxx = native.OPTIONS.resolved_compiler()
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then echo "clang version 16.0.6"; exit 0; fi\n'
        f'exec {gxx} "$@"\n'
    )
    fake.chmod(0o755)
    opts = dataclasses.replace(
        native.OPTIONS, cache_dir=str(tmp_path / "cache"), compiler=str(fake)
    )
    result = native.build_shared_object(compute_source(1), options=opts, prelude=pch.KERNEL_STD)
    assert not header_builds and not (tmp_path / "cache" / "pch").exists()
    assert not any("/pch/" in flag for flag in result.command)
    assert used_pch(result, compute_source(1), tmp_path).endswith(pch.KERNEL_STD.name)


@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs binutils' objdump")
def test_the_pch_leaves_the_machine_code_unchanged(tmp_path):
    """The same kernel built with its prelude precompiled and parsed: the same instructions."""
    kernel = ROOT / "tests" / "native" / "kernels" / "reader_unary.cpp"
    prelude = pch.KERNEL_STD
    text = kernel_source(str(kernel), "data_movement", (1, 2048), noc=1, prelude=prelude)
    opts = dataclasses.replace(native.OPTIONS, cache_dir=str(tmp_path / "cache"))
    paths = [SUPPORT_DIR, kernel.parent]
    fast = native.build_shared_object(text, include_paths=paths, options=opts, prelude=prelude)
    plain = native.build_shared_object(text, include_paths=paths, options=opts)
    assert used_pch(fast, text, tmp_path).startswith("! ")
    assert not any("/pch/" in flag for flag in plain.command)

    def code(path: str) -> list[str]:
        out = subprocess.run(
            ["objdump", "-d", "-j", ".text", path], capture_output=True, text=True, check=True
        ).stdout
        return out.splitlines()[2:]  # after the line naming the file

    assert code(fast.path) == code(plain.path) and len(code(fast.path)) > 20


def test_two_builders_finishing_together_leave_one_pch_with_its_own_manifest(tmp_path):
    """The PCH and its manifest go into place as one directory: a second builder finding
    the first's whole PCH keeps it (before, each replaced the two files one by one, and
    one's PCH could end up beside the other's manifest)."""
    cache = tmp_path / "cache"
    build(compute_source(1), cache)
    gch = pch_file(cache)
    where = gch.parents[1]
    first = file_hash(str(gch))
    staged = tmp_path / "staged"
    (staged / gch.relative_to(where)).parent.mkdir(parents=True)
    (staged / gch.relative_to(where)).write_bytes(b"another build of the same header")
    (staged / "manifest.json").write_text('{"sha256": "0", "deps": []}')
    files = pch._install(staged, where, pch.KERNEL_STD.name, [])
    assert files[0][0] == str(gch) and file_hash(str(gch)) == first
    assert json.loads((where / "manifest.json").read_text())["sha256"] == first


def test_a_damaged_pch_in_the_way_is_moved_aside_for_the_new_one(tmp_path):
    cache = tmp_path / "cache"
    build(compute_source(1), cache)
    gch = pch_file(cache)
    where = gch.parents[1]
    gch.write_bytes(gch.read_bytes()[:1000])  # truncated: no manifest vouches for it now
    new_process()
    build(compute_source(2), cache)
    manifest = json.loads((where / "manifest.json").read_text())
    assert manifest["sha256"] == file_hash(str(gch)) and gch.stat().st_size > 1000
    assert not [p for p in (cache / "pch").iterdir() if p.name.startswith("build-")]


def test_prepare_builds_the_prelude_so_the_first_kernel_build_only_compiles_itself(
    tmp_path, header_builds
):
    cache = tmp_path / "cache"
    opts = dataclasses.replace(native.OPTIONS, cache_dir=str(cache))
    nbuild.prepare((pch.KERNEL_STD,), opts)
    assert len(header_builds) == 1 and pch_file(cache).is_file()
    result = build(compute_source(3), cache)
    assert len(header_builds) == 1 and not result.cached
    nbuild.prepare((pch.KERNEL_STD,), opts)  # built: nothing to do
    assert len(header_builds) == 1
