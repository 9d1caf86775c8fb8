// compute.cpp -- the compute kernel API: DST, unpack -> math / SFPU -> pack.
//
// Same semantics and order of operations as device/kernel_api/compute.py, the messages of
// the same table (twrt_messages.h), the op codes of the op registry's (twrt_sfpu_ops.h):
// DST holds 16 tiles of float32 values, rounded to bf16 (round to nearest even) on every
// write unless fp32_dest_acc_en; unpack decodes the CB's format, pack encodes into the
// output CB's format at the next sequential slot (formats.cpp, bit-identical to the
// Python codecs).  Float arithmetic follows numpy's float32 order: elementwise ops are
// single IEEE operations (built with -ffp-contract=off), reductions replay numpy's
// pairwise summation, and tile matmuls call the same BLAS sgemm numpy uses.  The FPU
// multiplies (matmul, eltwise mul, reduce SUM / AVG) slice their operands by the math
// fidelity as device/ops/numerics.py fpu_product does, operation for operation (fpu_product
// below; the masks are generated from that module into twrt_fidelity.h).  exp, recip, sqrt,
// rsqrt, log, sigmoid and tanh run the SFPU's own programs, selected by math_approx_mode and the
// DST precision (sfpu_math.h, the twin of device/ops/sfpu_algorithms.py).
#include <cinttypes>
#include <cmath>

#include "floor_divmod.h"
#include "twrt.h"
#include "twrt_erf.h"
#include "twrt_fidelity.h"
#include "twrt_format_table.h"
#include "twrt_formats.h"
#include "twrt_sfpu_ops.h"
#include "sfpu_math.h"

namespace twrt {

namespace {

constexpr int kTile = 1024;
constexpr int kBlock = 16 * kTile;  // the most tiles DST holds: a matmul block's operands

using Sgemm = void (*)(int, int, int, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                       float, float*, int64_t);
using Sgemm32 = void (*)(int, int, int, int32_t, int32_t, int32_t, float, const float*, int32_t, const float*,
                         int32_t, float, float*, int32_t);
void* g_sgemm = nullptr;
int g_sgemm_ilp64 = 0;

}  // namespace

Run* compute_run(tw::Loc loc) {
    Run* r = cur();
    note(r, loc);
    if (!r->kind_compute) fail_not_compute(r, loc);
    return r;
}

// DST tiles of one acquire: the number Python computed from the target's rule at launch.
int dst_capacity(Run* r) { return r->dst_tiles; }

void check_dst(Run* r, int64_t idst, tw::Loc loc) {
    int cap = dst_capacity(r);
    if (idst < 0 || idst >= cap) fail_dst_range(r, loc, idst, cap, r->fp32_dest_acc, r->dst_full_sync);
}

uint32_t read_limit(const tw_CBState* c) {
    return c->waited ? c->waited : (c->received - c->acked) & 0xFFFF;
}

uint32_t write_limit(const tw_CBState* c) {
    return c->reserved ? c->reserved : c->num_pages - ((c->received - c->acked) & 0xFFFF);
}

namespace {

float* dst_tile(Run* r, uint32_t idst) { return r->dst + size_t(idst) * kTile; }

void clear_dst(Run* r) {
    // Acquire / release zero DST; only tiles written since the last clear need it.
    for (uint32_t m = r->dst_dirty; m; m &= m - 1) std::memset(dst_tile(r, __builtin_ctz(m)), 0, kTile * 4);
    r->dst_dirty = 0;
}

/** DST tile idst, checked and marked written (clear_dst zeroes it at the next acquire). */
float* dst_for_write(Run* r, uint32_t idst, tw::Loc loc) {
    check_dst(r, idst, loc);
    r->dst_dirty |= 1u << idst;
    return dst_tile(r, idst);
}

void write_dst(Run* r, uint32_t idst, const float* values, tw::Loc loc) {
    float* d = dst_for_write(r, idst, loc);
    if (r->fp32_dest_acc) {
        if (d != values) std::memcpy(d, values, kTile * 4);
    } else {
        dst_round(d, values);
    }
}

/** DST tile idst += the 32x32 tile at p (row stride ldp): write_dst of dst + p, in one pass
 *  over the tile (a matmul block makes 10^5 of these a call). */
void accumulate_dst(Run* r, uint32_t idst, const float* p, int ldp, tw::Loc loc) {
    dst_accumulate(dst_for_write(r, idst, loc), p, ldp, !r->fp32_dest_acc);
}

/** The CB holds 32x32 tiles of a format with a tile codec, one per page (check_tile_page). */
void check_tile_page(Run* r, int32_t cb, const tw_CBState* c, const char* what, tw::Loc loc) {
    if (c->tile_h != 32 || c->tile_w != 32) fail_tile_shape(r, loc, what, cb, c->tile_h, c->tile_w);
    int32_t size = format_info(c->format_code).tile_bytes;
    if (size < 0) fail_no_tile_form(r, loc, what, c->format_code, cb);
    if (uint32_t(size) != c->page_size) fail_page_size(r, loc, what, cb, c->page_size, c->format_code, size);
}

/** Tile `itile` (relative to the read pointer) of CB `cb` as row-major float32. */
/** Tile itile of the CB's front into out, rows ld floats apart (32: a tile on its own). */
void unpack(Run* r, int32_t cb, uint32_t itile, float* out, tw::Loc loc, int ld = 32) {
    tw_CBState* c = cb_of(r, cb, loc);
    uint32_t limit = read_limit(c);
    if (itile >= limit) fail_tile_not_waited(r, loc, itile, cb, limit);
    check_tile_page(r, cb, c, "unpack", loc);
    decode_tile(c->format_code,
                l1_span(r, c->rd_ptr + uint64_t(itile) * c->page_size, c->page_size, "unpack", loc), out, ld);
}

void pack_int_error(Run* r, uint32_t fmt, int32_t index, float value, tw::Loc loc) {
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    const int64_t args[3] = {fmt, index, bits};
    request(r, "pack_int_error", 3, args, loc);
    fail(r, ERR_FORMAT, loc, "value at device index %d cannot be stored in format %u", index, fmt);
}

void pack_values(Run* r, int32_t cb, uint32_t slot, const float* values, const char* what, tw::Loc loc) {
    tw_CBState* c = cb_of(r, cb, loc);
    uint32_t addr = slot_addr(r, cb, c, slot, what, loc);
    check_tile_page(r, cb, c, what, loc);
    uint8_t* mem = l1_span(r, addr, c->page_size, what, loc);
    float sum[kTile];
    if (r->l1_acc) {
        decode_tile(c->format_code, mem, sum);
        for (int i = 0; i < kTile; ++i) sum[i] = sum[i] + values[i];
        values = sum;
    }
    int32_t bad = encode_tile(c->format_code, values, mem);
    if (bad >= 0) {
        // device order index -> the row-major value
        int face = bad / 256, rr = (bad % 256) / 16, cc = bad % 16;
        pack_int_error(r, c->format_code, bad, values[((face / 2) * 16 + rr) * 32 + (face % 2) * 16 + cc], loc);
    }
}

}  // namespace

uint32_t slot_addr(Run* r, int32_t cb, tw_CBState* c, uint32_t slot, const char* what, tw::Loc loc) {
    uint32_t limit = write_limit(c);
    if (slot >= limit) fail_slot_unreserved(r, loc, what, cb, slot, limit);
    uint32_t addr = c->wr_ptr + slot * c->page_size;
    if (addr + c->page_size > c->fifo_limit) addr -= c->num_pages * c->page_size;
    return addr;
}

void pack_tile_values(Run* r, int32_t cb, uint32_t slot, const float* values, const char* what, tw::Loc loc) {
    pack_values(r, cb, slot, values, what, loc);
}

namespace {

void transpose(const float* in, float* out) {
    for (int i = 0; i < 32; ++i)
        for (int j = 0; j < 32; ++j) out[j * 32 + i] = in[i * 32 + j];
}

// C (m x n, row stride ldc) = A (m x 32, rows contiguous) @ B (32 x n, row stride ldb): the
// 32x32 tiles of C as numpy's matmul of each pair of tiles computes them.  Every element is
// one length-32 dot product; BLAS computes it in the same order whatever m and n are
// (checked once per process, batch_is_exact), so one call serves a whole block of tiles.
void gemm_k32(int m, int n, const float* a, const float* b, int ldb, float* c, int ldc) {
    if (g_sgemm != nullptr) {
        if (g_sgemm_ilp64)
            reinterpret_cast<Sgemm>(g_sgemm)(101, 111, 111, m, n, 32, 1.0f, a, 32, b, ldb, 0.0f, c, ldc);
        else
            reinterpret_cast<Sgemm32>(g_sgemm)(101, 111, 111, m, n, 32, 1.0f, a, 32, b, ldb, 0.0f, c, ldc);
        return;
    }
    for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) {
            double s = 0;
            for (int k = 0; k < 32; ++k) s += double(a[i * 32 + k]) * double(b[k * ldb + j]);
            c[i * ldc + j] = float(s);
        }
    }
}

