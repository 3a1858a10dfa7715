#pragma once
// Compressed check-to-variable records of the f16x2 kernel (decoder_half_cuda.cu) for the
// messages it keeps in the global workspace: per row and codeword pair, instead of one half
// pair per edge, the two message magnitudes |scale(m1)|, |scale(m2)|, the index of the edge
// that received scale(m2) and every edge's message sign. The record gives back the messages
// bit for bit (signed zeros included), so the kernel computes the numbers of
// hpair::row_update_fixed (decoder_half.hpp) and stays bit-exact with the CPU model.
//
// Layout (32-bit words, lane 0 = codeword 2p in bits 0-15, lane 1 = 2p+1 in bits 16-31), word w
// of a row at rec[w * stride]:
//   degree <= 10: w0 = sign bit of edge j's message at bit j of the lane, index at bits 10-14;
//                 w1 = |scale(m1)|, w2 = |scale(m2)| as half pairs.
//   degree 19:    w0 = sign bits of edges 0-15, w1, w2 as above, w3 = sign bits of edges 16-18
//                 at bits 0-2 and the index at bits 10-14.
// The index field alone (bits 10-14, the rest cleared) is the half 2^(index - 15), or +0 for
// index 0: one half compare per edge (HSET2) tells the edge that took scale(m2).
// 3 words instead of deg (4 instead of 19): at BG1 R=1/3 (316 edges in 46 rows) 0.45 of the
// bytes of full messages, so that the workspace of the resident blocks stays in L2.
#include "ldpc/decoder_half.hpp"

namespace mimorx::ldpc::detail::hrec {

using hpair::u32;

// The degrees TS 38.212's base graphs have: 3..10 and 19.
__host__ __device__ constexpr bool record_degree(int deg) {
  return (deg >= 3 && deg <= 10) || deg == 19;
}
__host__ __device__ constexpr int record_words(int deg) { return deg <= 10 ? 3 : 4; }

// The words of one row's record, loaded ahead of the row's update: a row's record is read and
// written only by its own thread, so the kernel loads the next layer's record before it
// updates the current one, and the load's latency (an L2 or DRAM access) passes under a
// layer's work instead of stalling it.
struct Record {
  u32 w0 = 0, s1 = 0, s2 = 0, w3 = 0;
};
__device__ __forceinline__ Record load_record(const u32* rec, int stride, int deg) {
  Record c;
  c.w0 = rec[0];
  c.s1 = rec[stride];
  c.s2 = rec[2 * stride];
  if (deg > 10) c.w3 = rec[3 * stride];
  return c;
}

// Row r of one layer for a codeword pair, exactly DEG edges: updates the APP as
// hpair::row_update_fixed<DEG> does with the messages the row's record holds (`cur` with AHEAD,
// else loaded from rec), and writes the new record to rec. q_j stays in registers between the
// passes, the APP addresses too for DEG <= 10 and, with KEEP_LONG (the 512-thread kernel's register
// budget), for degree 19.
template <int DEG, bool KEEP_LONG, bool AHEAD>
__device__ __forceinline__ void row_update_fixed(u32* app, u32* rec, int stride,
                                                 const hpair::HalfEdge* e, int r, int z,
                                                 const hpair::Scale& sc, const Record& cur) {
  static_assert(record_degree(DEG), "no record layout for this degree");
  constexpr bool kKeepAddresses = DEG <= 10 || KEEP_LONG;
  constexpr int kIndexShift = 10;
  constexpr u32 kIndexBits = 0x7c007c00u;
  u32* v[kKeepAddresses ? DEG : 1];
  u32 q[DEG];
  const u32 w0 = AHEAD ? cur.w0 : rec[0];
  const u32 s1 = AHEAD ? cur.s1 : rec[stride];
  const u32 s2 = AHEAD ? cur.s2 : rec[2 * stride];
  const u32 w3 = DEG <= 10 ? 0u : AHEAD ? cur.w3 : rec[3 * stride];
  const u32 s1_xor_s2 = s1 ^ s2;
  const u32 index = (DEG <= 10 ? w0 : w3) & kIndexBits;
  hpair::RowScan scan;
  MIMORX_UNROLL
  for (int j = 0; j < DEG; ++j) {
    u32* const vj = hpair::app_word(app, e[j], r, z);
    if constexpr (kKeepAddresses) v[j] = vj;
    // The index field equals edge j's as halves exactly where edge j received scale(m2).
    const u32 at_index = hpair::heq_mask(index, (u32(j) << kIndexShift) * 0x00010001u);
    const u32 sign = (j < 16 ? (w0 << (15 - j)) : (w3 << (31 - j))) & hpair::kSignBits;
    q[j] = hpair::hsub(*vj, (s1 ^ (at_index & s1_xor_s2)) | sign);
    scan.add(q[j]);
  }
  hpair::RowMins rm = hpair::row_mins(scan, sc);
  // The signed minima once per row: otherwise the compiler folds their sign into every edge's
  // select (4 logic instructions per edge instead of 2).
  asm("" : "+r"(rm.s1), "+r"(rm.s2));
  u32 new_index = 0, signs_lo = 0, signs_hi = 0;
  MIMORX_UNROLL
  for (int j = 0; j < DEG; ++j) {
    u32* vj;
    if constexpr (kKeepAddresses) {
      vj = v[j];
    } else {
      vj = hpair::app_word(app, e[j], r, z);
    }
    // hpair::edge_out, keeping the equality mask: the last edge with |q_j| == m1 becomes the
    // index (several such edges mean m2 == m1: their messages are equal).
    const u32 eq = hpair::heq_mask(hpair::habs(q[j]), rm.m1);
    const u32 msg = ((eq & rm.s2) | (~eq & rm.s1)) ^ (q[j] & hpair::kSignBits);
    *vj = hpair::clamp_llr(hpair::hadd(q[j], msg));
    new_index = (new_index & ~eq) | (((u32(j) << kIndexShift) * 0x00010001u) & eq);
    if (j < 16) {
      signs_lo |= (msg >> (15 - j)) & (0x00010001u << j);
    } else {
      signs_hi |= (msg >> (31 - j)) & (0x00010001u << (j - 16));
    }
  }
  rec[stride] = rm.s1 & hpair::kMagBits;
  rec[2 * stride] = rm.s2 & hpair::kMagBits;
  if constexpr (DEG <= 10) {
    rec[0] = signs_lo | new_index;
  } else {
    rec[0] = signs_lo;
    rec[3 * stride] = signs_hi | new_index;
  }
}

// Dispatch on the row's degree (record_degree(deg) holds: the plan checks the tables).
template <bool KEEP_LONG, bool AHEAD>
__device__ __forceinline__ void row_update(u32* app, u32* rec, int stride, const hpair::HalfEdge* e,
                                           int deg, int r, int z, const hpair::Scale& sc,
                                           const Record& cur) {
  // Degree 19 is the only one with_row_degree leaves to `other` here.
  with_row_degree<false>(
      deg,
      [&](auto d) {
        row_update_fixed<decltype(d)::value, KEEP_LONG, AHEAD>(app, rec, stride, e, r, z, sc, cur);
      },
      [&] { row_update_fixed<19, KEEP_LONG, AHEAD>(app, rec, stride, e, r, z, sc, cur); });
}

}  // namespace mimorx::ldpc::detail::hrec
