// ttnn/cpp/ttnn/kernel_lib/eltwise_chain.hpp -- compute_kernel_lib's element-wise chain, the
// helper ttnn's current eltwise kernels are written with: a tile loop made of chain
// elements (CopyTile, BinaryFpu, DestReuseBinary, SFPU ops, PackTile), which owns the DST
// handshake, the per-element inits and each CB's wait / pop / reserve / push as the
// element's lifecycle says.  Tilewright's own implementation of tt-metal's public
// interface (ttnn/cpp/ttnn/kernel_lib/eltwise_chain.hpp), in three spellings of it:
//
//   eltwise_chain(EltwiseShape::tiles(n), CopyTile<cb_in>{}, Exp<>{}, PackTile<cb_out>{});
//   eltwise_chain(n, ...)                                       // the older bare-count form
//   eltwise_pipeline<cb_out>(n, eltwise_chain(CopyTile<cb_in, Dst::D0>{}, Exp<>{}));
//   eltwise::eltwise_pipeline(eltwise_chain(CopyTile<cb_in, Dst::D0>{}, Exp<>{}), cb_out, n);
//
// One tile per DST acquire (block_size shapes the Chunked lifecycles' CB counts only; the
// results do not depend on how many tiles share an acquire).  Kernel-API errors inside the
// chain are reported at the line of the eltwise_chain / eltwise_pipeline call.  Not
// provided (each a static_assert naming it): TileOffset::Set, DestReuseBinary with
// DstIn != DstOut.  SetupOwner::Caller skips the elements' inits (the emulated unpacker
// and packer need none, so results do not change).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <tuple>
#include <type_traits>
#include <utility>

#include "api/compute/compute_kernel_api.h"
#include "ttnn/cpp/ttnn/kernel_lib/dest_helpers.hpp"

namespace compute_kernel_lib {

// -- shapes, slots, lifecycles --------------------------------------------------------------------

/** A DST tile slot.  The slot's bound (the DST capacity of the kernel's compute config) is
 * checked when the chain runs, by the DST-index check of every kernel-API call. */
enum class Dst : uint32_t { D0 = 0, D1, D2, D3, D4, D5, D6, D7, D8, D9, D10, D11, D12, D13, D14, D15 };
constexpr uint32_t to_u32(Dst s) noexcept { return static_cast<uint32_t>(s); }

/** The walk: Ht x Wt tiles, block_size tiles per chunk (the Chunked lifecycles). */
struct EltwiseShape {
    uint32_t Ht;
    uint32_t Wt;
    uint32_t block_size;

