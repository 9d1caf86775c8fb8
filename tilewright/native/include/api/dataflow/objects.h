// api/dataflow/objects.h -- the object-style data-movement API of newer tt-metal kernels
// (api/dataflow/noc.h, endpoints.h, circular_buffer.h, dataflow_buffer.h,
// api/tensor/noc_traits.h; earlier under experimental/): a Noc object moving data between
// tensor accessors, circular / dataflow buffers, local L1 memory and NoC endpoints.
//
//   Noc noc;
//   DataflowBuffer dfb(cb_id);
//   noc.async_read(accessor, dfb, size, {.page_id = id}, {.offset_bytes = 0});
//   noc.async_write(dfb, accessor, size, {}, {.page_id = id});
//   noc.async_write_multicast(local, MulticastEndpoint{}, size, n, {}, {.noc_x_start = ..., .addr = a});
//
// Each kind of source / destination has its argument structs (noc_traits_t<T>::src_args_type,
// dst_args_type, dst_args_mcast_type) with tt-metal's field names.  The classes live in
// `experimental` and under their plain names (both spellings are in use).  NocOptions flags
// are accepted: TXN_ID barriers wait for every transaction (the emulated NoC completes a
// transfer when it is issued, so that waits for the tagged ones too), POSTED and CUSTOM_VC
// change no result, MCAST_INCL_SRC includes the sender.
#pragma once

#include <cstdint>
#include <type_traits>

#include "api/core_local_mem.h"
#include "tilewright/cb_object.h"