void tile_matmul(const float* a, const float* b, float* c) { gemm_k32(32, 32, a, b, 32, c, 32); }

// The tile matmul as fpu_product's product: SrcB (in0) @ SrcA (in1).
constexpr auto kMatmul = [](const float* b, const float* a, float* c) { tile_matmul(b, a, c); };

// A block's rt x ct tile products one tile pair at a time: A's column of tiles stacked
// ((rt*32) x 32), B's row side by side (32 x (ct*32)), C as B's row width.
void gemm_k32_by_tile(int rt, int ct, const float* a, const float* b, float* c) {
    const int ld = ct * 32;
    for (int row = 0; row < rt; ++row)
        for (int col = 0; col < ct; ++col)
            gemm_k32(32, 32, a + row * kTile, b + col * 32, ld, c + row * 32 * ld + col * 32, ld);
}

// Whether one gemm_k32 of a block gives the bits of its tiles' products one at a time:
// true of OpenBLAS's kernels (each element's dot product runs over k in order), checked here
// once per BLAS on a pseudo-random 4x4-tile block so another BLAS cannot change a result.
bool g_batch_exact = false;

bool batch_is_exact() {
    constexpr int n = 4;
    static float a[n * kTile], b[n * kTile], whole[n * n * kTile], by_tile[n * n * kTile];
    uint32_t x = 12345u;
    auto next = [&x] {
        x = x * 1664525u + 1013904223u;
        return float(int32_t(x >> 8) - (1 << 23)) * 0x1p-20f;
    };
    for (float& v : a) v = next();
    for (float& v : b) v = next();
    gemm_k32(n * 32, n * 32, a, b, n * 32, whole, n * 32);
    gemm_k32_by_tile(n, n, a, b, by_tile);
    return std::memcmp(whole, by_tile, sizeof whole) == 0;
}

// numpy's float32 pairwise summation (n elements, stride in floats).
float pairwise_sum(const float* a, int n, int stride) {
    if (n < 8) {
        float res = -0.0f;
        for (int i = 0; i < n; ++i) res += a[i * stride];
        return res;
    }
    if (n <= 128) {
        float r[8];
        for (int j = 0; j < 8; ++j) r[j] = a[j * stride];
        int i = 8;
        for (; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; ++j) r[j] += a[(i + j) * stride];
        float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; ++i) res += a[i * stride];
        return res;
    }
    int n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum(a, n2, stride) + pairwise_sum(a + n2 * stride, n - n2, stride);
}

float nan_max(float a, float b) {
    if (std::isnan(a) || std::isnan(b)) return std::nanf("");
    return a > b ? a : b;
}

