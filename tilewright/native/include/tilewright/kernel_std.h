// tilewright/kernel_std.h -- the C++ standard library headers the kernel API includes, as
// one header: the first line of every C++ kernel's translation unit, precompiled once per
// compiler and flag set (tilewright/native/pch.py).
//
// Why only the standard library: nothing a kernel defines (compile-time args, NOC_INDEX,
// ttnn's defines) changes these headers, so one precompiled copy serves every kernel; the
// kernel API's own headers read those defines and stay textual.  Keep this list equal to
// the `#include <...>` lines of the kernel API headers (tests/native/test_pch.py checks
// it): a header missing here is parsed by every kernel, one too many makes every kernel
// load a larger PCH (its load time grows with its size).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <type_traits>
#include <utility>