namespace experimental {

using ::CoreLocalMem;

struct UnicastEndpoint {};
struct MulticastEndpoint {};
enum class AllocatorBankType { L1, DRAM };
template <AllocatorBankType bank_type>
struct AllocatorBank {};

/** Offsets into a circular / dataflow buffer or local memory. */
struct DataflowBufferArgs {
    uint32_t offset_bytes = 0;
};

enum class NocOptions : uint32_t {
    DEFAULT = 0,
    TXN_ID = 1u << 0,
    POSTED = 1u << 1,
    CUSTOM_VC = 1u << 2,
    MCAST_INCL_SRC = 1u << 3,
    INLINE_L1 = 1u << 4,
    INLINE_REG = 1u << 5,
};
constexpr NocOptions operator|(NocOptions a, NocOptions b) noexcept {
    return static_cast<NocOptions>(static_cast<uint32_t>(a) | static_cast<uint32_t>(b));
}
constexpr bool has_flag(NocOptions opts, NocOptions flag) noexcept {
    return (static_cast<uint32_t>(opts) & static_cast<uint32_t>(flag)) != 0;
}
struct NocOptVals {
    uint32_t vc = 0;
    uint32_t trid = 0;
};

template <typename T>
struct noc_traits_t {
    static_assert(sizeof(T) == 0, "NoC transactions are not supported for this type (Tilewright)");
};

template <typename DSpec>
struct noc_traits_t<TensorAccessor<DSpec>> {
    struct src_args_type {
        uint32_t page_id{};
        uint32_t offset_bytes = 0;
    };
    using dst_args_type = src_args_type;
    static uint64_t src_noc(const TensorAccessor<DSpec>& t, const src_args_type& a, uint8_t, tw::Loc loc) {
        return twrt_accessor_page_addr(t.raw(), a.page_id, a.offset_bytes, loc);
    }
    static uint64_t dst_noc(const TensorAccessor<DSpec>& t, const dst_args_type& a, uint8_t n, tw::Loc loc) {
        return src_noc(t, a, n, loc);
    }
};

/** A CB is read from its front and written at its back. */
template <>
struct noc_traits_t<CircularBuffer> {
    using src_args_type = DataflowBufferArgs;
    using dst_args_type = DataflowBufferArgs;
    static uint32_t src_local(const CircularBuffer& cb, const src_args_type& a, tw::Loc loc) {
        return cb.get_read_ptr(loc) + a.offset_bytes;
    }
    static uint32_t dst_local(const CircularBuffer& cb, const dst_args_type& a, tw::Loc loc) {
        return cb.get_write_ptr(loc) + a.offset_bytes;
    }
    static uint64_t src_noc(const CircularBuffer& cb, const src_args_type& a, uint8_t, tw::Loc loc) {
        return twrt_noc_local_addr(src_local(cb, a, loc), loc);
    }
    static uint64_t dst_noc(const CircularBuffer& cb, const dst_args_type& a, uint8_t, tw::Loc loc) {
        return twrt_noc_local_addr(dst_local(cb, a, loc), loc);
    }
};

template <typename T>
struct noc_traits_t<CoreLocalMem<T>> {
    using src_args_type = DataflowBufferArgs;
    using dst_args_type = DataflowBufferArgs;
    static uint32_t src_local(const CoreLocalMem<T>& m, const src_args_type& a, tw::Loc) {
        return static_cast<uint32_t>(m.get_address()) + a.offset_bytes;
    }
    static uint32_t dst_local(const CoreLocalMem<T>& m, const dst_args_type& a, tw::Loc loc) {
        return src_local(m, a, loc);
    }
    static uint64_t src_noc(const CoreLocalMem<T>& m, const src_args_type& a, uint8_t, tw::Loc loc) {
        return twrt_noc_local_addr(src_local(m, a, loc), loc);
    }
    static uint64_t dst_noc(const CoreLocalMem<T>& m, const dst_args_type& a, uint8_t n, tw::Loc loc) {
        return src_noc(m, a, n, loc);
    }
};

template <>
struct noc_traits_t<UnicastEndpoint> {
    struct src_args_type {
        uint32_t noc_x{};
        uint32_t noc_y{};
        uint32_t addr{};
    };
    using dst_args_type = src_args_type;
    static uint32_t src_local(const UnicastEndpoint&, const src_args_type& a, tw::Loc) { return a.addr; }
    static uint32_t dst_local(const UnicastEndpoint&, const dst_args_type& a, tw::Loc) { return a.addr; }
    static uint64_t src_noc(const UnicastEndpoint&, const src_args_type& a, uint8_t, tw::Loc) {
        return twrt_noc_xy_addr(a.noc_x, a.noc_y, a.addr);
    }
    static uint64_t dst_noc(const UnicastEndpoint& e, const dst_args_type& a, uint8_t n, tw::Loc loc) {
        return src_noc(e, a, n, loc);
    }
};

template <>
struct noc_traits_t<MulticastEndpoint> {
    struct dst_args_mcast_type {
        uint32_t noc_x_start{};
        uint32_t noc_y_start{};
        uint32_t noc_x_end{};
        uint32_t noc_y_end{};
        uint32_t addr{};
    };
    static uint64_t mcast_noc(const MulticastEndpoint&, const dst_args_mcast_type& a, uint8_t noc, tw::Loc) {
        return get_noc_multicast_addr(a.noc_x_start, a.noc_y_start, a.noc_x_end, a.noc_y_end, a.addr, noc);
    }
};

template <AllocatorBankType bank_type>
struct noc_traits_t<AllocatorBank<bank_type>> {
    struct src_args_type {
        uint32_t bank_id{};
        uint32_t addr{};
    };
    using dst_args_type = src_args_type;
    static uint64_t src_noc(const AllocatorBank<bank_type>&, const src_args_type& a, uint8_t noc, tw::Loc loc) {
        return get_noc_addr_from_bank_id<bank_type == AllocatorBankType::DRAM>(a.bank_id, a.addr, noc, loc);
    }
    static uint64_t dst_noc(const AllocatorBank<bank_type>& b, const dst_args_type& a, uint8_t noc, tw::Loc loc) {
        return src_noc(b, a, noc, loc);
    }
};

class Noc {
    template <typename T>
    using src_args_t = typename noc_traits_t<T>::src_args_type;
    template <typename T>
    using dst_args_t = typename noc_traits_t<T>::dst_args_type;
    template <typename T>
    using dst_args_mcast_t = typename noc_traits_t<T>::dst_args_mcast_type;

public:
    enum class AddressType { NOC, LOCAL_L1 };
    static constexpr uint32_t INVALID_TXN_ID = 0xFFFFFFFF;

    Noc() : noc_(noc_index) {}
    explicit Noc(uint8_t noc) : noc_(noc) {}

    uint8_t get_noc_id() const { return noc_; }
    bool is_local_bank(uint32_t x, uint32_t y) const { return x == my_x[noc_] && y == my_y[noc_]; }
    bool is_local_addr(uint64_t addr) const { return is_local_bank(NOC_UNICAST_ADDR_X(addr), NOC_UNICAST_ADDR_Y(addr)); }

