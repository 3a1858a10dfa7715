#pragma once
// The paired layered min-sum row update in half precision, for gpubench_ceiling's f16x2
// ceilings: two codewords per 32-bit word as in decoder_pair.hpp, but each lane an IEEE half
// (codeword 2p in bits 0-15, 2p+1 in bits 16-31) in the integer path's units (APP within
// +-127, messages capped at msg_max; half represents every integer up to 2048 exactly), so the
// same values flow through and only the instructions differ. Device only; not bit-exact with
// the integer decoder (NMS scales by alpha instead of flooring (m alpha16) >> 4), hence not in
// src/ldpc.
//
// The steps of decoder_pair.hpp and how each is computed here:
//   edge_q    q_j = L_v - R_j (HADD2), saturated at +-127 (two half min/max) where clamped;
//   RowScan   xorsign: m2 = min(m2, max(|m1|, |q|)) and m1 = min.xorsign.abs(m1, q), which keeps
//             min(|m1|, |q|) and the running sign product in m1's sign bit (one instruction for
//             the minimum and the sign, sm_86+);
//             hmin: the same minima with __hmin2/__hmax2 on |q| and the signs in a running xor
//             (what sm_80 has);
//   row_mins  scale() by __hmul2 (NMS) or __hfma2_relu(m, 1, -beta) (OMS: max(m - beta, 0) in
//             one instruction), capped at msg_max with __hmin2, the sign product ORed in;
//   edge_out  |q_j| == |m1| (a half compare to a lane mask) picks the signed scale(m2) or
//             scale(m1) (one LOP3), q_j's sign xored in (one LOP3); APP = q_j + R'_j (HADD2),
//             saturated at +-127 where clamped.
// The clamps: f16x2_xorsign and f16x2_hmin clamp q_j and the APP as the integer path does;
// f16x2_xorsign_nosat clamps nothing (with messages capped at msg_max, |APP| <= channel limit +
// 19 msg_max stays far below half's 65504: half storage needs no clamp); f16x2_xorsign_i8 clamps
// the APP only, which its int8 storage needs.
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>

#include "ldpc/decoder_pair.hpp"
#include "ldpc/decoder_quant.hpp"

