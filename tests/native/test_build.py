"""The JIT build cache: keys, header invalidation, XDG location, failure reports."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from tilewright import native
from tilewright.errors import NativeBuildError, SourceLoc
from tilewright.native import build as nbuild
from tilewright.native.cachefs import parse_deps


def source_including(header: str) -> str:
    return (
        '#include "tilewright/glue.h"\n'
        f'#include "{header}"\n'
        "TW_EXPORT int32_t tw_entry(const int64_t*, int64_t* r) {\n"
        "    TW_ENTRY_BEGIN\n    *r = value();\n    TW_ENTRY_END\n}\n"
    )


def call_entry(path: str) -> int:
    import ctypes

    lib = ctypes.CDLL(path)
    result = ctypes.c_int64(0)
    argv = (ctypes.c_int64 * 1)()
    assert lib.tw_entry(argv, ctypes.byref(result)) == 0
    return result.value


def test_second_build_is_a_cache_hit_and_header_edits_rebuild(tmp_path):
    header = tmp_path / "value.hpp"
    header.write_text("#pragma once\ninline int64_t value() { return 41; }\n")
    src = source_including("value.hpp")
    first = native.build_shared_object(src, include_paths=[tmp_path])
    assert not first.cached and call_entry(first.path) == 41
    nbuild._VERIFIED.clear()  # a new process: only the on-disk cache
    second = native.build_shared_object(src, include_paths=[tmp_path])
    assert second.cached and second.path == first.path
    header.write_text("#pragma once\ninline int64_t value() { return 42; }\n")
    nbuild._VERIFIED.clear()
    third = native.build_shared_object(src, include_paths=[tmp_path])
    assert not third.cached and third.path != first.path and call_entry(third.path) == 42


def test_flags_and_include_paths_are_part_of_the_key(tmp_path):
    (tmp_path / "value.hpp").write_text("#pragma once\ninline int64_t value() { return 7; }\n")
    src = source_including("value.hpp")
    a = native.build_shared_object(src, include_paths=[tmp_path])
    b = native.build_shared_object(
        src, include_paths=[tmp_path], options=dataclasses.replace(native.OPTIONS, opt_level="-O2")
    )
    assert a.key != b.key


def test_cache_dir_follows_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    opts = native.BuildOptions()
    assert opts.resolved_cache_dir() == tmp_path / "xdg" / "tilewright" / "native"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert str(native.BuildOptions().resolved_cache_dir()).endswith(
        os.path.join(".cache", "tilewright", "native")
    )
    assert native.BuildOptions(cache_dir="/x").resolved_cache_dir().as_posix() == "/x"


def test_build_error_has_compiler_messages_source_and_location(tmp_path):
    src = '#include "tilewright/glue.h"\nint broken( { return 0; }\n'
    loc = SourceLoc(str(tmp_path / "prog.py"), 12)
    with pytest.raises(NativeBuildError) as info:
        native.build_shared_object(src, what="a test unit", loc=loc)
    err = info.value
    assert err.message.startswith("C++ build of a test unit failed (compiler exit status")
    assert "error:" in err.compiler_output
    assert "   2 | int broken( { return 0; }" in err.message
    assert err.loc == loc
    kept = err.message.split("kept at ", 1)[1].split(")", 1)[0]
    assert Path(kept).read_text() == src


def test_undefined_symbol_is_named(tmp_path):
    src = (
        '#include "tilewright/glue.h"\nint64_t missing_value(int);\n'
        "TW_EXPORT int32_t tw_entry(const int64_t*, int64_t* r) { *r = missing_value(3); return 0; }\n"
    )
    with pytest.raises(NativeBuildError, match=r"undefined symbol\(s\) missing_value\(int\)"):
        native.build_shared_object(src)


def test_missing_compiler_is_reported(monkeypatch):
    opts = native.BuildOptions(compiler="/nonexistent/c++")
    with pytest.raises(NativeBuildError, match="cannot run the C\\+\\+ compiler"):
        native.build_shared_object("int x;", options=opts)


def test_dependency_file_parsing():
    text = "out.so: /a/src.cpp /inc/a.h \\\n /inc/b\\ c.h /inc/a.h\n"
    assert parse_deps(text, "/a/src.cpp") == ["/inc/a.h", "/inc/b c.h"]


def test_one_runtime_per_process_across_cache_directories(tmp_path, device):
    """Kernel objects built after ``configure(cache_dir=...)`` link against the runtime
    already loaded (its fibers and current run are process globals): a second copy
    would crash the first native call that asks the runtime for its run."""
    import torch

    from tilewright import ttnn
    from tilewright.device.coords import CoreCoord, CoreRange, CoreRangeSet
    from tilewright.native import runtime

    first = runtime.library()
    previous = native.OPTIONS.cache_dir
    native.configure(cache_dir=str(tmp_path / "elsewhere"))
    try:
        assert runtime.library() is first
        kernel = Path(__file__).resolve().parent / "kernels" / "add_ints.cpp"
        kw = dict(dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
        a, b, out = (
            ttnn.from_torch(torch.tensor([[v]], dtype=torch.int32), **kw) for v in (5, 6, 0)
        )
        l1 = [
            ttnn.from_torch(
                torch.zeros(1, 1, dtype=torch.int32), memory_config=ttnn.L1_MEMORY_CONFIG, **kw
            )
            for _ in range(3)
        ]
        rt = ttnn.RuntimeArgs()
        rt[0][0] = [t.buffer_address() for t in (a, b, out, *l1)]
        desc = ttnn.KernelDescriptor(
            kernel_source=str(kernel),
            core_ranges=CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(0, 0))]),
            runtime_args=rt,
            config=ttnn.ReaderConfigDescriptor(),
        )
        ttnn.generic_op([a, b, *l1, out], ttnn.ProgramDescriptor(kernels=[desc]))
        assert ttnn.to_torch(out).item() == 11
        assert any((tmp_path / "elsewhere").rglob("*.so"))  # the kernel was built there
    finally:
        native.configure(cache_dir=previous)