// -- math fidelity (device/ops/numerics.py, "math fidelity: the FPU multiplier's mantissa
// slices"): hi = x & hi_mask, full = x & full_mask, lo = full - hi; a non-finite x is its own
// hi and full slice and has lo = 0.
void fidelity_slices(const float* x, int n, uint32_t hi_mask, uint32_t full_mask, float* hi, float* full,
                     float* lo) {
    for (int i = 0; i < n; ++i) {
        uint32_t u;
        std::memcpy(&u, &x[i], 4);
        bool finite = (u & 0x7F800000u) != 0x7F800000u;
        uint32_t h = finite ? u & hi_mask : u, f = finite ? u & full_mask : u;
        std::memcpy(&hi[i], &h, 4);
        std::memcpy(&full[i], &f, 4);
        lo[i] = finite ? full[i] - hi[i] : 0.0f;
    }
}

// The sliced operands of fpu_product, sized for a matmul block's (kBlock floats each): one
// set per thread for every instantiation (fpu_product does not yield to another fiber).
thread_local float g_fidelity_scratch[7][kBlock];

// product(b, a, out) at the fidelity: HiFi4 P(B, A); LoFi P(B_hi, A_hi); HiFi2 P(B_hi, A_full);
// HiFi3 P(B_full, A_full) - P(B_lo, A_lo).  nb / na: elements of B / A, nout of the product.
template <class Product>
void fpu_product(Run* r, const float* b, int nb, const float* a, int na, int nout, Product product, float* out,
                 tw::Loc loc) {
    int32_t fid = r->fidelity;
    if (fid == TW_FIDELITY_HIFI4) {
        product(b, a, out);
        return;
    }
    if (fid != TW_FIDELITY_LOFI && fid != TW_FIDELITY_HIFI2 && fid != TW_FIDELITY_HIFI3)
        fail(r, ERR_KERNEL, loc, "math_fidelity %d is not a MathFidelity " TW_FIDELITY_CHOICES, fid);
    float* ah = g_fidelity_scratch[0];
    float *af = g_fidelity_scratch[1], *al = g_fidelity_scratch[2], *bh = g_fidelity_scratch[3];
    float *bf = g_fidelity_scratch[4], *bl = g_fidelity_scratch[5], *low = g_fidelity_scratch[6];
    fidelity_slices(a, na, kSlice_a_hi, kSlice_a_full, ah, af, al);
    fidelity_slices(b, nb, kSlice_b_hi, kSlice_b_full, bh, bf, bl);
    if (fid == TW_FIDELITY_LOFI) {
        product(bh, ah, out);
    } else if (fid == TW_FIDELITY_HIFI2) {
        product(bh, af, out);
    } else {
        product(bf, af, out);
        product(bl, al, low);
        for (int i = 0; i < nout; ++i) out[i] = out[i] - low[i];
    }
}

// The reduction of tile `a` along `dim` (numpy's order: pairwise along a row, row by row down
// a column), times the scaler *s: 32 values (REDUCE_ROW / REDUCE_COL) or 1 (REDUCE_SCALAR).
void reduce_scaled(bool mx, int32_t dim, const float* s, const float* a, float* out) {
    float scale = s[0];
    if (dim == 0) {
        for (int i = 0; i < 32; ++i) {
            float red;
            if (mx) {
                red = a[i * 32];
                for (int j = 1; j < 32; ++j) red = nan_max(red, a[i * 32 + j]);
            } else {
                red = pairwise_sum(a + i * 32, 32, 1);
            }
            out[i] = red * scale;
        }
    } else if (dim == 1) {
        for (int j = 0; j < 32; ++j) {
            float red = a[j];
            for (int i = 1; i < 32; ++i) red = mx ? nan_max(red, a[i * 32 + j]) : red + a[i * 32 + j];
            out[j] = red * scale;
        }
    } else {
        float red;
        if (mx) {
            red = a[0];
            for (int i = 1; i < kTile; ++i) red = nan_max(red, a[i]);
        } else {
            red = pairwise_sum(a, kTile, 1);
        }
        out[0] = red * scale;
    }
}

}  // namespace

}  // namespace twrt

using namespace twrt;

TW_EXPORT void twrt_set_sgemm(void* fn, int32_t ilp64) {
    g_sgemm = fn;
    g_sgemm_ilp64 = ilp64;
    g_batch_exact = batch_is_exact();
}

TW_EXPORT int32_t twrt_matmul_batched(void) { return g_batch_exact ? 1 : 0; }

TW_EXPORT void twrt_dst_acquire(tw::Loc loc) {
    Run* r = compute_run(loc);
    clear_dst(r);
    pipe_acquire(r);
}

TW_EXPORT void twrt_dst_release(tw::Loc loc) {
    Run* r = compute_run(loc);
    clear_dst(r);
    pipe_release(r);
}

// tile_regs_commit and tile_regs_wait: the DST hand-off from MATH to PACK.
TW_EXPORT void twrt_dst_check(tw::Loc loc) { pipe_handoff(compute_run(loc)); }

TW_EXPORT void twrt_check_cb(int32_t cb, tw::Loc loc) { cb_of(cur(), cb, loc); }

// what: 0 plain init, 1 copy_tile_to_dst_init_short(cb=a, transpose=b), 2 mm_init,
// 3 matmul_block_init(a, b, transpose=c, ct=d, rt=e; kt via twrt_init 4), 5 sfpu init,
// 6 pack_rows_init(count=a: rows of 16 datums).
TW_EXPORT void twrt_init(int32_t what, int32_t a, int32_t b, int32_t c, int32_t d, int32_t e, tw::Loc loc) {
    Run* r = compute_run(loc);
    if (what == 5) return;
    r->unpack_transpose = 0;
    switch (what) {
        case 1:
            cb_of(r, a, loc);
            if (b) r->unpack_transpose = 1;
            break;
        case 2:
            r->mm_block_set = 0;
            break;
        case 3:
            cb_of(r, a, loc);
            cb_of(r, b, loc);
            r->mm_block_set = 1;
            r->mm_transpose = c != 0;
            r->mm_ct = d;
            r->mm_rt = e;
            break;
        case 4:
            r->mm_kt = a;
            break;
        case 6:
            r->pack_rows = uint32_t(a);
            break;
        default:
            break;
    }
}

