"""The native build cache under damage: objects verified before loading, manifests
confined to their bucket, header edits seen by a live process, killed builds cleaned up,
unusable cache folders reported.

Before, one bit-flipped or truncated cached object broke every later run (an ld.so
assertion, exit 127), a crafted manifest loaded any shared object, a header edited while
a process ran was ignored by that process, and an unusable cache gave a pathlib traceback.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tilewright import native
from tilewright.errors import NativeBuildError
from tilewright.native import build as nbuild
from tilewright.native import cachefs
from tilewright.native import runtime as nruntime
from tilewright.native.cachefs import STALE_SECONDS

ROOT = Path(__file__).resolve().parents[2]


def source_including(header: str) -> str:
    return (
        '#include "tilewright/glue.h"\n'
        f'#include "{header}"\n'
        "TW_EXPORT int32_t tw_entry(const int64_t*, int64_t* r) {\n"
        "    TW_ENTRY_BEGIN\n    *r = value();\n    TW_ENTRY_END\n}\n"
    )


def call_entry(path: str) -> int:
    lib = ctypes.CDLL(path)
    result = ctypes.c_int64(0)
    argv = (ctypes.c_int64 * 1)()
    assert lib.tw_entry(argv, ctypes.byref(result)) == 0
    return result.value


@pytest.fixture
def cache(tmp_path):
    """A private cache directory (the runtime library stays the session's)."""
    previous = native.OPTIONS.cache_dir
    native.configure(cache_dir=str(tmp_path / "cache"))
    nbuild._VERIFIED.clear()
    yield tmp_path / "cache"
    native.configure(cache_dir=previous)
    nbuild._VERIFIED.clear()


def _header(tmp_path, value: int, name: str = "value.hpp") -> Path:
    path = tmp_path / name
    path.write_text(f"#pragma once\ninline int64_t value() {{ return {value}; }}\n")
    return path


def _manifest(result) -> Path:
    return Path(result.path).parent / f"{result.key}.json"


@pytest.mark.parametrize("damage", ["bit flip", "truncation", "emptied", "removed"])
def test_a_damaged_cached_object_is_rebuilt_not_loaded(tmp_path, cache, damage):
    _header(tmp_path, 41)
    src = source_including("value.hpp")
    first = native.build_shared_object(src, include_paths=[tmp_path])
    obj = Path(first.path)
    data = bytearray(obj.read_bytes())
    if damage == "bit flip":
        data[len(data) // 2] ^= 0x10
        obj.write_bytes(bytes(data))
    elif damage == "truncation":
        obj.write_bytes(bytes(data[: len(data) // 3]))
    elif damage == "emptied":
        obj.write_bytes(b"")
    else:
        obj.unlink()
    for new_process in (False, True):  # in this process (stat changed) and in a fresh one
        if new_process:  # damaged again on disk (a new file: the loaded one stays mapped)
            garbage = obj.with_suffix(".tmp")
            garbage.write_bytes(b"\x7fELF garbage")
            os.replace(garbage, obj)
            nbuild._VERIFIED.clear()
            cachefs.FILE_HASHES.clear()
        again = native.build_shared_object(src, include_paths=[tmp_path])
        assert not again.cached and again.path == first.path
        assert call_entry(again.path) == 41


EVIL = (
    "#include <cstdio>\n__attribute__((constructor)) static void evil() {{ std::FILE* f = "
    'std::fopen("{marker}", "w"); if (f) std::fclose(f); }}\n'
)


@pytest.mark.parametrize("where", ["absolute path", "parent directory", "symlink", "bad hash"])
def test_a_crafted_manifest_never_loads_an_object_outside_its_bucket(tmp_path, cache, where):
    marker = tmp_path / "evil-ran"
    evil = native.build_shared_object(EVIL.format(marker=marker))  # a real shared object
    assert not marker.exists()
    _header(tmp_path, 7)
    src = source_including("value.hpp")
    good = native.build_shared_object(src, include_paths=[tmp_path])
    manifest_path = _manifest(good)
    manifest = json.loads(manifest_path.read_text())
    outside = tmp_path / "outside.so"
    shutil.copy(evil.path, outside)
    if where == "absolute path":
        manifest["object"] = str(outside)
    elif where == "parent directory":
        manifest["object"] = "../../outside.so"
        shutil.copy(evil.path, cache.parent / "outside.so")
    elif where == "symlink":
        os.unlink(good.path)
        os.symlink(outside, good.path)
        manifest["sha256"] = nbuild._file_hash(str(outside))  # the link's target, hashed
    else:
        shutil.copy(evil.path, good.path)  # the right name, someone else's content
    manifest_path.write_text(json.dumps(manifest))
    nbuild._VERIFIED.clear()
    again = native.build_shared_object(src, include_paths=[tmp_path])
    assert not again.cached
    assert Path(again.path).parent == Path(good.path).parent and not Path(again.path).is_symlink()
    assert call_entry(again.path) == 7
    assert not marker.exists()  # the evil object's constructor never ran


@pytest.mark.parametrize("manifest", ["{", "[1, 2]", '{"object": 3}', "x" * (2 << 20), ""])
def test_damaged_manifests_are_rebuilt(tmp_path, cache, manifest):
    _header(tmp_path, 5)
    src = source_including("value.hpp")
    first = native.build_shared_object(src, include_paths=[tmp_path])
    _manifest(first).write_text(manifest)
    nbuild._VERIFIED.clear()
    again = native.build_shared_object(src, include_paths=[tmp_path])
    assert not again.cached and call_entry(again.path) == 5


def test_a_manifest_naming_a_device_as_header_is_not_read(tmp_path, cache):
    _header(tmp_path, 3)
    src = source_including("value.hpp")
    first = native.build_shared_object(src, include_paths=[tmp_path])
    manifest = json.loads(_manifest(first).read_text())
    manifest["deps"].append(["/dev/zero", "0" * 64])  # reading it would never end
    _manifest(first).write_text(json.dumps(manifest))
    nbuild._VERIFIED.clear()
    start = time.monotonic()
    again = native.build_shared_object(src, include_paths=[tmp_path])
    assert time.monotonic() - start < 60 and not again.cached


def test_a_header_edited_while_the_process_runs_rebuilds(tmp_path, cache):
    header = _header(tmp_path, 1)
    src = source_including("value.hpp")
    first = native.build_shared_object(src, include_paths=[tmp_path])
    assert native.build_shared_object(src, include_paths=[tmp_path]).cached  # verified: reused
    assert nbuild.is_current(first)
    time.sleep(0.01)  # a new mtime even on coarse clocks
    header.write_text("#pragma once\ninline int64_t value() { return 2; }\n")
    assert not nbuild.is_current(first)
    again = native.build_shared_object(src, include_paths=[tmp_path])  # no _VERIFIED.clear()
    assert not again.cached and again.path != first.path and call_entry(again.path) == 2


def test_a_native_kernel_sees_its_header_edited_between_launches(tmp_path, cache):
    import torch

    from tilewright import ttnn
    from tilewright.device.coords import CoreCoord
    from tilewright.device.program import Program, ReaderDataMovementConfig
    from tilewright.native.kernels import NativeKernel

    header = tmp_path / "answer.h"
    header.write_text("#pragma once\nconstexpr uint32_t kAnswer = 11;\n")
    kernel = tmp_path / "writer.cpp"
    kernel.write_text(
        textwrap.dedent(
            """\
            #include <cstdint>
            #include "answer.h"
            void kernel_main() {
                uint32_t addr = get_arg_val<uint32_t>(0);
                *reinterpret_cast<volatile uint32_t*>(addr) = kAnswer;
                noc_async_write(addr, get_noc_addr_from_bank_id<true>(0, get_arg_val<uint32_t>(1)), 4);
                noc_async_write_barrier();
            }
            """
        )
    )
    device = ttnn.open_device(device_id=0, board="n150")
    try:
        out = ttnn.from_torch(torch.zeros(1, 8, dtype=torch.int32), dtype=ttnn.int32, device=device)
        nk = NativeKernel(str(kernel), include_paths=[str(tmp_path)])
        scratch = device.l1_allocator.allocate(64)

        def launch() -> int:
            program = Program("answer")
            k = program.create_kernel(nk, CoreCoord(0, 0), ReaderDataMovementConfig())
            program.set_runtime_args(k, CoreCoord(0, 0), [scratch, out.buffer_address()])
            device.command_queue.enqueue_program(program)
            return int(ttnn.to_torch(out).reshape(-1)[0])

        assert launch() == 11
        time.sleep(0.01)
        header.write_text("#pragma once\nconstexpr uint32_t kAnswer = 12;\n")
        assert launch() == 12
    finally:
        ttnn.close_device(device)


SLOW_CXX = """#!/bin/sh
case "$*" in *extern_call.cpp*) touch "{started}"; sleep 30;; esac
exec "{cxx}" "$@"
"""  # slow only for the object (not for --version, nor the runtime library it needs first)


def test_a_build_killed_half_way_leaves_nothing_that_breaks_later_runs(tmp_path, cache):
    cxx = native.BuildOptions().resolved_compiler()
    started = tmp_path / "started"
    wrapper = tmp_path / "slow-c++"
    wrapper.write_text(SLOW_CXX.format(cxx=cxx, started=started))
    wrapper.chmod(0o755)
    _header(tmp_path, 9)
    src = source_including("value.hpp")
    script = textwrap.dedent(
        f"""\
        from tilewright import native
        native.configure(cache_dir={str(cache)!r}, compiler={str(wrapper)!r})
        native.build_shared_object({src!r}, include_paths=[{str(tmp_path)!r}])
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, start_new_session=True)
    try:
        deadline = time.monotonic() + 240  # (the wrapper's runtime library is built first)
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists()
        os.killpg(proc.pid, signal.SIGKILL)  # the build and its compiler, mid-compile
        proc.wait()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    debris = list(cache.glob("*/build-*"))
    assert debris and not list(cache.glob("*/*.json")) and not list(cache.glob("*/*.so"))
    old = time.time() - STALE_SECONDS - 60
    for d in debris:
        os.utime(d, (old, old))
    nbuild._CLEANED.clear()  # a new process
    result = native.build_shared_object(src, include_paths=[tmp_path])
    assert call_entry(result.path) == 9
    assert not any(d.exists() for d in debris)  # the stale temporary directories are gone


@pytest.mark.parametrize("kind", ["file in the way", "parent is a file", "not permitted"])
def test_an_unusable_cache_directory_is_a_build_error_naming_it(tmp_path, kind):
    if kind == "file in the way":
        path = tmp_path / "cache"
        path.write_text("not a directory")
    elif kind == "parent is a file":
        (tmp_path / "blocker").write_text("x")
        path = tmp_path / "blocker" / "cache"
    else:
        path = Path("/sys/tilewright-cache")  # refused even to root
    previous = native.OPTIONS.cache_dir
    native.configure(cache_dir=str(path))
    try:
        with pytest.raises(NativeBuildError) as info:
            native.build_shared_object(source_including("no-such.hpp"))
    finally:
        native.configure(cache_dir=previous)
    err = info.value
    assert err.rule == "build-environment"
    assert "the native build cache cannot be used" in err.message and str(path) in err.message
    assert "XDG_CACHE_HOME" in (err.hint or "")


# -- the runtime library's own cache ------------------------------------------------------------


def test_the_runtime_library_cache_is_verified_and_rebuilt(tmp_path):
    compiler = native.OPTIONS.resolved_compiler()
    loaded = nruntime.library()  # this process's runtime (its build key is the same)
    cache = tmp_path / "cache"
    copy = cache / "runtime" / loaded.directory.name
    shutil.copytree(loaded.directory, copy)
    assert nruntime._build(compiler, cache) == copy / loaded.path.name  # intact: reused
    stale = cache / "runtime" / "twrt-killed"
    stale.mkdir()
    old = time.time() - STALE_SECONDS - 60
    os.utime(stale, (old, old))
    library = copy / loaded.path.name
    data = bytearray(library.read_bytes())
    data[len(data) // 2] ^= 0x01
    library.write_bytes(bytes(data))
    rebuilt = nruntime._build(compiler, cache)  # damaged: built again (a few seconds)
    assert rebuilt == library and nruntime._intact(rebuilt, copy / f"{library.stem}.sha256")
    assert not stale.exists()
    assert not [p for p in (cache / "runtime").iterdir() if p.name.startswith("twrt-")]


@pytest.mark.parametrize("kind", ["file in the way", "not permitted"])
def test_an_unusable_runtime_cache_is_a_build_error_naming_it(tmp_path, kind):
    compiler = native.OPTIONS.resolved_compiler()
    if kind == "file in the way":
        cache = tmp_path / "cache"
        cache.mkdir()
        (cache / "runtime").write_text("x")
    else:
        cache = Path("/sys/tilewright-cache")
    with pytest.raises(NativeBuildError) as info:
        nruntime._build(compiler, cache)
    assert info.value.rule == "build-environment"
    assert "the native runtime's build cache cannot be used" in info.value.message
    assert str(cache / "runtime") in info.value.message