    constexpr EltwiseShape(uint32_t h, uint32_t w, uint32_t blk = 1) : Ht(h), Wt(w), block_size(blk ? blk : 1) {}
    explicit constexpr EltwiseShape(uint32_t n) : EltwiseShape(1, n) {}
    static constexpr EltwiseShape tiles(uint32_t n, uint32_t blk = 1) { return {1, n, blk}; }
    static constexpr EltwiseShape grid(uint32_t h, uint32_t w, uint32_t blk = 1) { return {h, w, blk}; }
    static constexpr EltwiseShape of(uint32_t r, uint32_t c) { return {r, c}; }
    static constexpr EltwiseShape row(uint32_t c) { return {1, c}; }
    static constexpr EltwiseShape col(uint32_t r) { return {r, 1}; }
    static constexpr EltwiseShape single() { return {1, 1}; }
    constexpr uint32_t num_tiles() const { return Ht * Wt; }
};

enum class WaitPolicy : uint8_t { None, PerTile, PerChunk, Upfront, Growing, PerRow };
enum class PopPolicy : uint8_t { None, PerTile, PerChunk, AtEnd, PerRow };
enum class ReservePolicy : uint8_t { None, PerTile, PerChunk, Upfront };
enum class PushPolicy : uint8_t { None, PerTile, PerChunk, AtEnd };

/** When an input CB is waited for and popped. */
struct InputLifecycle {
    WaitPolicy wait_policy;
    PopPolicy pop_policy;
    constexpr bool operator==(const InputLifecycle&) const = default;
    static const InputLifecycle Streaming, Chunked, Bulk, Pipelined, CallerManaged, BulkDrain, HeldBulk,
        HeldCumulative, HeldStream, DeferredPop, NoWaitPop, OuterStream;
};
inline constexpr InputLifecycle InputLifecycle::Streaming{WaitPolicy::PerTile, PopPolicy::PerTile};
inline constexpr InputLifecycle InputLifecycle::Chunked{WaitPolicy::PerChunk, PopPolicy::PerChunk};
inline constexpr InputLifecycle InputLifecycle::Bulk{WaitPolicy::Upfront, PopPolicy::AtEnd};
inline constexpr InputLifecycle InputLifecycle::Pipelined{WaitPolicy::Growing, PopPolicy::AtEnd};
inline constexpr InputLifecycle InputLifecycle::CallerManaged{WaitPolicy::None, PopPolicy::None};
inline constexpr InputLifecycle InputLifecycle::BulkDrain{WaitPolicy::Upfront, PopPolicy::PerTile};
inline constexpr InputLifecycle InputLifecycle::HeldBulk{WaitPolicy::Upfront, PopPolicy::None};
inline constexpr InputLifecycle InputLifecycle::HeldCumulative{WaitPolicy::Growing, PopPolicy::None};
inline constexpr InputLifecycle InputLifecycle::HeldStream{WaitPolicy::PerTile, PopPolicy::None};
inline constexpr InputLifecycle InputLifecycle::DeferredPop{WaitPolicy::None, PopPolicy::AtEnd};
inline constexpr InputLifecycle InputLifecycle::NoWaitPop{WaitPolicy::None, PopPolicy::PerTile};
inline constexpr InputLifecycle InputLifecycle::OuterStream{WaitPolicy::PerRow, PopPolicy::PerRow};

/** When an output CB is reserved and pushed. */
struct OutputLifecycle {
    ReservePolicy reserve_policy;
    PushPolicy push_policy;
    constexpr bool operator==(const OutputLifecycle&) const = default;
    static const OutputLifecycle Streaming, Chunked, Bulk, ReserveAllPushPerTile, ReserveAllPushPerChunk,
        CallerManaged, ReserveNonePushEnd;
};
inline constexpr OutputLifecycle OutputLifecycle::Streaming{ReservePolicy::PerTile, PushPolicy::PerTile};
inline constexpr OutputLifecycle OutputLifecycle::Chunked{ReservePolicy::PerChunk, PushPolicy::PerChunk};
inline constexpr OutputLifecycle OutputLifecycle::Bulk{ReservePolicy::Upfront, PushPolicy::AtEnd};
inline constexpr OutputLifecycle OutputLifecycle::ReserveAllPushPerTile{ReservePolicy::Upfront, PushPolicy::PerTile};
inline constexpr OutputLifecycle OutputLifecycle::ReserveAllPushPerChunk{ReservePolicy::Upfront, PushPolicy::PerChunk};
inline constexpr OutputLifecycle OutputLifecycle::CallerManaged{ReservePolicy::None, PushPolicy::None};
inline constexpr OutputLifecycle OutputLifecycle::ReserveNonePushEnd{ReservePolicy::None, PushPolicy::AtEnd};

// The short spellings older kernels use (compute_kernel_lib::Streaming, ...).
inline constexpr InputLifecycle Streaming = InputLifecycle::Streaming;
inline constexpr InputLifecycle Bulk = InputLifecycle::Bulk;
inline constexpr InputLifecycle CallerManaged = InputLifecycle::CallerManaged;
inline constexpr InputLifecycle HeldStream = InputLifecycle::HeldStream;
inline constexpr InputLifecycle HeldBulk = InputLifecycle::HeldBulk;
inline constexpr InputLifecycle NoWaitPop = InputLifecycle::NoWaitPop;

/** Which tile of an input a step of the Ht x Wt walk reads (upfront-waited inputs). */
enum class OperandKind : uint8_t { Block, Row, Col, Scalar };
enum class TileOffset : bool { Unset = false, Set = true };
enum class DataFormatReconfig : bool { Disabled = false, Enabled = true };

struct InputSpec {
    InputLifecycle lifecycle;
    OperandKind index;
    DataFormatReconfig reconfig;
    TileOffset offset;
};
struct OutputSpec {
    OutputLifecycle lifecycle;
    DataFormatReconfig reconfig;
    TileOffset offset;
};

constexpr InputSpec input(InputLifecycle lifecycle = InputLifecycle::Streaming, OperandKind index = OperandKind::Scalar,
                          DataFormatReconfig reconfig = DataFormatReconfig::Enabled,
                          TileOffset offset = TileOffset::Unset) noexcept {
    return {lifecycle, index, reconfig, offset};
}
constexpr InputSpec input(InputLifecycle lifecycle, DataFormatReconfig reconfig) noexcept {
    return {lifecycle, OperandKind::Scalar, reconfig, TileOffset::Unset};
}
constexpr OutputSpec output(OutputLifecycle lifecycle = OutputLifecycle::Streaming,
                            DataFormatReconfig reconfig = DataFormatReconfig::Enabled,
                            TileOffset offset = TileOffset::Unset) noexcept {
    return {lifecycle, reconfig, offset};
}

enum class BinaryFpuOp : uint8_t { Add, Sub, Mul };
/** The broadcast axis (ckernel::BroadcastType values). */
enum class BroadcastDim : uint8_t { None = 0, Col = 1, Row = 2, Scalar = 3 };
enum class DestReuseType : uint8_t { DEST_TO_SRCA, DEST_TO_SRCB };
enum class SetupOwner { Chain, Caller };

// Template-flag enums of the SFPU elements (Exp<Approx::Fast, ...>): accepted; the numerics
// follow the kernel's compute config (docs/cpp-kernels.md "Numerics").
enum class Approx : bool { Exact = false, Fast = true };
enum class Legacy : bool { Off = false, On = true };
enum class FP32DestAcc : bool { Off = false, On = true };

// -- element kinds ------------------------------------------------------------------------------

namespace detail {

struct ReaderTag {};   // reads CBs into DST (CopyTile, BinaryFpu, DestReuseBinary)
struct DestTag {};     // works on DST only (SFPU ops)
struct PackTag {};     // packs DST into a CB (PackTile)

/** The last Dst among an element's template flags (tt-metal puts the slot in different
 * positions per op: Exp<Approx, Approx, FP32DestAcc, Dst>, Silu<Dst>, ...); D0 if none. */
template <auto... Flags>
constexpr uint32_t slot_of() {
    uint32_t slot = 0;
    ((std::is_same_v<decltype(Flags), Dst> ? (slot = static_cast<uint32_t>(Flags), 0) : 0), ...);
    return slot;
}

/** Base of a unary SFPU element of the op table: in place on its DST slot. */
template <auto... Flags>
struct SfpuUnary : DestTag {
    static constexpr uint32_t arity = 1, slot = slot_of<Flags...>();
};

/** Base of a binary SFPU element of the op table: DST[Out] = DST[In0] op DST[In1]. */
template <Dst In0, Dst In1, Dst Out>
struct SfpuBinary : DestTag {
    static constexpr uint32_t arity = 2, in0 = to_u32(In0), in1 = to_u32(In1), slot = to_u32(Out);
};

}  // namespace detail

// The bases a kernel's own chain elements derive from (tt-metal's CRTP spelling): `init()`
// and `call(dst...)` const members, e.g. an element that runs ttnn's SFPU_OP_CHAIN_0 define:
//   struct OpChain : UnaryOp<OpChain, Dst::D0> {
//       void init() const {}
//       void call(uint32_t) const { SFPU_OP_CHAIN_0 }
//   };
template <class Derived, Dst Slot = Dst::D0>
struct UnaryOp : detail::DestTag {
    static constexpr uint32_t arity = 1, slot = to_u32(Slot);
};
template <class Derived, Dst In0 = Dst::D0, Dst In1 = Dst::D1, Dst Out = In0>
struct BinaryOp : detail::DestTag {
    static constexpr uint32_t arity = 2, in0 = to_u32(In0), in1 = to_u32(In1), slot = to_u32(Out);
};
template <class Derived, Dst In0 = Dst::D0, Dst In1 = Dst::D1, Dst In2 = Dst::D2, Dst Out = In0>
struct TernaryOp : detail::DestTag {
    static constexpr uint32_t arity = 3, in0 = to_u32(In0), in1 = to_u32(In1), in2 = to_u32(In2), slot = to_u32(Out);
};

namespace detail {

/** An element's init and operation, with the caller's location when it takes one (the
 * generated elements) or without (a kernel's own elements). */
template <class E>
ALWI void dest_init(const E& e, ::tw::Loc loc) {
    if constexpr (requires { e.init(loc); }) e.init(loc);
    else e.init();
}
template <class E>
ALWI void dest_call(const E& e, ::tw::Loc loc) {
    if constexpr (E::arity == 1) {
        if constexpr (requires { e.call(0u, loc); }) e.call(E::slot, loc);
        else e.call(E::slot);
    } else if constexpr (E::arity == 2) {
        if constexpr (requires { e.call(0u, 0u, 0u, loc); }) e.call(E::in0, E::in1, E::slot, loc);
        else e.call(E::in0, E::in1, E::slot);
    } else {
        e.call(E::in0, E::in1, E::in2, E::slot);
    }
}

}  // namespace detail

// Lifecycles as the element's CB counts: what to wait for / pop at a step of the walk.
namespace detail {

constexpr bool streams(InputLifecycle l) {
    return l == InputLifecycle::Streaming || l == InputLifecycle::HeldStream || l == InputLifecycle::NoWaitPop ||
           l == InputLifecycle::BulkDrain || l == InputLifecycle::OuterStream;
}

/** Tiles of the operand the whole walk reads (upfront wait / pop at end). */
constexpr uint32_t operand_tiles(OperandKind kind, EltwiseShape s) {
    switch (kind) {
        case OperandKind::Scalar: return 1;
        case OperandKind::Row: return s.Wt;
        case OperandKind::Col: return s.Ht;
        default: return s.Ht * s.Wt;
    }
}

/** The tile a step reads, relative to the CB's read pointer. */
constexpr uint32_t operand_index(InputSpec in, EltwiseShape s, uint32_t r, uint32_t c) {
    if (streams(in.lifecycle)) return 0;
    uint32_t i = r * s.Wt + c;
    if (in.lifecycle == InputLifecycle::Chunked) return i % s.block_size;
    switch (in.index) {
        case OperandKind::Scalar: return 0;
        case OperandKind::Row: return c;
        case OperandKind::Col: return r;
        default: return i;
    }
}

/** One input CB of an element, with its lifecycle. */
struct Operand {
    uint32_t cb;
    InputSpec in;

