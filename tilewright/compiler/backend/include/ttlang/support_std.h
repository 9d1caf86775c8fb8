// ttlang/support_std.h -- the C++ standard library headers of a kernel compiled from TT-Lang:
// the kernel API's (tilewright/kernel_std.h) and ttlang/support.h's.  The first line of every
// compiled kernel's translation unit, precompiled once per compiler and flag set
// (tilewright/native/pch.py): <charconv> and <cmath> alone are about 0.2 s CPU of parse, more
// than a compiled kernel's own code.  Standard headers only (nothing a kernel defines changes
// them); tests/native/test_pch.py checks it lists every one of kernel_std.h and support.h.
#pragma once

#include <bit>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <type_traits>
#include <utility>