TW_EXPORT void twrt_copy_tile(uint32_t cb, uint32_t itile, uint32_t idst, tw::Loc loc) {
    Run* r = compute_run(loc);
    float t[kTile], u[kTile];
    unpack(r, int32_t(cb), itile, t, loc);
    if (r->unpack_transpose) {
        transpose(t, u);
        write_dst(r, idst, u, loc);
    } else {
        write_dst(r, idst, t, loc);
    }
    tile_copy(r, cb_of(r, int32_t(cb), loc)->page_size, 1);
}

namespace {

// Elementwise kernels with the op and the broadcast fixed at compile time, so the loops
// vectorise (each lane is one IEEE float32 operation, as numpy's: -ffp-contract=off).
template <int Op>
inline float apply_op(float x, float y) {
    if constexpr (Op == TW_FPU_add) return x + y;
    else if constexpr (Op == TW_FPU_sub) return x - y;
    else return x * y;
}

template <int Op, int Bcast>
void binary_loop(const float* a, const float* b, float* out) {
    for (int row = 0; row < 32; ++row) {
        for (int col = 0; col < 32; ++col) {
            int i = row * 32 + col;
            float bv = Bcast == 1 ? b[col] : Bcast == 2 ? b[row * 32] : Bcast == 3 ? b[0] : b[i];
            out[i] = apply_op<Op>(a[i], bv);
        }
    }
}

template <int Op>
void binary_dispatch(int32_t bcast, const float* a, const float* b, float* out) {
    switch (bcast) {
        case 1: binary_loop<Op, 1>(a, b, out); break;
        case 2: binary_loop<Op, 2>(a, b, out); break;
        case 3: binary_loop<Op, 3>(a, b, out); break;
        default: binary_loop<Op, 0>(a, b, out); break;
    }
}

}  // namespace

TW_EXPORT void twrt_binary(int32_t op, int32_t bcast, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1,
                           uint32_t idst, tw::Loc loc) {
    Run* r = compute_run(loc);
    float a[kTile], b[kTile], out[kTile];
    unpack(r, int32_t(cb0), t0, a, loc);
    unpack(r, int32_t(cb1), t1, b, loc);
    if (op == TW_FPU_add) binary_dispatch<TW_FPU_add>(bcast, a, b, out);
    else if (op == TW_FPU_sub) binary_dispatch<TW_FPU_sub>(bcast, a, b, out);
    else  // ELWMUL at the fidelity: in0 is SrcA, in1 (broadcast) SrcB
        fpu_product(
            r, b, kTile, a, kTile, kTile,
            [bcast](const float* sb, const float* sa, float* o) { binary_dispatch<TW_FPU_mul>(bcast, sa, sb, o); },
            out, loc);
    write_dst(r, idst, out, loc);
    tile_binary(r, cb_of(r, int32_t(cb0), loc)->page_size, cb_of(r, int32_t(cb1), loc)->page_size, op == 2);
}

TW_EXPORT void twrt_dest_reuse(int32_t op, int32_t reuse, uint32_t cb, uint32_t itile, uint32_t idst, tw::Loc loc) {
    Run* r = compute_run(loc);
    check_dst(r, idst, loc);
    if (reuse < 0 || reuse > 2) fail_enum_value(r, loc, "binary_dest_reuse_tiles", reuse, "EltwiseBinaryReuseDestType");
    if (reuse == 0) fail_dest_reuse_none(r, loc);
    static const char* const names[] = {"ELWMUL", "ELWDIV", "ELWADD", "ELWSUB", "ELWMAXMIN"};
    if (op < 0 || op > 4) fail_enum_value(r, loc, "binary_dest_reuse_tiles", op, "EltwiseBinaryType");
    if (op != 0 && op != 2 && op != 3) fail_dest_reuse_op(r, loc, names[op]);
    float t[kTile], out[kTile];
    unpack(r, int32_t(cb), itile, t, loc);
    const float* d = dst_tile(r, idst);
    const float* x = reuse == 1 ? d : t;
    const float* y = reuse == 1 ? t : d;
    int code = op == 2 ? TW_FPU_add : op == 3 ? TW_FPU_sub : TW_FPU_mul;  // ELWADD, ELWSUB, ELWMUL
    if (code == TW_FPU_add) binary_loop<TW_FPU_add, 0>(x, y, out);
    else if (code == TW_FPU_sub) binary_loop<TW_FPU_sub, 0>(x, y, out);
    else  // ELWMUL at the fidelity: x is SrcA, y SrcB
        fpu_product(
            r, y, kTile, x, kTile, kTile,
            [](const float* sb, const float* sa, float* o) { binary_loop<TW_FPU_mul, 0>(sa, sb, o); }, out, loc);
    write_dst(r, idst, out, loc);
    tile_dest_reuse(r, cb_of(r, int32_t(cb), loc)->page_size, code == 2);
}

TW_EXPORT void twrt_matmul_tiles(uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t idst,
                                 uint32_t transpose_b, tw::Loc loc) {
    Run* r = compute_run(loc);
    check_dst(r, idst, loc);
    float a[kTile], b[kTile], bt[kTile], p[kTile];
    unpack(r, int32_t(cb0), t0, a, loc);
    unpack(r, int32_t(cb1), t1, b, loc);
    if (transpose_b) transpose(b, bt);
    // MVMUL at the fidelity: in0 is SrcB, in1 (transposed first) SrcA
    fpu_product(r, a, kTile, transpose_b ? bt : b, kTile, kTile, kMatmul, p, loc);
    accumulate_dst(r, idst, p, 32, loc);
    tile_matmul(r, cb_of(r, int32_t(cb0), loc)->page_size, cb_of(r, int32_t(cb1), loc)->page_size, 1);
}