    void begin(EltwiseShape s, ::tw::Loc loc) const {
        if (in.lifecycle.wait_policy == WaitPolicy::Upfront) cb_wait_front(cb, operand_tiles(in.index, s), loc);
    }
    void before(EltwiseShape s, uint32_t r, uint32_t c, ::tw::Loc loc) const {
        uint32_t i = r * s.Wt + c, n = s.num_tiles();
        switch (in.lifecycle.wait_policy) {
            case WaitPolicy::PerTile: cb_wait_front(cb, 1, loc); break;
            case WaitPolicy::PerChunk:
                if (i % s.block_size == 0) cb_wait_front(cb, std::min(s.block_size, n - i), loc);
                break;
            case WaitPolicy::Growing: cb_wait_front(cb, operand_index(in, s, r, c) + 1, loc); break;
            case WaitPolicy::PerRow:
                if (c == 0) cb_wait_front(cb, 1, loc);
                break;
            default: break;
        }
    }
    void after(EltwiseShape s, uint32_t r, uint32_t c, ::tw::Loc loc) const {
        uint32_t i = r * s.Wt + c, n = s.num_tiles();
        switch (in.lifecycle.pop_policy) {
            case PopPolicy::PerTile: cb_pop_front(cb, 1, loc); break;
            case PopPolicy::PerChunk:
                if ((i + 1) % s.block_size == 0 || i + 1 == n) cb_pop_front(cb, i % s.block_size + 1, loc);
                break;
            case PopPolicy::PerRow:
                if (c + 1 == s.Wt) cb_pop_front(cb, 1, loc);
                break;
            default: break;
        }
    }
    void end(EltwiseShape s, ::tw::Loc loc) const {
        if (in.lifecycle.pop_policy == PopPolicy::AtEnd) cb_pop_front(cb, operand_tiles(in.index, s), loc);
    }
    uint32_t index(EltwiseShape s, uint32_t r, uint32_t c) const { return operand_index(in, s, r, c); }
};

template <InputSpec In>
constexpr void check_input() {
    static_assert(In.offset == TileOffset::Unset, "compute_kernel_lib: TileOffset::Set is not provided by Tilewright");
}

}  // namespace detail

// -- CB readers ---------------------------------------------------------------------------------

/** Unpack tile of CB `Cb` into DST slot `DstSlot` (copy_tile). */
template <uint32_t Cb, Dst DstSlot = Dst::D0, InputSpec Input = input(), auto... Ignored>
struct CopyTileImpl : detail::ReaderTag {
    static constexpr uint32_t slot = to_u32(DstSlot);
    static constexpr uint32_t cbs[1] = {Cb};
    static constexpr InputSpec specs[1] = {Input};
    void init(::tw::Loc loc) const {
        detail::check_input<Input>();
        if constexpr (Input.reconfig == DataFormatReconfig::Enabled) reconfig_data_format_srca(Cb, loc);
        copy_tile_to_dst_init_short(Cb, 0, loc);
    }
    void exec(const uint32_t* idx, ::tw::Loc loc) const { copy_tile(Cb, idx[0], slot, loc); }
};

// CopyTile<cb, slot, input(...)> and the older CopyTile<cb, slot, lifecycle, kind, reconfig>.
enum class CopyTileReconfig : uint8_t { None, Input };
template <uint32_t Cb, Dst DstSlot = Dst::D0, auto Input = input(), auto... More>
struct CopyTileSel {
    static constexpr InputSpec as_spec(InputSpec spec) { return spec; }
    static constexpr InputSpec as_spec(InputLifecycle lifecycle) { return input(lifecycle); }
    static constexpr InputSpec spec() {
        InputSpec spec = as_spec(Input);
        auto take = [&](auto v) {
            using V = decltype(v);
            if constexpr (std::is_same_v<V, OperandKind>) spec.index = v;
            else if constexpr (std::is_same_v<V, CopyTileReconfig>)
                spec.reconfig = v == CopyTileReconfig::None ? DataFormatReconfig::Disabled : DataFormatReconfig::Enabled;
        };
        (take(More), ...);
        return spec;
    }
    using type = CopyTileImpl<Cb, DstSlot, spec()>;
};
template <uint32_t Cb, Dst DstSlot = Dst::D0, auto Input = input(), auto... More>
using CopyTile = typename CopyTileSel<Cb, DstSlot, Input, More...>::type;

namespace detail {
template <BinaryFpuOp Op>
constexpr EltwiseBinaryType binary_type() {
    return Op == BinaryFpuOp::Add ? ELWADD : Op == BinaryFpuOp::Sub ? ELWSUB : ELWMUL;
}
template <BinaryFpuOp Op, BroadcastDim B>
inline void binary_exec(uint32_t a, uint32_t b, uint32_t ia, uint32_t ib, uint32_t d, ::tw::Loc loc) {
    if constexpr (B == BroadcastDim::None) {
        if constexpr (Op == BinaryFpuOp::Add) add_tiles(a, b, ia, ib, d, loc);
        else if constexpr (Op == BinaryFpuOp::Sub) sub_tiles(a, b, ia, ib, d, loc);
        else mul_tiles(a, b, ia, ib, d, loc);
    } else {
        constexpr BroadcastType t = static_cast<BroadcastType>(static_cast<int>(B));
        if constexpr (Op == BinaryFpuOp::Add) add_tiles_bcast<t>(a, b, ia, ib, d, loc);
        else if constexpr (Op == BinaryFpuOp::Sub) sub_tiles_bcast<t>(a, b, ia, ib, d, loc);
        else mul_tiles_bcast<t>(a, b, ia, ib, d, loc);
    }
}
}  // namespace detail

/** DST[slot] = A op B, B broadcast along `Bcast` (add/sub/mul_tiles and their bcast forms). */
template <uint32_t CbA, uint32_t CbB, BinaryFpuOp Op = BinaryFpuOp::Add, BroadcastDim Bcast = BroadcastDim::None,
          InputSpec AInput = input(), InputSpec BInput = input(), Dst DstSlot = Dst::D0>
struct BinaryFpuImpl : detail::ReaderTag {
    static constexpr uint32_t slot = to_u32(DstSlot);
    static constexpr uint32_t cbs[2] = {CbA, CbB};
    static constexpr InputSpec specs[2] = {AInput, BInput};
    void init(::tw::Loc loc) const {
        detail::check_input<AInput>();
        detail::check_input<BInput>();
        if constexpr (AInput.reconfig == DataFormatReconfig::Enabled) reconfig_data_format(CbA, CbB, loc);
        init_bcast<detail::binary_type<Op>(), static_cast<BroadcastType>(static_cast<int>(Bcast))>(CbA, CbB, CbA, loc);
    }
    void exec(const uint32_t* idx, ::tw::Loc loc) const {
        detail::binary_exec<Op, Bcast>(CbA, CbB, idx[0], idx[1], slot, loc);
    }
};

// BinaryFpu<a, b, Op, Bcast, input(), input(), Dst> and the older
// BinaryFpu<a, b, Op, Bcast, Reconfig, ALifecycle, BLifecycle, AKind, Dst, BKind>.
enum class BinaryDataFormatReconfig : uint8_t { None, Input, Output, InputAndOutput };
template <uint32_t CbA, uint32_t CbB, BinaryFpuOp Op = BinaryFpuOp::Add, BroadcastDim Bcast = BroadcastDim::None,
          auto... More>
struct BinaryFpuSel {
    static constexpr auto pick() {
        InputSpec a = input(), b = input();
        Dst slot = Dst::D0;
        uint32_t lifecycles = 0, kinds = 0;
        DataFormatReconfig reconfig = DataFormatReconfig::Enabled;
        uint32_t specs = 0;
        auto take = [&](auto v) {
            using V = decltype(v);
            if constexpr (std::is_same_v<V, InputSpec>) (specs++ == 0 ? a : b) = v;
            else if constexpr (std::is_same_v<V, InputLifecycle>) (lifecycles++ == 0 ? a : b).lifecycle = v;
            else if constexpr (std::is_same_v<V, OperandKind>) (kinds++ == 0 ? a : b).index = v;
            else if constexpr (std::is_same_v<V, Dst>) slot = v;
            else if constexpr (std::is_same_v<V, BinaryDataFormatReconfig>)
                reconfig = v == BinaryDataFormatReconfig::None ? DataFormatReconfig::Disabled : DataFormatReconfig::Enabled;
        };
        (take(More), ...);
        if (specs == 0) a.reconfig = b.reconfig = reconfig;
        return std::tuple{a, b, slot};
    }
    static constexpr auto picked = pick();
    using type = BinaryFpuImpl<CbA, CbB, Op, Bcast, std::get<0>(picked), std::get<1>(picked), std::get<2>(picked)>;
};
template <uint32_t CbA, uint32_t CbB, BinaryFpuOp Op = BinaryFpuOp::Add, BroadcastDim Bcast = BroadcastDim::None,
          auto... More>
using BinaryFpu = typename BinaryFpuSel<CbA, CbB, Op, Bcast, More...>::type;

/** DST[DstOut] = DST[DstIn] op CB tile (binary_dest_reuse_tiles): DEST_TO_SRCA puts DST in
 * SrcA (DST op cb), DEST_TO_SRCB in SrcB (cb op DST). */
template <uint32_t Cb, BinaryFpuOp Op, DestReuseType ReuseType, InputSpec Input = input(), Dst DstIn = Dst::D0,
          Dst DstOut = DstIn>
struct DestReuseBinary : detail::ReaderTag {
    static_assert(DstIn == DstOut, "compute_kernel_lib: DestReuseBinary writes the DST tile it reads (DstIn == DstOut)");
    static constexpr uint32_t slot = to_u32(DstOut);
    static constexpr uint32_t cbs[1] = {Cb};
    static constexpr InputSpec specs[1] = {Input};
    static constexpr EltwiseBinaryReuseDestType reuse = ReuseType == DestReuseType::DEST_TO_SRCA
                                                            ? EltwiseBinaryReuseDestType::DEST_TO_SRCA
                                                            : EltwiseBinaryReuseDestType::DEST_TO_SRCB;
    void init(::tw::Loc loc) const {
        detail::check_input<Input>();
        binary_dest_reuse_tiles_init<detail::binary_type<Op>(), reuse>(Cb, loc);
    }
    void exec(const uint32_t* idx, ::tw::Loc loc) const {
        binary_dest_reuse_tiles<detail::binary_type<Op>(), reuse>(Cb, idx[0], slot, loc);
    }
};

// -- the packer ---------------------------------------------------------------------------------

template <uint32_t Cb, OutputSpec Output = output(), Dst DstSlot = Dst::D0>
struct PackTileImpl : detail::PackTag {
    static constexpr uint32_t cb = Cb;
    static constexpr uint32_t slot = to_u32(DstSlot);
    static_assert(Output.offset == TileOffset::Unset, "compute_kernel_lib: TileOffset::Set is not provided by Tilewright");

