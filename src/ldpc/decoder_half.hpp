#pragma once
// Layered min-sum in half precision for two codewords at once, one IEEE binary16 value per
// 16-bit lane of a 32-bit word (codeword 2p in bits 0-15, 2p+1 in bits 16-31): the arithmetic
// of the f16x2 CUDA kernel (decoder_half_cuda.cu) and of its CPU model (the CPU decoder with
// DecoderConfig::arithmetic = half). On the device every step is one f16x2 instruction; on the
// host each lane is computed in float and rounded to half after every operation, which gives
// the same bits (see float_to_half). Both sides call the functions below, so the kernel is
// bit-exact with the CPU model (docs/ldpc_half.md).
//
// Units and bounds: LLRs in their natural units (no scaling), rounded to half (11 significant
// bits). Channel LLRs and the APP are clamped to +-kHalfLlrMax = 16384, messages to
// kHalfMsgMax = 2048, so q_j = L - R_j stays within 18432 and q_j + R'_j within 20480: no
// operation ever overflows half's 65504, and no infinity or NaN arises. The message cap is
// applied once per row (to the two scaled minima), the APP clamp once per edge; q_j needs no
// clamp.
//
// Hard decisions are the sign bits of the APP halves (a -0 decides bit 1, as int16 < 0 of the
// bit pattern), in the kernel, the CPU model and their syndromes alike.
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

#include "ldpc/decoder_quant.hpp"
#include "ldpc/decoder_row_degree.hpp"
#include "mimorx/core/hd.hpp"