    /** Read `size_bytes` from `src` (a NoC source) into `dst` (this core's L1). */
    template <NocOptions opts = NocOptions::DEFAULT, uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1,
              bool enable_noc_tracing = true, typename Src, typename Dst>
    void async_read(const Src& src, const Dst& dst, uint32_t size_bytes, const src_args_t<Src>& src_args,
                    const dst_args_t<Dst>& dst_args, const NocOptVals& noc_opts = {}, TW_LOC) const {
        (void)noc_opts;
        twrt_noc_read(noc_traits_t<Src>::src_noc(src, src_args, noc_, loc),
                      noc_traits_t<Dst>::dst_local(dst, dst_args, loc), size_bytes, noc_, loc);
    }
    /** The NoC completes a transfer when it is issued: the state is the source itself. */
    template <NocOptions opts = NocOptions::DEFAULT, uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, typename Src>
    void set_async_read_state(const Src& src, uint32_t size_bytes, const src_args_t<Src>& src_args,
                              const NocOptVals& noc_opts = {}, TW_LOC) const {
        (void)src, (void)size_bytes, (void)src_args, (void)noc_opts, (void)loc;
    }
    template <NocOptions opts = NocOptions::DEFAULT, uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, typename Src,
              typename Dst>
    void async_read_with_state(const Src& src, const Dst& dst, uint32_t size_bytes, const src_args_t<Src>& src_args,
                               const dst_args_t<Dst>& dst_args, const NocOptVals& noc_opts = {}, TW_LOC) const {
        async_read<opts, max_page_size>(src, dst, size_bytes, src_args, dst_args, noc_opts, loc);
    }

    /** Write `size_bytes` from `src` (this core's L1) to `dst` (a NoC destination). */
    template <NocOptions opts = NocOptions::DEFAULT, uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1,
              bool enable_noc_tracing = true, typename Src, typename Dst>
    void async_write(const Src& src, const Dst& dst, uint32_t size_bytes, const src_args_t<Src>& src_args,
                     const dst_args_t<Dst>& dst_args, const NocOptVals& noc_opts = {}, TW_LOC) const {
        (void)noc_opts;
        twrt_noc_write(noc_traits_t<Src>::src_local(src, src_args, loc),
                       noc_traits_t<Dst>::dst_noc(dst, dst_args, noc_, loc), size_bytes, noc_, loc);
    }
    template <NocOptions opts = NocOptions::DEFAULT, uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, typename Dst>
    void set_async_write_state(const Dst& dst, uint32_t size_bytes, const dst_args_t<Dst>& dst_args,
                               const NocOptVals& noc_opts = {}, TW_LOC) const {
        static_assert(!has_flag(opts, NocOptions::TXN_ID), "NocOptions::TXN_ID is not supported for set_async_write_state");
        (void)dst, (void)size_bytes, (void)dst_args, (void)noc_opts, (void)loc;
    }
    template <NocOptions opts = NocOptions::DEFAULT, uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, typename Src,
              typename Dst>
    void async_write_with_state(const Src& src, const Dst& dst, uint32_t size_bytes, const src_args_t<Src>& src_args,
                                const dst_args_t<Dst>& dst_args, const NocOptVals& noc_opts = {}, TW_LOC) const {
        static_assert(!has_flag(opts, NocOptions::TXN_ID), "NocOptions::TXN_ID is not supported for async_write_with_state");
        async_write<opts, max_page_size>(src, dst, size_bytes, src_args, dst_args, noc_opts, loc);
    }

    /** Write `size_bytes` from `src` to the same address on every core of a rectangle. */
    template <NocOptions opts = NocOptions::DEFAULT, uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1,
              bool enable_noc_tracing = true, typename Src, typename Dst>
    void async_write_multicast(const Src& src, const Dst& dst, uint32_t size_bytes, uint32_t num_dsts,
                               const src_args_t<Src>& src_args, const dst_args_mcast_t<Dst>& dst_args,
                               bool linked = false, TW_LOC) const {
        static_assert(!has_flag(opts, NocOptions::TXN_ID), "Mcasts with transaction id are not supported");
        static_assert(!has_flag(opts, NocOptions::POSTED), "Mcasts with posted transactions are not supported");
        const uint32_t flags = (has_flag(opts, NocOptions::MCAST_INCL_SRC) ? 1u : 0u) | (linked ? 2u : 0u);
        twrt_noc_write_mcast(noc_traits_t<Src>::src_local(src, src_args, loc),
                             noc_traits_t<Dst>::mcast_noc(dst, dst_args, noc_, loc), size_bytes, num_dsts, flags, noc_,
                             loc);
    }

