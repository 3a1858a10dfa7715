#pragma once
// The integer layered min-sum row update for two codewords at once, one per 16-bit lane of a
// 32-bit word (the paired CUDA kernel, decoder_pair_cuda.cu; the CPU runs the same functions in
// tests). It computes exactly IntArith's numbers (decoder_quant.hpp) for each codeword: the
// kernel is bit-exact with the CPU integer decoder.
//
// Why lanes of 16 bits: on sm_90 the 16x2 integer operations are single instructions
// (VIADD.16x2, VIMNMX.S16x2, VIADDMNMX.S16x2), while the 8x4 ones are emulated with 5-10
// instructions each. The APP values and messages stay int8 in memory (2 bytes per variable per
// codeword pair) and are widened with one byte permute on load.
//
// Messages are kept in full (one int8 per edge and codeword) rather than as compressed records:
// that removes the decompression from the first pass, and the second pass needs no index of the
// minimum: message j has magnitude scale(m2) when |q_j| == m1 and scale(m1) otherwise. This is
// the reference's choice (scale(m2) only at the first position of the minimum) because a second
// position with |q_j| == m1 means m2 == m1.
#include <cstdint>

#include "ldpc/decoder_quant.hpp"
#include "ldpc/decoder_row_degree.hpp"
#include "mimorx/core/hd.hpp"

namespace mimorx::ldpc::detail::pair {

using u32 = std::uint32_t;

// ---- lane primitives: bits 0-15 codeword 2p, bits 16-31 codeword 2p+1, two's complement ----
#if defined(__CUDA_ARCH__)
MIMORX_HD u32 add(u32 a, u32 b) { return __vadd2(a, b); }
MIMORX_HD u32 sub(u32 a, u32 b) { return __vsub2(a, b); }
MIMORX_HD u32 min(u32 a, u32 b) { return __vmins2(a, b); }
MIMORX_HD u32 max(u32 a, u32 b) { return __vmaxs2(a, b); }
MIMORX_HD u32 add_max(u32 a, u32 b, u32 c) { return __viaddmax_s16x2(a, b, c); }
MIMORX_HD u32 add_min(u32 a, u32 b, u32 c) { return __viaddmin_s16x2(a, b, c); }
// int8 pair in bits 0-15 -> sign-extended int16 lanes (prmt's sign-replicate selectors, which
// __byte_perm masks off).
MIMORX_HD u32 widen(u32 b) {
  u32 r;
  asm("prmt.b32 %0, %1, 0, 0x9180;" : "=r"(r) : "r"(b));
  return r;
}
// 0xffff in each negative lane, 0 elsewhere (only bits 15 and 31 are read).
MIMORX_HD u32 sign_mask(u32 x) {
  u32 r;
  asm("prmt.b32 %0, %1, 0, 0xbb99;" : "=r"(r) : "r"(x));
  return r;
}
// int16 lanes whose values fit int8 -> int8 pair in bits 0-15.
MIMORX_HD u32 narrow(u32 x) { return __byte_perm(x, 0, 0x0020); }
#else
MIMORX_HD int lane(u32 x, int i) { return int(std::int16_t(std::uint16_t(x >> (16 * i)))); }
MIMORX_HD u32 lanes(int lo, int hi) {
  return u32(std::uint16_t(std::int16_t(lo))) | (u32(std::uint16_t(std::int16_t(hi))) << 16);
}
template <class F>
MIMORX_HD u32 map2(u32 a, u32 b, F f) {
  return lanes(f(lane(a, 0), lane(b, 0)), f(lane(a, 1), lane(b, 1)));
}
MIMORX_HD u32 add(u32 a, u32 b) {
  return map2(a, b, [](int x, int y) { return x + y; });
}
MIMORX_HD u32 sub(u32 a, u32 b) {
  return map2(a, b, [](int x, int y) { return x - y; });
}
MIMORX_HD u32 min(u32 a, u32 b) {
  return map2(a, b, [](int x, int y) { return x < y ? x : y; });
}
MIMORX_HD u32 max(u32 a, u32 b) {
  return map2(a, b, [](int x, int y) { return x > y ? x : y; });
}
MIMORX_HD u32 add_max(u32 a, u32 b, u32 c) { return max(add(a, b), c); }
MIMORX_HD u32 add_min(u32 a, u32 b, u32 c) { return min(add(a, b), c); }
MIMORX_HD u32 widen(u32 b) {
  return lanes(int(std::int8_t(std::uint8_t(b))), int(std::int8_t(std::uint8_t(b >> 8))));
}
MIMORX_HD u32 sign_mask(u32 x) {
  return ((x & 0x8000u) ? 0x0000ffffu : 0u) | ((x & 0x80000000u) ? 0xffff0000u : 0u);
}
MIMORX_HD u32 narrow(u32 x) { return (x & 0xffu) | ((x >> 8) & 0xff00u); }
#endif

MIMORX_HD u32 splat(int v) { return (u32(v) & 0xffffu) * 0x00010001u; }
MIMORX_HD u32 clamp127(u32 x) { return min(max(x, 0xff81ff81u), 0x007f007fu); }
// |x| for lanes in [-32767, 32767]: (x ^ s) - s with s = -1 in the negative lanes.
MIMORX_HD u32 magnitude(u32 x) {
  const u32 s = sign_mask(x);
  return sub(x ^ s, s);
}

// IntArith's scale() on both lanes, for magnitudes m in [0, 127].
struct Scale {
  u32 alpha16 = 12;  // NMS: (m * alpha16) >> 4; m * alpha16 <= 127 * 16 stays inside a lane
  u32 neg_beta = 0;  // OMS: max(m - beta, 0), beta clamped to 255 (any larger beta gives 0)
  bool offset = false;
  u32 msg_max = splat(31);