TW_EXPORT void twrt_matmul_block(uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t idst,
                                 uint32_t transpose_b, uint32_t ct, uint32_t rt, uint32_t kt, tw::Loc loc) {
    Run* r = compute_run(loc);
    char what[96];  // formatted for an error only (a warm matmul makes 10^5 of these calls)
    auto describe = [&] {
        fmt_matmul_block_what(what, sizeof what, int32_t(ct), int32_t(rt), int32_t(kt));
        return what;
    };
    if (int32_t(ct) < 1 || int32_t(rt) < 1 || int32_t(kt) < 1) fail_matmul_block_dims(r, loc, describe());
    int cap = dst_capacity(r);
    uint32_t n = ct * rt;
    if (int32_t(idst) < 0 || uint64_t(idst) + n > uint64_t(cap))
        fail_dst_block_range(r, loc, describe(), int32_t(idst), int64_t(int32_t(idst)) + n - 1, cap,
                             r->fp32_dest_acc, r->dst_full_sync);
    if (r->mm_block_set && (r->mm_transpose != (transpose_b != 0) || uint32_t(r->mm_ct) != ct ||
                            uint32_t(r->mm_rt) != rt))
        fail_matmul_block_config(r, loc, describe(), transpose_b ? 1 : 0, r->mm_ct, r->mm_rt, r->mm_transpose);
    // A's column of rt tiles stacked ((rt*32) x 32) and B's row of ct tiles side by side
    // (32 x (ct*32)): their product is the block's rt x ct tile products at once, one BLAS
    // call (when exact, batch_is_exact) instead of rt*ct; the fidelity slices are per element.
    static thread_local float a_col[kBlock], b_row[kBlock], prod[kBlock];
    float tmp[kTile], bt[kTile];
    const int ldb = int(ct) * 32;
    for (uint32_t c = 0; c < ct; ++c) {
        if (!transpose_b) {  // decoded in place, side by side
            unpack(r, int32_t(cb1), t1 + c, b_row + c * 32, loc, ldb);
            continue;
        }
        unpack(r, int32_t(cb1), t1 + c, tmp, loc);
        transpose(tmp, bt);
        for (int i = 0; i < 32; ++i) std::memcpy(b_row + i * ldb + c * 32, bt + i * 32, 32 * sizeof(float));
    }
    for (uint32_t row = 0; row < rt; ++row) unpack(r, int32_t(cb0), t0 + row * kt, a_col + row * kTile, loc);
    const int m = int(rt) * 32;
    auto block_product = [m, ldb, ct, rt](const float* sb, const float* sa, float* o) {
        if (g_batch_exact) gemm_k32(m, ldb, sb, sa, ldb, o, ldb);
        else gemm_k32_by_tile(int(rt), int(ct), sb, sa, o);
    };
    // MVMUL at the fidelity: in0 is SrcB, in1 SrcA
    fpu_product(r, a_col, int(rt) * kTile, b_row, int(ct) * kTile, int(n) * kTile, block_product, prod, loc);
    for (uint32_t row = 0; row < rt; ++row)
        for (uint32_t c = 0; c < ct; ++c) accumulate_dst(r, idst + row * ct + c, prod + row * 32 * ldb + c * 32, ldb, loc);
    tile_matmul(r, uint64_t(rt) * cb_of(r, int32_t(cb0), loc)->page_size,
                uint64_t(ct) * cb_of(r, int32_t(cb1), loc)->page_size, n);
}

TW_EXPORT void twrt_reduce_tile(int32_t pool, int32_t dim, uint32_t cb, uint32_t cbs, uint32_t t, uint32_t ts,
                                uint32_t idst, tw::Loc loc) {
    Run* r = compute_run(loc);
    check_dst(r, idst, loc);
    if (pool < 0 || pool > 2) fail_enum_value(r, loc, "reduce_tile", pool, "PoolType");
    if (dim < 0 || dim > 2) fail_enum_value(r, loc, "reduce_tile", dim, "ReduceDim");
    float a[kTile], s[kTile], d[kTile];
    unpack(r, int32_t(cb), t, a, loc);
    unpack(r, int32_t(cbs), ts, s, loc);
    std::memcpy(d, dst_tile(r, idst), sizeof d);
    bool mx = pool == 2;
    float red[32];
    auto scaled = [mx, dim](const float* sb, const float* sa, float* o) { reduce_scaled(mx, dim, sb, sa, o); };
    int nout = dim == 2 ? 1 : 32;
    if (mx) scaled(s, a, red);  // MAX runs no fidelity phases (LLK reduce: AVG / SUM only)
    else fpu_product(r, s, 1, a, kTile, nout, scaled, red, loc);  // a is SrcA, the scaler SrcB
    auto combine = [mx](float x, float y) { return mx ? nan_max(x, y) : x + y; };
    if (dim == 0) {  // REDUCE_ROW: each row into column 0
        for (int i = 0; i < 32; ++i) d[i * 32] = combine(d[i * 32], red[i]);
    } else if (dim == 1) {  // REDUCE_COL: each column into row 0
        for (int j = 0; j < 32; ++j) d[j] = combine(d[j], red[j]);
    } else {
        d[0] = combine(d[0], red[0]);
    }
    write_dst(r, idst, d, loc);
    tile_reduce(r, cb_of(r, int32_t(cb), loc)->page_size, cb_of(r, int32_t(cbs), loc)->page_size, mx);
}