    /** Write one 32-bit value (byte-enable `be`) to a NoC destination. */
    template <NocOptions opts = NocOptions::DEFAULT, typename Dst>
    void inline_dw_write(const Dst& dst, uint32_t val, const dst_args_t<Dst>& dst_args, uint8_t be = 0xF,
                         const NocOptVals& noc_opts = {}, TW_LOC) const {
        static_assert(!has_flag(opts, NocOptions::TXN_ID), "TxnId is not supported for inline_dw_write");
        (void)noc_opts;
        twrt_noc_inline_dw_write(noc_traits_t<Dst>::dst_noc(dst, dst_args, noc_, loc), val, be, noc_, loc);
    }

    /** Zero `size_bytes` of a circular / dataflow buffer at its back (+ offset). */
    template <typename Dst>
    void async_write_zeros(const Dst& dst, uint32_t size_bytes, const dst_args_t<Dst>& args = {}, TW_LOC) const {
        static_assert(std::is_same_v<Dst, CircularBuffer>,
                      "Noc::async_write_zeros(dst, size) zeroes a CircularBuffer or DataflowBuffer; a tensor "
                      "takes a zeroed scratch buffer as fourth argument");
        // The running core's L1 is mapped at its own addresses.
        __builtin_memset(reinterpret_cast<void*>(uintptr_t(noc_traits_t<Dst>::dst_local(dst, args, loc))), 0,
                         size_bytes);
    }
    /** Zero `size_bytes` of a tensor page from a zeroed scratch buffer (read at its front). */
    template <typename DSpecT, typename Scratch>
    void async_write_zeros(const TensorAccessor<DSpecT>& accessor, uint32_t size_bytes,
                           const dst_args_t<TensorAccessor<DSpecT>>& args, const Scratch& scratch, TW_LOC) const {
        const uint32_t src = scratch.get_read_ptr(loc);
        for (uint32_t done = 0; done < size_bytes;) {
            const uint32_t chunk = size_bytes - done < NOC_MAX_BURST_SIZE ? size_bytes - done : NOC_MAX_BURST_SIZE;
            twrt_noc_write(src, twrt_accessor_page_addr(accessor.raw(), args.page_id, args.offset_bytes + done, loc),
                           chunk, noc_, loc);
            done += chunk;
        }
    }
    void write_zeros_l1_barrier() const { twrt_noc_barrier(noc_); }
    void write_zeros_dram_barrier() const { twrt_noc_barrier(noc_); }

    /** Reads complete when issued here: every transaction id is flushed. */
    bool is_read_trid_flushed(uint32_t) const { return true; }

    template <NocOptions opts = NocOptions::DEFAULT>
    void async_read_barrier(const NocOptVals& = {}) const {
        twrt_noc_barrier(noc_);
    }
    template <NocOptions opts = NocOptions::DEFAULT>
    void async_write_barrier(const NocOptVals& = {}) const {
        twrt_noc_barrier(noc_);
    }
    template <NocOptions opts = NocOptions::DEFAULT>
    void async_writes_flushed(const NocOptVals& = {}) const {
        twrt_noc_barrier(noc_);
    }
    void async_atomic_barrier() const { twrt_noc_barrier(noc_); }
    void async_full_barrier() const { twrt_noc_barrier(noc_); }

private:
    uint8_t noc_;
};

}  // namespace experimental

// The plain spellings of current tt-metal (api/dataflow/noc.h and friends).
using experimental::AllocatorBank;
using experimental::AllocatorBankType;
using experimental::CircularBuffer;
using experimental::DataflowBuffer;
using experimental::DataflowBufferArgs;
using experimental::has_flag;
using experimental::MulticastEndpoint;
using experimental::Noc;
using experimental::noc_traits_t;
using experimental::NocOptions;
using experimental::NocOptVals;
using experimental::UnicastEndpoint;
