// DEVICE_PRINT, the std::format-style debug print (api/debug/device_print.h).
#include <cstdint>

#include "api/debug/device_print.h"

void kernel_main() {
    const uint32_t v = get_arg_val<uint32_t>(0);
    DEVICE_PRINT("plain text\n");
    DEVICE_PRINT("v={} hex={:#x} bin={:08b} {{literal}}\n", v, v, v & 0xFF);
    DEVICE_PRINT("[{:>6}] [{:<6}] [{:^7}] [{:*>5}]\n", 42, -7, "mid", 3);
    DEVICE_PRINT("{1} before {0}; f={2:.3f} g={3} {4}\n", 1, 2, 3.14159f, 0.1f, true);
}