namespace mimorx::ldpc::detail::hpair {

using u32 = std::uint32_t;

inline constexpr float kHalfLlrMax = 16384.f;  // channel and APP clamp (exact in half)
inline constexpr float kHalfMsgMax = 2048.f;   // message cap (exact in half)
inline constexpr u32 kSignBits = 0x80008000u;
inline constexpr u32 kMagBits = 0x7fff7fffu;
inline constexpr u32 kLlrMaxBits = 0x74007400u;     // +16384 in both lanes
inline constexpr u32 kMsgMaxBits = 0x68006800u;     // +2048
inline constexpr u32 kMaxFiniteBits = 0x7bff7bffu;  // +65504, the start of the running minima

// ---- binary16 <-> float, bit exact on host and device ----
MIMORX_HD std::uint32_t float_bits(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  return x;
}
MIMORX_HD float bits_float(std::uint32_t x) {
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}
// Exact (every half is a float).
MIMORX_HD float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1fu) return bits_float(sign | 0x7f800000u | (m << 13));  // inf, NaN
  if (e != 0) return bits_float(sign | ((e + 112u) << 23) | (m << 13));
  // subnormal or zero: m * 2^-24, exact in float
  const float v = float(m) * 5.9604644775390625e-8f;
  return sign ? -v : v;
}
// Round to nearest, ties to even (IEEE 754 convertFormat), subnormals kept, overflow to inf,
// NaN to a quiet NaN: what the device's cvt.rn.f16.f32 computes. Together with Figueroa's
// theorem (an operation on p-bit operands computed in a q >= 2p + 2 bit format and rounded to
// p bits is correctly rounded; binary16 p = 11, float q = 24) this makes float arithmetic
// followed by float_to_half the correctly rounded half add, subtract and multiply of the
// device (a product of two halves is even exact in float).
MIMORX_HD std::uint16_t float_to_half(float f) {
  const std::uint32_t x = float_bits(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return std::uint16_t(sign | 0x7e00u);   // NaN
  if (ax >= 0x477ff000u) return std::uint16_t(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (ax >= 0x38800000u) {                                      // normal half (>= 2^-14)
    std::uint32_t h = (ax - 0x38000000u) >> 13;  // rebias the exponent, keep 10 mantissa bits
    const std::uint32_t rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry moves the exponent up
    return std::uint16_t(sign | h);
  }
  // Subnormal half: n = round(|f| 2^24) with |f| = m 2^(e - 150).
  const std::uint32_t e = ax >> 23;
  if (e < 102) return std::uint16_t(sign);  // |f| < 2^-25: rounds to zero
  const std::uint32_t m = (ax & 0x7fffffu) | 0x800000u;
  const std::uint32_t s = 126u - e;  // 14..24
  std::uint32_t n = m >> s;
  const std::uint32_t rem = m & ((1u << s) - 1u), halfway = 1u << (s - 1u);
  if (rem > halfway || (rem == halfway && (n & 1u))) ++n;  // n may reach 0x400, the least normal
  return std::uint16_t(sign | n);
}
// v rounded to half in both lanes.
MIMORX_HD u32 hsplat(float v) { return u32(float_to_half(v)) * 0x00010001u; }
// Two floats rounded to half: lo in bits 0-15, hi in bits 16-31.
MIMORX_HD u32 pack_halves(float lo, float hi) {
#if defined(__CUDA_ARCH__)
  const __half2 h = __floats2half2_rn(lo, hi);  // one cvt.rn.f16x2.f32
  u32 r;
  std::memcpy(&r, &h, sizeof r);
  return r;
#else
  return u32(float_to_half(lo)) | (u32(float_to_half(hi)) << 16);
#endif
}
// A channel LLR as the half path reads it: clamped to +-kHalfLlrMax (exact), then rounded.
MIMORX_HD float clamp_channel(float x) {
  return x > kHalfLlrMax ? kHalfLlrMax : (x < -kHalfLlrMax ? -kHalfLlrMax : x);
}

// ---- lane operations: one f16x2 instruction each on the device, a float model on the host ----
#if defined(__CUDA_ARCH__)
__device__ __forceinline__ __half2 h2(u32 x) {
  __half2 h;
  std::memcpy(&h, &x, sizeof h);
  return h;
}
__device__ __forceinline__ u32 bits(__half2 h) {
  u32 x;
  std::memcpy(&x, &h, sizeof x);
  return x;
}
// The _rn forms are never contracted into fused multiply-adds.
__device__ __forceinline__ u32 hadd(u32 a, u32 b) { return bits(__hadd2_rn(h2(a), h2(b))); }
__device__ __forceinline__ u32 hsub(u32 a, u32 b) { return bits(__hsub2_rn(h2(a), h2(b))); }
__device__ __forceinline__ u32 hmul(u32 a, u32 b) { return bits(__hmul2_rn(h2(a), h2(b))); }
__device__ __forceinline__ u32 hmin(u32 a, u32 b) { return bits(__hmin2(h2(a), h2(b))); }
__device__ __forceinline__ u32 hmax(u32 a, u32 b) { return bits(__hmax2(h2(a), h2(b))); }
// max(a - b, 0) rounded once (fma with 1: the product is exact).
__device__ __forceinline__ u32 hsub_relu(u32 a, u32 b) {
  return bits(__hfma2_relu(h2(a), h2(0x3c003c00u), h2(b ^ kSignBits)));
}
// min(|a|, |b|) with the sign sign(a) xor sign(b) (PTX ISA, sm_86+: HMNMX2.XORSIGN on sm_90).
__device__ __forceinline__ u32 min_xorsign_abs(u32 a, u32 b) {
  u32 r;
  asm("min.xorsign.abs.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
// 0xffff in the lanes where a == b.
__device__ __forceinline__ u32 heq_mask(u32 a, u32 b) { return __heq2_mask(h2(a), h2(b)); }
// |x|: the sign bits cleared; as __habs2, ptxas folds it into the operand of the min, max or
// compare that reads it.
__device__ __forceinline__ u32 habs(u32 x) { return bits(__habs2(h2(x))); }
#else
MIMORX_HD float lane(u32 x, int i) { return half_to_float(std::uint16_t(x >> (16 * i))); }
template <class F>
MIMORX_HD u32 map2(u32 a, u32 b, F f) {
  return u32(float_to_half(f(lane(a, 0), lane(b, 0)))) |
         (u32(float_to_half(f(lane(a, 1), lane(b, 1)))) << 16);
}
// With -ffp-contract=off (cmake/MimorxWarnings.cmake) each float operation rounds once.
inline u32 hadd(u32 a, u32 b) {
  return map2(a, b, [](float x, float y) { return x + y; });
}
inline u32 hsub(u32 a, u32 b) {
  return map2(a, b, [](float x, float y) { return x - y; });
}
inline u32 hmul(u32 a, u32 b) {
  return map2(a, b, [](float x, float y) { return x * y; });
}
// min/max are exact; the path never compares +0 with -0 or a NaN, where IEEE leaves the
// choice open.
inline u32 hmin(u32 a, u32 b) {
  return map2(a, b, [](float x, float y) { return y < x ? y : x; });
}
inline u32 hmax(u32 a, u32 b) {
  return map2(a, b, [](float x, float y) { return y > x ? y : x; });
}
inline u32 hsub_relu(u32 a, u32 b) {
  const u32 d = hsub(a, b);
  u32 r = 0;
  for (int i = 0; i < 2; ++i) {
    const u32 h = (d >> (16 * i)) & 0xffffu;
    if (!(h & 0x8000u)) r |= h << (16 * i);  // negative (a result of -0 cannot occur) -> +0
  }
  return r;
}
inline u32 min_xorsign_abs(u32 a, u32 b) {
  u32 r = (a ^ b) & kSignBits;
  for (int i = 0; i < 2; ++i) {
    const u32 ma = (a >> (16 * i)) & 0x7fffu, mb = (b >> (16 * i)) & 0x7fffu;
    r |= (mb < ma ? mb : ma) << (16 * i);  // magnitudes of non-NaN halves order as integers
  }
  return r;
}
inline u32 heq_mask(u32 a, u32 b) {
  u32 r = 0;
  for (int i = 0; i < 2; ++i) {
    if (lane(a, i) == lane(b, i)) r |= 0xffffu << (16 * i);
  }
  return r;
}
inline u32 habs(u32 x) { return x & kMagBits; }
#endif

// x clamped to +-kHalfLlrMax in one instruction: min(|x|, 16384) with x's sign (the bound's
// sign bit is 0), the same as min(max(x, -16384), 16384).
MIMORX_HD u32 clamp_llr(u32 x) { return min_xorsign_abs(x, kLlrMaxBits); }

// An edge as the half path reads it: the APP word of row r of the block lies at byte offset
//   base4 + 4 r - (r >= thr ? 4 z : 0),  base4 = 4 (colz + shift), thr = z - shift,
// i.e. word colz + (r + shift) mod z; in bytes, so that the address is one add (no scaling by
// the word size per edge).
struct HalfEdge {
  int base4;
  int thr;
};
MIMORX_HD HalfEdge half_edge(const DecEdge& e, int z) {
  return HalfEdge{4 * (e.colz + e.shift), z - e.shift};
}
template <class W>
MIMORX_HD W* app_word(W* app, const HalfEdge& e, int r, int z) {
  using Byte = std::conditional_t<std::is_const_v<W>, const char, char>;
  // app + 4 r is the same for every edge of the row: one add per edge remains.
  Byte* const row = reinterpret_cast<Byte*>(app) + 4 * r;
  return reinterpret_cast<W*>(row + (e.base4 - (r >= e.thr ? 4 * z : 0)));
}

// scale() of NMS (m * alpha, alpha rounded to half) or OMS (max(m - beta, 0), beta rounded to
// half), capped at kHalfMsgMax; m >= 0.
struct Scale {
  u32 alpha = 0x3a003a00u;  // 0.75
  u32 beta = 0x38003800u;   // 0.5
  bool offset = false;
  MIMORX_HD u32 operator()(u32 m) const {
    return hmin(offset ? hsub_relu(m, beta) : hmul(m, alpha), kMsgMaxBits);
  }
};
MIMORX_HD Scale make_scale(float alpha, float beta, bool offset) {
  Scale s;
  s.alpha = hsplat(alpha);
  s.beta = hsplat(beta);
  s.offset = offset;
  return s;
}

// First pass of a row: the two smallest |q_j| (m2 >= |m1|) and, in m1's sign bits, the
// product of the signs.
struct RowScan {
  u32 m1 = kMaxFiniteBits, m2 = kMaxFiniteBits;
  MIMORX_HD void add(u32 q) {
    m2 = hmin(m2, hmax(habs(m1), habs(q)));
    m1 = min_xorsign_abs(m1, q);
  }
};
// Per row: |m1| for the equality test, and the signed scale(m1), scale(m2) (the product of all
// signs in their sign bits).
struct RowMins {
  u32 m1;
  u32 s1;
  u32 s2;
};
MIMORX_HD RowMins row_mins(const RowScan& s, const Scale& sc) {
  const u32 sign = s.m1 & kSignBits;
  const u32 m1 = habs(s.m1);
  return RowMins{m1, sc(m1) | sign, sc(s.m2) | sign};
}
struct EdgeOut {
  u32 app;
  u32 msg;
};
// Second pass of edge j: R'_j = scale(m2) where |q_j| == m1, else scale(m1) (a second edge
// with |q_j| == m1 means m2 == m1), the sign of the product of the other edges; the APP
// q_j + R'_j clamped.
MIMORX_HD EdgeOut edge_out(u32 q, const RowMins& rm) {
  const u32 eq = heq_mask(habs(q), rm.m1);
  const u32 msg = ((eq & rm.s2) | (~eq & rm.s1)) ^ (q & kSignBits);
  return EdgeOut{clamp_llr(hadd(q, msg)), msg};
}

// One row r of one layer for a codeword pair: app holds half pairs per variable, msg the pair
// of edge j at msg[j * mstride]. Exactly DEG edges; q_j and the APP addresses stay in registers
// between the passes (recomputing an address costs three ALU instructions: a third of a
// degree-19 row's ALU work).
// OPAQUE_MSG (global messages, a run-time stride): rows longer than 10 recompute the message
// addresses, from an opaque copy of the base pointer; otherwise the compiler keeps DEG 64-bit
// addresses live between the passes (128 registers in the 512-thread kernel). Not for shared
// memory: the copy would lose the address space (generic stores).
template <int DEG, bool OPAQUE_MSG = false>
MIMORX_HD void row_update_fixed(u32* app, u32* msg, int mstride, const HalfEdge* e, int r, int z,
                                const Scale& sc) {
  u32* v[DEG];
  u32 q[DEG];
  RowScan scan;
  MIMORX_UNROLL
  for (int j = 0; j < DEG; ++j) {
    v[j] = app_word(app, e[j], r, z);
    q[j] = hsub(*v[j], msg[j * mstride]);
    scan.add(q[j]);
  }
  const RowMins rm = row_mins(scan, sc);
  u32* msg2 = msg;
#if defined(__CUDA_ARCH__)
  if constexpr (OPAQUE_MSG && DEG > 10) asm("" : "+l"(msg2));
#endif
  MIMORX_UNROLL
  for (int j = 0; j < DEG; ++j) {
    const EdgeOut o = edge_out(q[j], rm);
    *v[j] = o.app;
    msg2[j * mstride] = o.msg;
  }
}

// Any degree, no register arrays: q_j goes to the APP slot in the first pass and is read back
// in the second (no other row of the layer touches that variable). Same numbers.
MIMORX_HD void row_update_inplace(u32* app, u32* msg, int mstride, const HalfEdge* e, int deg,
                                  int r, int z, const Scale& sc) {
  RowScan scan;
  for (int j = 0; j < deg; ++j) {
    u32* const v = app_word(app, e[j], r, z);
    const u32 q = hsub(*v, msg[j * mstride]);
    *v = q;
    scan.add(q);
  }
  const RowMins rm = row_mins(scan, sc);
  for (int j = 0; j < deg; ++j) {
    u32* const v = app_word(app, e[j], r, z);
    const EdgeOut o = edge_out(*v, rm);
    *v = o.app;
    msg[j * mstride] = o.msg;
  }
}

// The degrees of TS 38.212's base graphs: 3..10 (BG2, BG1 rows >= 4) and 19 (BG1 rows 0-3).
// LONG_IN_REGISTERS: degree 19 with register arrays too (the 512-thread kernel), else in place.
// OPAQUE_MSG: as for row_update_fixed (global messages).
template <bool LONG_IN_REGISTERS, bool OPAQUE_MSG = false>
MIMORX_HD void row_update(u32* app, u32* msg, int mstride, const HalfEdge* e, int deg, int r, int z,
                          const Scale& sc) {
  with_row_degree<LONG_IN_REGISTERS>(
      deg,
      [&](auto d) {
        row_update_fixed<decltype(d)::value, OPAQUE_MSG>(app, msg, mstride, e, r, z, sc);
      },
      [&] { row_update_inplace(app, msg, mstride, e, deg, r, z, sc); });
}

// Parity of the hard decisions (sign bits) of both codewords on row r: bit 15 codeword 2p,
// bit 31 codeword 2p+1 (set = unsatisfied).
MIMORX_HD u32 row_parity(const u32* app, const HalfEdge* e, int deg, int r, int z) {
  u32 p = 0;
  for (int j = 0; j < deg; ++j) p ^= *app_word(app, e[j], r, z);
  return p & kSignBits;
}

// Words of shared memory a thread's messages of a row of degree deg take: odd, so that the
// threads of a warp (stride deg_words) hit distinct banks.
MIMORX_HD int padded_degree(int deg) { return deg | 1; }

}  // namespace mimorx::ldpc::detail::hpair