TW_EXPORT void twrt_transpose_tile(uint32_t cb, uint32_t itile, uint32_t idst, tw::Loc loc) {
    Run* r = compute_run(loc);
    float t[kTile], u[kTile];
    unpack(r, int32_t(cb), itile, t, loc);
    transpose(t, u);
    write_dst(r, idst, u, loc);
    tile_transpose(r, cb_of(r, int32_t(cb), loc)->page_size);
}

TW_EXPORT void twrt_transpose_dest(uint32_t idst, tw::Loc loc) {
    Run* r = compute_run(loc);
    check_dst(r, idst, loc);
    float u[kTile];
    transpose(dst_tile(r, idst), u);
    write_dst(r, idst, u, loc);
    tile_sfpu(r, TW_COST_SFPU_TRANSPOSE_DEST);
}

TW_EXPORT void twrt_pack_tile(uint32_t idst, uint32_t cb, uint32_t out_idx, bool out_of_order, tw::Loc loc) {
    Run* r = compute_run(loc);
    check_dst(r, idst, loc);
    tw_CBState* c = cb_of(r, int32_t(cb), loc);
    uint32_t slot = out_of_order ? out_idx : c->pack_counter;
    pack_values(r, int32_t(cb), slot, dst_tile(r, idst), "pack_tile", loc);
    if (!out_of_order) c->pack_counter += 1;
    tile_pack(r, c->page_size, r->l1_acc != 0);
}

TW_EXPORT void twrt_pack_tile_block(uint32_t idst, uint32_t cb, uint32_t ntiles, tw::Loc loc) {
    Run* r = compute_run(loc);
    if (int32_t(ntiles) < 1) fail_ntiles(r, loc, int32_t(ntiles));
    for (uint32_t i = 0; i < ntiles; ++i) twrt_pack_tile(idst + i, cb, 0, false, loc);
}

TW_EXPORT void twrt_pack_l1_acc(uint32_t enable, tw::Loc loc) {
    Run* r = compute_run(loc);
    if (enable > 1) fail_l1_acc_flag(r, loc, int32_t(enable));
    r->l1_acc = int32_t(enable);
}

// -- SFPU ---------------------------------------------------------------------------------------

namespace {

float fparam(uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}
int32_t iparam(uint32_t bits) { return int32_t(bits); }

// Transcendental functions are evaluated in double and rounded once to float32: the
// correctly rounded result in almost every case, within one float32 ulp of numpy's
// float32 loops (docs/cpp-kernels.md, "Numerics").
float d1(double (*fn)(double), float x) { return float(fn(double(x))); }

// numpy's maximum / minimum: NaN in either operand propagates; ties (+0 / -0) give the second.
float np_max(float a, float b) { return (a > b || std::isnan(a)) ? a : b; }
float np_min(float a, float b) { return (a < b || std::isnan(a)) ? a : b; }

// The error function of tilewright/device/ops/special.py, operation for operation: a
// piecewise polynomial in float64 whose coefficients are generated from that module
// (twrt_erf.h), so erf, erfc and gelu agree with the Python engine bit for bit.
double poly_erf(double x) {
    if (std::isnan(x)) return x;
    double mag = std::fabs(x);
    double scaled = mag * (1.0 / TW_ERF_WIDTH);
    int piece = scaled < TW_ERF_PIECES ? int(scaled) : TW_ERF_PIECES;
    double t = piece == TW_ERF_PIECES ? 0.0 : (mag - piece * TW_ERF_WIDTH) * (2.0 / TW_ERF_WIDTH) - 1.0;
    double result = kErfCoeffs[0][piece];
    for (int row = 1; row <= TW_ERF_DEGREE; ++row) {
        result *= t;
        result += kErfCoeffs[row][piece];
    }
    return std::copysign(result, x);
}

// The SFPU's mode: the kernel's math_approx_mode and its DST precision (fp32_dest_acc_en).
struct SfpuMode {
    bool approx, fp32;
};

float sfpu_apply(int32_t op, float x, uint32_t p0, uint32_t p1, uint32_t p2, SfpuMode mode, bool* unknown) {
    switch (op) {
        // The SFPU's own programs (sfpu_math.h; device/ops/sfpu_algorithms.py ALGORITHMS).
        case TW_SFPU_exp: return sfpu::exp(x, mode.approx, mode.fp32);
        case TW_SFPU_log: return sfpu::log(x, mode.approx, mode.fp32);
        case TW_SFPU_sqrt: return sfpu::sqrt(x, mode.approx, mode.fp32);
        case TW_SFPU_rsqrt: return sfpu::rsqrt(x, mode.approx, mode.fp32);
        case TW_SFPU_recip: return sfpu::recip(x, mode.approx, mode.fp32);
        case TW_SFPU_sigmoid: return sfpu::sigmoid(x, mode.approx, mode.fp32);
        case TW_SFPU_tanh: return sfpu::tanh(x, mode.approx, mode.fp32);
        case TW_SFPU_relu: return np_max(x, 0.0f);
        case TW_SFPU_gelu: {
            double w = double(x);
            return float(0.5 * w * (1.0 + poly_erf(w * std::sqrt(0.5))));
        }
        case TW_SFPU_sin: return d1(std::sin, x);
        case TW_SFPU_cos: return d1(std::cos, x);
        case TW_SFPU_tan: return d1(std::tan, x);
        case TW_SFPU_abs: return std::fabs(x);
        case TW_SFPU_negative: return -x;
        case TW_SFPU_square: return x * x;
        case TW_SFPU_exp2: return d1(std::exp2, x);
        case TW_SFPU_expm1: return d1(std::expm1, x);
        case TW_SFPU_log1p: return d1(std::log1p, x);
        case TW_SFPU_floor: return std::floor(x);
        case TW_SFPU_ceil: return std::ceil(x);
        case TW_SFPU_sign: return std::isnan(x) ? x : x > 0 ? 1.0f : x < 0 ? -1.0f : 0.0f;
        case TW_SFPU_silu: return x / (1.0f + d1(std::exp, -x));
        case TW_SFPU_asin: return d1(std::asin, x);
        case TW_SFPU_acos: return d1(std::acos, x);
        case TW_SFPU_atan: return d1(std::atan, x);
        case TW_SFPU_asinh: return d1(std::asinh, x);
        case TW_SFPU_acosh: return d1(std::acosh, x);
        case TW_SFPU_atanh: return d1(std::atanh, x);
        case TW_SFPU_hardsigmoid: return np_min(np_max(x + 3.0f, 0.0f), 6.0f) / 6.0f;
        case TW_SFPU_softsign: return x / (1.0f + std::fabs(x));
        case TW_SFPU_signbit: return std::signbit(x) ? 1.0f : 0.0f;
        case TW_SFPU_trunc: return std::trunc(x);
        case TW_SFPU_frac: return x - std::trunc(x);
        case TW_SFPU_erf: return float(poly_erf(double(x)));
        case TW_SFPU_erfc: return float(1.0 - poly_erf(double(x)));
        case TW_SFPU_leaky_relu:
        case TW_SFPU_prelu: return x >= 0 ? x : x * fparam(p0);
        case TW_SFPU_elu: return x > 0 ? x : fparam(p0) * d1(std::expm1, x);
        case TW_SFPU_relu_max: return np_max(np_min(x, fparam(p0)), 0.0f);
        case TW_SFPU_relu_min: return np_max(x, fparam(p0));
        case TW_SFPU_rsub: return fparam(p0) - x;
        case TW_SFPU_power: return std::pow(x, fparam(p0));  // powf: numpy's float32 power
        case TW_SFPU_power_iterative: {
            int32_t n = iparam(p0);
            return float(std::pow(x, n));
        }
        case TW_SFPU_add_unary: return x + fparam(p0);
        case TW_SFPU_sub_unary: return x - fparam(p0);
        case TW_SFPU_mul_unary:
        case TW_SFPU_div_unary: return x * fparam(p0);
        case TW_SFPU_rsub_unary: return fparam(p0) - x;
        case TW_SFPU_softplus: {
            float scaled = x * fparam(p0);
            return scaled > fparam(p2) ? x : d1(std::log1p, d1(std::exp, scaled)) * fparam(p1);
        }
        case TW_SFPU_hardtanh:
        case TW_SFPU_clamp: return np_min(np_max(x, fparam(p0)), fparam(p1));
        case TW_SFPU_threshold: return x > fparam(p0) ? x : fparam(p1);
        case TW_SFPU_selu:
            return fparam(p0) * (x > 0 ? x : fparam(p1) * d1(std::expm1, x));
        case TW_SFPU_celu: return x > 0 ? x : fparam(p0) * d1(std::expm1, x * fparam(p1));
        default:  // an op of the table (twrt_sfpu_ops.h) without a case here
            *unknown = true;
            return x;
    }
}

}  // namespace