  explicit Scale(const IntArith& a)
      : alpha16(u32(a.alpha16)),
        neg_beta(splat(-(a.beta_q < 255 ? a.beta_q : 255))),
        offset(a.offset),
        msg_max(splat(a.msg_max)) {}
  MIMORX_HD u32 operator()(u32 m) const {
    const u32 s = offset ? add_max(m, neg_beta, 0u) : ((m * alpha16) >> 4) & 0x0fff0fffu;
    return min(s, msg_max);
  }
};

// An edge as the paired update reads it: variable of row r at word
//   base + r - (r >= thr ? z : 0),  base = colz + shift, thr = z - shift,
// i.e. colz + (r + shift) mod z in three instructions.
struct PairEdge {
  int base;
  int thr;
};
MIMORX_HD PairEdge pair_edge(const DecEdge& e, int z) {
  return PairEdge{e.colz + e.shift, z - e.shift};
}
MIMORX_HD int variable(const PairEdge& e, int r, int z) {
  return e.base + r - (r >= e.thr ? z : 0);
}

// Per row: the values the second pass needs. With a = |q_j| (<= 127) the message magnitude is
//   max(sm2 + 32 (m1 - a), sm1) = -min(32 a - (sm2 + 32 m1), -sm1)
// which is sm2 for a == m1 and sm1 for a > m1: then a >= m2 > m1 or m2 == m1, and scale() never
// widens a gap (sm2 - sm1 <= m2 - m1: alpha16 <= 16, or an offset), so sm2 + 32 (m1 - a) <= sm1.
// Every term fits a lane (32 a <= 4064).
struct RowMins {
  u32 neg_sm2_m1;  // -(sm2 + 32 m1)
  u32 neg_sm1;     // -sm1
  u32 total_mask;  // 0xffff in lanes whose sign product is negative
};
MIMORX_HD RowMins row_mins(u32 m1, u32 m2, u32 sign_xor, const Scale& sc) {
  const u32 sm1 = sc(m1), sm2 = sc(m2);
  return RowMins{sub(0u, add(sm2, m1 << 5)), sub(0u, sm1), sign_mask(sign_xor)};
}
// First pass of a row: the two smallest |q_j| and the product of the signs (bits 15, 31 of the
// running xor), both lanes at once.
struct RowScan {
  u32 m1 = splat(127), m2 = splat(127), sign_xor = 0;
  MIMORX_HD void add(u32 q) {
    const u32 a = magnitude(q);
    m2 = min(m2, max(m1, a));
    m1 = min(m1, a);
    sign_xor ^= q;
  }
};
// The new message of an edge with q = q_j and a = |q_j|.
MIMORX_HD u32 new_message(u32 q, u32 a, const RowMins& rm) {
  const u32 neg_mag = add_min(a << 5, rm.neg_sm2_m1, rm.neg_sm1);
  const u32 keep = ~(sign_mask(q) ^ rm.total_mask);  // 0xffff where the message is >= 0
  return sub(neg_mag ^ keep, keep);                  // negate neg_mag in those lanes
}
// First pass of edge j on widened lanes: q_j = sat(L_v - R_j).
MIMORX_HD u32 edge_q(u32 app_v, u32 msg_j) { return clamp127(sub(app_v, msg_j)); }
// Second pass of edge j on widened lanes: the new message R'_j and the APP sat(q_j + R'_j).
struct EdgeOut {
  u32 app;
  u32 msg;
};
MIMORX_HD EdgeOut edge_out(u32 q, const RowMins& rm) {
  // |q_j| again (3 instructions) rather than a register array of magnitudes
  const u32 rn = new_message(q, magnitude(q), rm);
  return EdgeOut{clamp127(add(q, rn)), rn};
}
// Second pass of edge j: the new message, the APP q_j + R_j saturated, both stored.
template <class Word>
MIMORX_HD void finish_edge(Word* app_v, Word* msg_j, u32 q, const RowMins& rm) {
  const EdgeOut o = edge_out(q, rm);
  *app_v = Word(narrow(o.app));
  *msg_j = Word(narrow(o.msg));
}

// One row r of one layer for a codeword pair: app holds int8 pairs per variable, msg the int8
// pair of edge j at msg[j * mstride]. Exactly DEG edges (no per-edge predicates); q_j stays in
// registers between the passes, and the addresses too for DEG <= 10.
template <int DEG, class Word>
MIMORX_HD void row_update_fixed(Word* app, Word* msg, int mstride, const PairEdge* e, int r, int z,
                                const Scale& sc) {
  // Long rows recompute the addresses in the second pass (4 instructions per edge) instead of
  // holding them: ~20 registers fewer, which is what limits the resident threads.
  constexpr bool kKeepAddresses = DEG <= 10;
  int v[kKeepAddresses ? DEG : 1];
  u32 q[DEG];
  RowScan scan;
  MIMORX_UNROLL
  for (int j = 0; j < DEG; ++j) {
    const int vj = variable(e[j], r, z);
    if constexpr (kKeepAddresses) v[j] = vj;
    q[j] = edge_q(widen(app[vj]), widen(msg[j * mstride]));
    scan.add(q[j]);
  }
  const RowMins rm = row_mins(scan.m1, scan.m2, scan.sign_xor, sc);
  MIMORX_UNROLL
  for (int j = 0; j < DEG; ++j) {
    int vj;
    if constexpr (kKeepAddresses) {
      vj = v[j];
    } else {
      vj = variable(e[j], r, z);
    }
    finish_edge(&app[vj], &msg[j * mstride], q[j], rm);
  }
}

// Any degree, no register arrays: q_j goes to the APP slot in the first pass (it fits int8 after
// the clamp) and is read back in the second. For degrees without a fixed-size version.
template <class Word>
MIMORX_HD void row_update_inplace(Word* app, Word* msg, int mstride, const PairEdge* e, int deg,
                                  int r, int z, const Scale& sc) {
  RowScan scan;
  for (int j = 0; j < deg; ++j) {
    const int v = variable(e[j], r, z);
    const u32 q = edge_q(widen(app[v]), widen(msg[j * mstride]));
    app[v] = Word(narrow(q));
    scan.add(q);
  }
  const RowMins rm = row_mins(scan.m1, scan.m2, scan.sign_xor, sc);
  for (int j = 0; j < deg; ++j) {
    const int v = variable(e[j], r, z);
    finish_edge(&app[v], &msg[j * mstride], widen(app[v]), rm);
  }
}

// The degrees of TS 38.212's base graphs: 3..10 (BG2, BG1 rows >= 4) and 19 (BG1 rows 0-3).
// LONG_IN_REGISTERS: degree 19 with register arrays too (needs ~90 registers: the 512-thread
// kernel), else in place.
template <bool LONG_IN_REGISTERS, class Word>
MIMORX_HD void row_update(Word* app, Word* msg, int mstride, const PairEdge* e, int deg, int r,
                          int z, const Scale& sc) {
  with_row_degree<LONG_IN_REGISTERS>(
      deg, [&](auto d) { row_update_fixed<decltype(d)::value>(app, msg, mstride, e, r, z, sc); },
      [&] { row_update_inplace(app, msg, mstride, e, deg, r, z, sc); });
}

// Parity of the hard decisions of both codewords on row r: bit 7 codeword 2p, bit 15 codeword
// 2p+1 (set = unsatisfied).
template <class Word>
MIMORX_HD u32 row_parity(const Word* app, const PairEdge* e, int deg, int r, int z) {
  u32 p = 0;
  for (int j = 0; j < deg; ++j) p ^= u32(app[variable(e[j], r, z)]);
  return p & 0x8080u;
}

}  // namespace mimorx::ldpc::detail::pair