    void begin(EltwiseShape s, ::tw::Loc loc) const {
        if constexpr (Output.reconfig == DataFormatReconfig::Enabled) pack_reconfig_data_format(Cb, loc);
        if constexpr (Output.lifecycle.reserve_policy == ReservePolicy::Upfront) cb_reserve_back(Cb, s.num_tiles(), loc);
    }
    void pack(EltwiseShape s, uint32_t i, ::tw::Loc loc) const {
        constexpr auto L = Output.lifecycle;
        uint32_t n = s.num_tiles();
        if constexpr (L.reserve_policy == ReservePolicy::PerTile) cb_reserve_back(Cb, 1, loc);
        if constexpr (L.reserve_policy == ReservePolicy::PerChunk) {
            if (i % s.block_size == 0) cb_reserve_back(Cb, std::min(s.block_size, n - i), loc);
        }
        // The tile's slot relative to the write pointer: pushes move the pointer.
        uint32_t at = i;
        if constexpr (L.push_policy == PushPolicy::PerTile) at = 0;
        if constexpr (L.push_policy == PushPolicy::PerChunk) at = i % s.block_size;
        pack_tile<true>(slot, Cb, at, loc);
        if constexpr (L.push_policy == PushPolicy::PerTile) cb_push_back(Cb, 1, loc);
        if constexpr (L.push_policy == PushPolicy::PerChunk) {
            if ((i + 1) % s.block_size == 0 || i + 1 == n) cb_push_back(Cb, i % s.block_size + 1, loc);
        }
    }
    void end(EltwiseShape s, ::tw::Loc loc) const {
        if constexpr (Output.lifecycle.push_policy == PushPolicy::AtEnd) cb_push_back(Cb, s.num_tiles(), loc);
    }
};

// PackTile<cb, output(...), slot> and the older PackTile<cb, slot, lifecycle, reconfig>.
enum class PackTileReconfig : uint8_t { None, Output };
template <uint32_t Cb, auto... More>
struct PackTileSel {
    static constexpr auto pick() {
        OutputSpec out = output();
        Dst slot = Dst::D0;
        auto take = [&](auto v) {
            using V = decltype(v);
            if constexpr (std::is_same_v<V, OutputSpec>) out = v;
            else if constexpr (std::is_same_v<V, OutputLifecycle>) out.lifecycle = v;
            else if constexpr (std::is_same_v<V, Dst>) slot = v;
            else if constexpr (std::is_same_v<V, PackTileReconfig>)
                out.reconfig = v == PackTileReconfig::None ? DataFormatReconfig::Disabled : DataFormatReconfig::Enabled;
        };
        (take(More), ...);
        return std::pair{out, slot};
    }
    static constexpr auto picked = pick();
    using type = PackTileImpl<Cb, picked.first, picked.second>;
};
template <uint32_t Cb, auto... More>
using PackTile = typename PackTileSel<Cb, More...>::type;

}  // namespace compute_kernel_lib