namespace mimorx::ldpc::detail::half_pair {

using u32 = std::uint32_t;

// f16x2_decoder: the decoder's own half-precision row update (src/ldpc/decoder_half.hpp, the
// f16x2 kernel's arithmetic: q_j unclamped, the APP clamped by one min.xorsign.abs, messages
// capped per row), with the kernel's odd message stride in the row ceiling.
enum class Mix {
  int16x2,
  f16x2_xorsign,
  f16x2_hmin,
  f16x2_xorsign_nosat,
  f16x2_xorsign_i8,
  f16x2_decoder
};
inline const char* mix_name(Mix m) {
  switch (m) {
    case Mix::int16x2:
      return "int16x2";
    case Mix::f16x2_xorsign:
      return "f16x2_xorsign";
    case Mix::f16x2_hmin:
      return "f16x2_hmin";
    case Mix::f16x2_xorsign_nosat:
      return "f16x2_xorsign_nosat";
    case Mix::f16x2_xorsign_i8:
      return "f16x2_xorsign_i8";
    case Mix::f16x2_decoder:
      return "f16x2_decoder";
  }
  return "?";
}

__host__ __device__ inline __half2 h2(u32 x) {
  __half2 h;
  std::memcpy(static_cast<void*>(&h), &x, sizeof h);  // __half2 is 4 bytes, no padding
  return h;
}
__host__ __device__ inline u32 bits(__half2 h) {
  u32 x;
  std::memcpy(&x, static_cast<const void*>(&h), sizeof x);
  return x;
}
// v in both lanes (v an integer of magnitude <= 2048: exact).
__host__ __device__ inline u32 hsplat(int v) { return bits(__float2half2_rn(float(v))); }

constexpr u32 kSignBits = 0x80008000u;
constexpr u32 kMagBits = 0x7fff7fffu;

// min(|a|, |b|) per lane with the sign sign(a) xor sign(b) (PTX ISA, sm_86+).
__device__ __forceinline__ u32 min_xorsign_abs(u32 a, u32 b) {
  u32 r;
  asm("min.xorsign.abs.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
__device__ __forceinline__ u32 hadd(u32 a, u32 b) { return bits(__hadd2(h2(a), h2(b))); }
__device__ __forceinline__ u32 hsub(u32 a, u32 b) { return bits(__hsub2(h2(a), h2(b))); }
__device__ __forceinline__ u32 hmin(u32 a, u32 b) { return bits(__hmin2(h2(a), h2(b))); }
__device__ __forceinline__ u32 hmax(u32 a, u32 b) { return bits(__hmax2(h2(a), h2(b))); }
__device__ __forceinline__ u32 habs(u32 a) { return bits(__habs2(h2(a))); }
__device__ __forceinline__ u32 clamp127(u32 x) { return hmin(hmax(x, hsplat(-127)), hsplat(127)); }

// IntArith's scale() in half: alpha16 / 16 as a factor, beta_q as an offset, the same cap.
struct Scale {
  u32 alpha;     // NMS factor in both lanes
  u32 neg_beta;  // OMS: -beta in both lanes
  u32 one = hsplat(1);
  u32 msg_max;
  bool offset;
  explicit Scale(const IntArith& a)
      : alpha(bits(__float2half2_rn(float(a.alpha16) / 16.0f))),
        neg_beta(hsplat(-(a.beta_q < 255 ? a.beta_q : 255))),
        msg_max(hsplat(a.msg_max)),
        offset(a.offset) {}
  __device__ u32 operator()(u32 m) const {
    const u32 s =
        offset ? bits(__hfma2_relu(h2(m), h2(one), h2(neg_beta))) : bits(__hmul2(h2(m), h2(alpha)));
    return hmin(s, msg_max);
  }
};

// Which clamps a mix computes: q_j and the APP at +-127 (as the integer path), only the APP (what
// int8 storage needs), or none (half storage).
template <Mix M>
inline constexpr bool kSatQ = M == Mix::f16x2_xorsign || M == Mix::f16x2_hmin;
template <Mix M>
inline constexpr bool kSatApp = M != Mix::f16x2_xorsign_nosat;
template <Mix M>
inline constexpr bool kXorsign =
    M == Mix::f16x2_xorsign || M == Mix::f16x2_xorsign_nosat || M == Mix::f16x2_xorsign_i8;
// The row ceiling's storage: int8 pairs (16-bit words) or half pairs (32-bit words).
template <Mix M>
inline constexpr bool kInt8Storage = M == Mix::f16x2_xorsign_i8;

// int8 storage: each value v as the byte v + 128 (excess-128). Widening puts the byte under the
// exponent of 1024 (one byte permute): the half 1152 + v. Differences of two such halves are the
// exact L - R, so the bias never needs removing.
__device__ __forceinline__ u32 widen_excess(u32 w) {
  // the constant as the first operand: the selector stays an immediate (no register per use)
  return __byte_perm(0x64646464u, w, 0x0504);
}
// A half x in [-127, 127] back to its byte: 1152 + x rounds to an integer (the spacing of halves
// in [1024, 2048) is 1) whose low byte is x + 128; the two low bytes gathered into bits 0-15.
__device__ __forceinline__ u32 narrow_excess(u32 x) {
  return __byte_perm(hadd(x, hsplat(1152)), 0, 0x0020);
}

// First pass of edge j: q_j = L_v - R_j.
template <Mix M>
__device__ __forceinline__ u32 edge_q(u32 app_v, u32 msg_j) {
  const u32 q = hsub(app_v, msg_j);
  return kSatQ<M> ? clamp127(q) : q;
}

// The two smallest |q_j| and the sign product of a row. xorsign: m1 carries the sign product in
// its sign bits; hmin: sign_xor does.
template <Mix M>
struct RowScan {
  u32 m1 = hsplat(127), m2 = hsplat(127), sign_xor = 0;
  __device__ __forceinline__ void add(u32 q) {
    if constexpr (kXorsign<M>) {
      m2 = hmin(m2, hmax(habs(m1), habs(q)));
      m1 = min_xorsign_abs(m1, q);
    } else {
      const u32 a = habs(q);
      m2 = hmin(m2, hmax(m1, a));
      m1 = hmin(m1, a);
      sign_xor ^= q;
    }
  }
};

// Per row: |m1| for the equality test, scale(m1) and scale(m2) carrying the sign product.
struct RowMins {
  u32 m1;
  u32 s1;
  u32 s2;
};
template <Mix M>
__device__ __forceinline__ RowMins row_mins(const RowScan<M>& s, const Scale& sc) {
  const u32 sign = (kXorsign<M> ? s.m1 : s.sign_xor) & kSignBits;
  const u32 m1 = s.m1 & kMagBits;
  return RowMins{m1, sc(m1) | sign, sc(s.m2) | sign};
}

struct EdgeOut {
  u32 app;
  u32 msg;
};
// Second pass of edge j: R'_j = (|q_j| == m1 ? scale(m2) : scale(m1)) with sign
// sign(q_j) xor the product (a second edge with |q_j| == m1 means m2 == m1, as in the integer
// path); APP = q_j + R'_j.
template <Mix M>
__device__ __forceinline__ EdgeOut edge_out(u32 q, const RowMins& rm) {
  const u32 eq = __heq2_mask(__habs2(h2(q)), h2(rm.m1));
  const u32 msg = ((eq & rm.s2) | (~eq & rm.s1)) ^ (q & kSignBits);
  const u32 app = hadd(q, msg);
  return EdgeOut{kSatApp<M> ? clamp127(app) : app, msg};
}

// decoder_pair.hpp's row_update_fixed in half pairs: row r of one layer, exactly DEG edges, q_j
// and the addresses (DEG <= 10) in registers between the passes. Word: u32 half pairs, or
// std::uint16_t excess-128 int8 pairs (kInt8Storage) widened and narrowed on the way.
template <int DEG, Mix M, class Word>
__device__ __forceinline__ void row_update_fixed(Word* app, Word* msg, int mstride,
                                                 const pair::PairEdge* e, int r, int z,
                                                 const Scale& sc) {
  constexpr bool kKeepAddresses = DEG <= 10;
  const auto load = [](Word w) { return kInt8Storage<M> ? widen_excess(u32(w)) : u32(w); };
  const auto store = [](u32 x) { return Word(kInt8Storage<M> ? narrow_excess(x) : x); };
  int v[kKeepAddresses ? DEG : 1];
  u32 q[DEG];
  RowScan<M> scan;
#pragma unroll
  for (int j = 0; j < DEG; ++j) {
    const int vj = pair::variable(e[j], r, z);
    if constexpr (kKeepAddresses) v[j] = vj;
    q[j] = edge_q<M>(load(app[vj]), load(msg[j * mstride]));
    scan.add(q[j]);
  }
  const RowMins rm = row_mins(scan, sc);
#pragma unroll
  for (int j = 0; j < DEG; ++j) {
    int vj;
    if constexpr (kKeepAddresses) {
      vj = v[j];
    } else {
      vj = pair::variable(e[j], r, z);
    }
    const EdgeOut o = edge_out<M>(q[j], rm);
    app[vj] = store(o.app);
    msg[j * mstride] = store(o.msg);
  }
}

}  // namespace mimorx::ldpc::detail::half_pair
