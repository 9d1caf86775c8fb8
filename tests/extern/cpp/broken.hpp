// broken.hpp -- does not compile.
#pragma once
#include <cstdint>
inline int32_t broken(int32_t x) { return x + undeclared_variable; }
