// tilewright/kernel_std.h -- the C++ standard library headers the kernel API includes, as
// one header: the first line of every kernel translation unit, precompiled once per
// compiler and flag set (tilewright/native/pch.py).
//
// Why only the standard library: parsing these headers is most of a kernel's front-end
// time (about 30k lines, 0.15-0.25 s CPU with g++ 12), and nothing a kernel defines
// (compile-time args, NOC_INDEX, ttnn's defines) changes them, so one precompiled copy
// serves every kernel.  The kernel API's own headers read those defines and stay textual.
// Keep this list a superset of the `#include <...>` lines of the kernel API headers
// (tests/native/test_pch.py checks it): a standard header missing here is parsed again
// by every kernel.
#pragma once

#include <bit>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <type_traits>
#include <utility>