// The SFPU elements, one per op of the op table (generated from tilewright/device/ops/tile_ops.py).
#include "twrt_kernel_lib_ops.h"

namespace compute_kernel_lib {

// -- the walk -------------------------------------------------------------------------------------

namespace detail {

template <class E>
inline constexpr bool is_reader_v = std::is_base_of_v<ReaderTag, E>;
template <class E>
inline constexpr bool is_pack_v = std::is_base_of_v<PackTag, E>;

/** A (element, operand) position of the chain's CB readers: the first reader of a CB waits
 * for it, the last one pops it (two CopyTiles of one CB wait and pop once). */
template <class Tuple, std::size_t I, std::size_t K>
constexpr bool first_user() {
    using E = std::tuple_element_t<I, Tuple>;
    bool first = true;
    [&]<std::size_t... J>(std::index_sequence<J...>) {
        (([&] {
             using F = std::tuple_element_t<J, Tuple>;
             if constexpr (is_reader_v<F>) {
                 for (std::size_t k = 0; k < std::size(F::cbs); ++k)
                     if ((J < I || (J == I && k < K)) && F::cbs[k] == E::cbs[K]) first = false;
             }
         }()),
         ...);
    }(std::make_index_sequence<std::tuple_size_v<Tuple>>{});
    return first;
}
template <class Tuple, std::size_t I, std::size_t K>
constexpr bool last_user() {
    using E = std::tuple_element_t<I, Tuple>;
    bool last = true;
    [&]<std::size_t... J>(std::index_sequence<J...>) {
        (([&] {
             using F = std::tuple_element_t<J, Tuple>;
             if constexpr (is_reader_v<F>) {
                 for (std::size_t k = 0; k < std::size(F::cbs); ++k)
                     if ((J > I || (J == I && k > K)) && F::cbs[k] == E::cbs[K]) last = false;
             }
         }()),
         ...);
    }(std::make_index_sequence<std::tuple_size_v<Tuple>>{});
    return last;
}

template <class Tuple, class Fn>
inline void each(const Tuple& t, Fn&& fn) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (fn.template operator()<I>(std::get<I>(t)), ...);
    }(std::make_index_sequence<std::tuple_size_v<Tuple>>{});
}