TW_EXPORT void twrt_sfpu(int32_t op, uint32_t idst, uint32_t p0, uint32_t p1, uint32_t p2, tw::Loc loc) {
    Run* r = compute_run(loc);
    check_dst(r, idst, loc);
    float out[kTile];
    const float* d = dst_tile(r, idst);
    if (op == TW_SFPU_round) {
        int32_t decimals = iparam(p0);
        const int64_t args[2] = {int64_t(reinterpret_cast<uintptr_t>(d)), decimals};
        // numpy's round (scale, rint, unscale in float32 with its own corner cases): Python does it.
        request(r, "sfpu_round", 2, args, loc);
        write_dst(r, idst, d, loc);
    } else if (op == TW_SFPU_typecast) {
        // The registry's typecast (bf16: round to nearest even, a NaN keeps its sign): one
        // definition, in Python (device/ops/tile_ops.py typecast_tile_values).
        const int64_t args[3] = {int64_t(reinterpret_cast<uintptr_t>(d)), int64_t(p0), int64_t(p1)};
        request(r, "sfpu_typecast", 3, args, loc);
        write_dst(r, idst, d, loc);
    } else {
        bool unknown = op < 0 || op >= TW_SFPU_COUNT;
        const SfpuMode mode{r->approx != 0, r->fp32_dest_acc != 0};
        for (int i = 0; i < kTile && !unknown; ++i) out[i] = sfpu_apply(op, d[i], p0, p1, p2, mode, &unknown);
        if (unknown)
            fail(r, ERR_KERNEL, loc, "SFPU op %d (%s) has no implementation in the native runtime (compute.cpp)", op,
                 op >= 0 && op < TW_SFPU_COUNT ? kSfpuNames[op] : "?");
        write_dst(r, idst, out, loc);
    }
    tile_sfpu(r, kSfpuInstructions[op]);
}

// -- SFPU binary ops on two DST tiles, fill, unary broadcast -------------------------------------

// numpy's float32 divmod (npy_divmodf: fmod, then the floored quotient and the remainder
// with the divisor's sign; a zero divisor gives fmod's NaN and the IEEE quotient), so % and //
// of blocks are the interpreter's np.mod / np.floor_divide bit for bit.
namespace {
float np_divmod(float a, float b, bool want_mod) {
    if (b == 0.0f) return want_mod ? std::fmod(a, b) : a / b;  // numpy: NaN, +-inf or NaN
    float div, mod;
    floor_divmod(a, b, &div, &mod);
    return want_mod ? mod : div;
}
}  // namespace

