// api/dataflow/objects.h -- the object-style data-movement API (tt-metal experimental/noc.h,
// endpoints.h, core_local_mem.h, circular_buffer.h): a Noc object moving data between
// tensor accessors, circular buffers, local L1 memory and NoC endpoints.
//
//   experimental::Noc noc;
//   noc.async_read(accessor, cb, size, {.page_id = id}, {});
//   noc.async_write(local, experimental::UnicastEndpoint{}, size, {}, {.noc_x = x, .noc_y = y, .addr = a});
//
// Each kind of source / destination has its argument struct (noc_traits_t<T>::args_type).
#pragma once

#include <cstdint>

#include "api/core_local_mem.h"
#include "tilewright/cb_object.h"

namespace experimental {

using ::CoreLocalMem;

struct UnicastEndpoint {};
struct MulticastEndpoint {};

struct PageArgs {
    uint32_t page_id = 0;
    uint32_t offset = 0;
};
struct UnicastArgs {
    uint32_t noc_x = 0;
    uint32_t noc_y = 0;
    uint32_t addr = 0;
};
struct MulticastArgs {
    uint32_t noc_x_start = 0;
    uint32_t noc_y_start = 0;
    uint32_t noc_x_end = 0;
    uint32_t noc_y_end = 0;
    uint32_t addr = 0;
    uint32_t num_dests = 0;
};
struct LocalArgs {
    uint32_t offset = 0;
};

template <typename T>
struct noc_traits_t {
    static_assert(sizeof(T) == 0, "NoC transactions are not supported for this type (Tilewright)");
};

template <typename DSpec>
struct noc_traits_t<TensorAccessor<DSpec>> {
    using args_type = PageArgs;
    static uint64_t noc_addr(const TensorAccessor<DSpec>& t, const PageArgs& a, tw::Loc loc) {
        return twrt_accessor_page_addr(t.raw(), a.page_id, a.offset, loc);
    }
};
template <>
struct noc_traits_t<CircularBuffer> {
    using args_type = LocalArgs;
    // A CB is read from its front and written at its back.
    static uint32_t local_addr(const CircularBuffer& cb, const LocalArgs& a, bool write, tw::Loc loc) {
        return (write ? cb.get_write_ptr(loc) : cb.get_read_ptr(loc)) + a.offset;
    }
    static uint64_t noc_addr(const CircularBuffer& cb, const LocalArgs& a, tw::Loc loc) {
        return twrt_noc_local_addr(cb.get_read_ptr(loc) + a.offset, loc);
    }
};
template <typename T>
struct noc_traits_t<CoreLocalMem<T>> {
    using args_type = LocalArgs;
    static uint32_t local_addr(const CoreLocalMem<T>& m, const LocalArgs& a, bool, tw::Loc) {
        return static_cast<uint32_t>(m.get_address()) + a.offset;
    }
    static uint64_t noc_addr(const CoreLocalMem<T>& m, const LocalArgs& a, tw::Loc loc) {
        return twrt_noc_local_addr(static_cast<uint32_t>(m.get_address()) + a.offset, loc);
    }
};
template <>
struct noc_traits_t<UnicastEndpoint> {
    using args_type = UnicastArgs;
    static uint64_t noc_addr(const UnicastEndpoint&, const UnicastArgs& a, tw::Loc) {
        return twrt_noc_xy_addr(a.noc_x, a.noc_y, a.addr);
    }
};
template <>
struct noc_traits_t<MulticastEndpoint> {
    using args_type = MulticastArgs;
};

class Noc {
public:
    enum class AddressType { NOC, LOCAL_L1 };
    enum class TxnIdMode { ENABLED, DISABLED };
    enum class ResponseMode { NON_POSTED, POSTED };

    explicit constexpr Noc(uint8_t noc = noc_index) : noc_(noc) {}

    uint8_t get_noc_id() const { return noc_; }

    /** Read `size` bytes from `src` (a NoC source) into `dst` (local L1). */
    template <typename Src, typename Dst>
    void async_read(const Src& src, const Dst& dst, uint32_t size, const typename noc_traits_t<Src>::args_type& src_args,
                    const typename noc_traits_t<Dst>::args_type& dst_args, TW_LOC) const {
        twrt_noc_read(noc_traits_t<Src>::noc_addr(src, src_args, loc),
                      noc_traits_t<Dst>::local_addr(dst, dst_args, true, loc), size, noc_, loc);
    }

    /** Write `size` bytes from `src` (local L1) to `dst` (a NoC destination or a multicast). */
    template <typename Src, typename Dst>
    void async_write(const Src& src, const Dst& dst, uint32_t size,
                     const typename noc_traits_t<Src>::args_type& src_args,
                     const typename noc_traits_t<Dst>::args_type& dst_args, TW_LOC) const {
        const uint32_t local = noc_traits_t<Src>::local_addr(src, src_args, false, loc);
        if constexpr (std::is_same_v<Dst, MulticastEndpoint>) {
            twrt_noc_write_mcast(local,
                                 get_noc_multicast_addr(dst_args.noc_x_start, dst_args.noc_y_start, dst_args.noc_x_end,
                                                        dst_args.noc_y_end, dst_args.addr),
                                 size, dst_args.num_dests, 0, noc_, loc);
        } else {
            twrt_noc_write(local, noc_traits_t<Dst>::noc_addr(dst, dst_args, loc), size, noc_, loc);
        }
    }

    void async_read_barrier() const { twrt_noc_barrier(noc_); }
    void async_write_barrier() const { twrt_noc_barrier(noc_); }
    void async_writes_flushed() const { twrt_noc_barrier(noc_); }
    void async_atomic_barrier() const { twrt_noc_barrier(noc_); }
    void async_full_barrier() const { twrt_noc_barrier(noc_); }

private:
    uint8_t noc_;
};

}  // namespace experimental