/** Every operand of a reader, with its first / last-user flags. */
template <class Tuple, std::size_t I, class E, class Fn>
inline void operands(Fn&& fn) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        (fn(Operand{E::cbs[K], E::specs[K]}, first_user<Tuple, I, K>(), last_user<Tuple, I, K>()), ...);
    }(std::make_index_sequence<std::size(E::cbs)>{});
}

/** Run `chain` over `shape`; `extra_pack_cb` >= 0 adds a pack of the last element's slot
 * into that CB (the eltwise_pipeline forms, whose chains have no PackTile). */
template <SetupOwner SO, class Tuple>
inline void run(EltwiseShape shape, const Tuple& chain, int32_t extra_pack_cb, ::tw::Loc loc) {
    constexpr std::size_t N = std::tuple_size_v<Tuple>;
    static_assert(N > 0, "compute_kernel_lib: an empty chain");
    using Last = std::tuple_element_t<N - 1, Tuple>;
    constexpr uint32_t out_slot = Last::slot;
    each(chain, [&]<std::size_t I>(const auto& e) {
        using E = std::remove_cvref_t<decltype(e)>;
        if constexpr (is_reader_v<E>) {
            operands<Tuple, I, E>([&](Operand op, bool first, bool) {
                if (first) op.begin(shape, loc);
            });
        } else if constexpr (is_pack_v<E>) {
            e.begin(shape, loc);
        }
    });
    for (uint32_t r = 0; r < shape.Ht; ++r) {
        for (uint32_t c = 0; c < shape.Wt; ++c) {
            uint32_t i = r * shape.Wt + c;
            tile_regs_acquire(loc);
            each(chain, [&]<std::size_t I>(const auto& e) {
                using E = std::remove_cvref_t<decltype(e)>;
                if constexpr (is_reader_v<E>) {
                    uint32_t idx[std::size(E::cbs)];
                    std::size_t k = 0;
                    operands<Tuple, I, E>([&](Operand op, bool first, bool) {
                        if (first) op.before(shape, r, c, loc);
                        idx[k++] = op.index(shape, r, c);
                    });
                    if constexpr (SO == SetupOwner::Chain) e.init(loc);
                    e.exec(idx, loc);
                } else if constexpr (!is_pack_v<E>) {
                    if constexpr (SO == SetupOwner::Chain) dest_init(e, loc);
                    dest_call(e, loc);
                }
            });
            tile_regs_commit(loc);
            tile_regs_wait(loc);
            each(chain, [&]<std::size_t I>(const auto& e) {
                using E = std::remove_cvref_t<decltype(e)>;
                if constexpr (is_pack_v<E>) e.pack(shape, i, loc);
            });
            if (extra_pack_cb >= 0) {
                cb_reserve_back(uint32_t(extra_pack_cb), 1, loc);
                pack_tile(out_slot, uint32_t(extra_pack_cb), 0, loc);
                cb_push_back(uint32_t(extra_pack_cb), 1, loc);
            }
            tile_regs_release(loc);
            each(chain, [&]<std::size_t I>(const auto& e) {
                using E = std::remove_cvref_t<decltype(e)>;
                if constexpr (is_reader_v<E>) {
                    operands<Tuple, I, E>([&](Operand op, bool, bool last) {
                        if (last) op.after(shape, r, c, loc);
                    });
                }
            });
        }
    }
    each(chain, [&]<std::size_t I>(const auto& e) {
        using E = std::remove_cvref_t<decltype(e)>;
        if constexpr (is_reader_v<E>) {
            operands<Tuple, I, E>([&](Operand op, bool, bool last) {
                if (last) op.end(shape, loc);
            });
        } else if constexpr (is_pack_v<E>) {
            e.end(shape, loc);
        }
    });
}