// op: TW_SFPU_BINARY_* (numpy's float32 semantics, NaN and ties included).
TW_EXPORT void twrt_sfpu_binary(int32_t op, uint32_t idst0, uint32_t idst1, uint32_t odst, tw::Loc loc) {
    Run* r = compute_run(loc);
    check_dst(r, idst0, loc);
    check_dst(r, idst1, loc);
    check_dst(r, odst, loc);
    const float* a = dst_tile(r, idst0);
    const float* b = dst_tile(r, idst1);
    float out[kTile];
    switch (op) {
        case TW_SFPU_BINARY_add: binary_loop<TW_FPU_add, 0>(a, b, out); break;
        case TW_SFPU_BINARY_sub: binary_loop<TW_FPU_sub, 0>(a, b, out); break;
        case TW_SFPU_BINARY_mul: binary_loop<TW_FPU_mul, 0>(a, b, out); break;
        case TW_SFPU_BINARY_div:
            for (int i = 0; i < kTile; ++i) out[i] = a[i] / b[i];
            break;
        case TW_SFPU_BINARY_max:
            for (int i = 0; i < kTile; ++i) out[i] = np_max(a[i], b[i]);
            break;
        case TW_SFPU_BINARY_min:
            for (int i = 0; i < kTile; ++i) out[i] = np_min(a[i], b[i]);
            break;
        case TW_SFPU_BINARY_gt:
            for (int i = 0; i < kTile; ++i) out[i] = a[i] > b[i] ? 1.0f : 0.0f;
            break;
        case TW_SFPU_BINARY_lt:
            for (int i = 0; i < kTile; ++i) out[i] = a[i] < b[i] ? 1.0f : 0.0f;
            break;
        case TW_SFPU_BINARY_ge:
            for (int i = 0; i < kTile; ++i) out[i] = a[i] >= b[i] ? 1.0f : 0.0f;
            break;
        case TW_SFPU_BINARY_le:
            for (int i = 0; i < kTile; ++i) out[i] = a[i] <= b[i] ? 1.0f : 0.0f;
            break;
        case TW_SFPU_BINARY_eq:
            for (int i = 0; i < kTile; ++i) out[i] = a[i] == b[i] ? 1.0f : 0.0f;
            break;
        case TW_SFPU_BINARY_ne:
            for (int i = 0; i < kTile; ++i) out[i] = a[i] != b[i] ? 1.0f : 0.0f;
            break;
        case TW_SFPU_BINARY_mod:
            for (int i = 0; i < kTile; ++i) out[i] = np_divmod(a[i], b[i], true);
            break;
        case TW_SFPU_BINARY_floordiv:
            for (int i = 0; i < kTile; ++i) out[i] = np_divmod(a[i], b[i], false);
            break;
        default: fail(r, ERR_KERNEL, loc, "unknown SFPU binary op %d", op);
    }
    write_dst(r, odst, out, loc);
    tile_sfpu(r, TW_COST_SFPU_BINARY);
}

// where_tile: DST[odst] = DST[idst0] != 0 ? DST[idst1] : DST[idst2] (a NaN condition is true).
TW_EXPORT void twrt_where_tile(uint32_t idst0, uint32_t idst1, uint32_t idst2, uint32_t odst, tw::Loc loc) {
    Run* r = compute_run(loc);
    check_dst(r, idst0, loc);
    check_dst(r, idst1, loc);
    check_dst(r, idst2, loc);
    check_dst(r, odst, loc);
    const float* c = dst_tile(r, idst0);
    const float* t = dst_tile(r, idst1);
    const float* f = dst_tile(r, idst2);
    float out[kTile];
    for (int i = 0; i < kTile; ++i) out[i] = c[i] != 0.0f ? t[i] : f[i];
    write_dst(r, odst, out, loc);
    tile_sfpu(r, TW_COST_SFPU_BINARY);
}

TW_EXPORT void twrt_fill_tile(uint32_t idst, uint32_t bits, tw::Loc loc) {
    Run* r = compute_run(loc);
    float v;
    std::memcpy(&v, &bits, 4);
    float out[kTile];
    for (int i = 0; i < kTile; ++i) out[i] = v;
    write_dst(r, idst, out, loc);
    tile_sfpu(r, TW_COST_SFPU_FILL);
}

// dim: 1 rows (row 0 down the tile), 2 cols (column 0 across), 3 scalar ([0, 0] everywhere).
TW_EXPORT void twrt_unary_bcast(int32_t dim, uint32_t cb, uint32_t itile, uint32_t idst, tw::Loc loc) {
    Run* r = compute_run(loc);
    float t[kTile], out[kTile];
    unpack(r, int32_t(cb), itile, t, loc);
    for (int i = 0; i < kTile; ++i) {
        int row = i / 32, col = i % 32;
        out[i] = dim == 1 ? t[col] : dim == 2 ? t[row * 32] : t[0];
    }
    write_dst(r, idst, out, loc);
    tile_copy(r, cb_of(r, int32_t(cb), loc)->page_size, 1);
}


// -- SFPI: user vector code on DST (sfpi.h) --------------------------------------------------------

// An SFPU call wrapper (_llk_math_eltwise_*_sfpu_params_) hands its SFPI function DST
// itself: the header's lane model reads and writes the floats of DST directly, so every
// tile of the acquire counts as written (cleared again at the next acquire / release).
TW_EXPORT void twrt_sfpi_begin(twrt_DstView* out, tw::Loc loc) {
    Run* r = compute_run(loc);
    int cap = dst_capacity(r);
    out->dst = r->dst;
    out->tiles = cap;
    out->fp32 = r->fp32_dest_acc;
    r->dst_dirty |= cap >= 32 ? ~0u : (1u << cap) - 1;
}

// The wrapper's cost: one SFPU cycle per vector instruction the SFPI code executed.
TW_EXPORT void twrt_sfpi_end(uint64_t vector_ops, tw::Loc loc) {
    Run* r = compute_run(loc);
    tile_sfpu(r, int32_t((vector_ops + TW_COST_SFPU_PASS - 1) / TW_COST_SFPU_PASS));
}
