// DPRINT from every processor of a core: the data-movement kernels print once, a compute
// kernel once per TRISC unless the print names one (DPRINT_MATH).
#include <cstdint>

#ifdef HELLO_COMPUTE
namespace NAMESPACE {
void MAIN {
    DPRINT << "compute " << get_arg_val<uint32_t>(0) << ENDL();
    DPRINT_MATH(DPRINT << "math only" << ENDL());
}
}  // namespace NAMESPACE
#else
void kernel_main() { DPRINT << "core " << get_absolute_logical_x() << "," << get_absolute_logical_y() << " says " << HEX(get_arg_val<uint32_t>(0)) << ENDL(); }
#endif