/** The walk's shape and the caller's line (an implicit conversion evaluates the default
 * location at the call of eltwise_chain). */
struct ShapeAt {
    EltwiseShape shape;
    ::tw::Loc loc;
    ShapeAt(EltwiseShape s, TW_LOC) : shape(s), loc(loc) {}
    ShapeAt(uint32_t n, TW_LOC) : shape(EltwiseShape::tiles(n)), loc(loc) {}
    ShapeAt(int n, TW_LOC) : shape(EltwiseShape::tiles(uint32_t(n))), loc(loc) {}
};

}  // namespace detail

/** A chain built for eltwise_pipeline (the form without a PackTile). */
template <class... Es>
struct EltwiseChain {
    std::tuple<Es...> elements;
};

/** Run a chain: eltwise_chain(EltwiseShape::tiles(n), CopyTile<in>{}, Exp<>{}, PackTile<out>{}). */
template <SetupOwner SO = SetupOwner::Chain, class... Es>
ALWI void eltwise_chain(detail::ShapeAt at, Es... elts) {
    detail::run<SO>(at.shape, std::tuple<Es...>{elts...}, -1, at.loc);
}

/** Build a chain for eltwise_pipeline: eltwise_chain(CopyTile<in, Dst::D0>{}, Exp<>{}). */
template <class E0, class... Es>
    requires(!std::is_convertible_v<E0, detail::ShapeAt>)
ALWI EltwiseChain<E0, Es...> eltwise_chain(E0 e0, Es... elts) {
    return {{e0, elts...}};
}

/** Stream `num_tiles` tiles through `chain`, packing the last element's DST slot into OutCB
 * one tile at a time (reserve, pack, push). */
template <uint32_t OutCB, bool EnableHoist = false, class... Es>
ALWI void eltwise_pipeline(uint32_t num_tiles, EltwiseChain<Es...> chain, TW_LOC) {
    detail::run<SetupOwner::Chain>(EltwiseShape::tiles(num_tiles), chain.elements, int32_t(OutCB), loc);
}

namespace eltwise {
using namespace ::compute_kernel_lib;
/** The compute_kernel_lib::eltwise spelling: eltwise_pipeline(chain, cb_out, num_tiles). */
template <class... Es>
ALWI void eltwise_pipeline(EltwiseChain<Es...> chain, uint32_t cb_out, uint32_t num_tiles, TW_LOC) {
    detail::run<SetupOwner::Chain>(EltwiseShape::tiles(num_tiles), chain.elements, int32_t(cb_out), loc);
}
}  // namespace eltwise

}  // namespace compute_kernel_lib
