// api/core_local_mem.h -- CoreLocalMem<T>: a typed view of this core's L1 at an address.
#pragma once

#include <cstdint>

template <typename T>
class CoreLocalMem {
public:
    constexpr CoreLocalMem() = default;
    explicit CoreLocalMem(uintptr_t address) : address_(address) {}

    T& operator[](uint32_t index) const { return get_unsafe_ptr()[index]; }
    T& operator*() const { return *get_unsafe_ptr(); }
    T* get_unsafe_ptr() const { return reinterpret_cast<T*>(address_); }
    uintptr_t get_address() const { return address_; }
    CoreLocalMem operator+(uint32_t n) const { return CoreLocalMem(address_ + n * sizeof(T)); }
    bool operator==(const CoreLocalMem& o) const { return address_ == o.address_; }
    bool operator!=(const CoreLocalMem& o) const { return address_ != o.address_; }

private:
    uintptr_t address_ = 0;
};
