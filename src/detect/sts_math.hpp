#pragma once
// The single tree search (STS) of one received vector (include/mimorx/detect/sts.hpp), written
// once (MIMORX_HD, fixed-size state, no allocation) for the CPU reference and the CUDA kernel
// (sts_cuda.cu).
//
// Tree: sphere_math.hpp's real-valued model after its QR, column k of R is tree level k + 1,
// the search fixes columns n-1 first. Each real column decides some output bits (BitTable); a
// path's bits are a uint64 in the output order of one vector (bit t*m + k), nt * m <= 64.
//
// State beside the ML hypothesis (bits `ml`, metric lml): lam[j], the smallest metric found so
// far among the leaves whose bit j differs from ml's. The metric of the best leaf with bit j =
// b is then lml when b = ml_j and lam[j] otherwise. A leaf x with metric d can lower one of
// these only if d < lml or d < lam[j] for some j with x_j != ml_j; a node's partial metric is a
// lower bound of its leaves' metrics, so the subtree of a node whose fixed columns are >= k is
// pruned when its partial metric is >= its radius
//   rc = max(lml, max{lam[j] : j fixed and x_j != ml_j}, max{lam[j] : j not fixed})
// (Studer et al. 2008). Every such value only decreases during the search (a
// flipped ML bit j takes the old lml, which is below the old lam[j]), so a subtree pruned once
// holds nothing that could lower them later: the result is exact max-log.
// rc splits into up(k) (fixed columns above k: the path's), low(k) (columns below k) and the
// column's own bits; the siblings of column k come in increasing partial metric (Schnorr-
// Euchner), and all siblings from the first whose metric reaches
//   rp = max(lml, up(k), low(k + 1)) >= rc of every sibling
// on are pruned at once. With clipping every lam[j] is capped at lml + clip N0.
//
// Use (sts_cpu.cpp, sts_cuda.cu with one vector per thread): per channel real_model and
// sorted_qr (sphere_math.hpp) give R and perm; per vector z = Q^T y (sphere::project), a state
// (State, under 1 KB, or the kernel's shared-memory one) holding z, search(), then
// write_outputs(). The BitTable (2 KB, per plan) is copied to each block's shared memory by the
// kernel.
#include <cstdint>

#include "detect/sphere_math.hpp"
#include "detect/sphere_se.hpp"
#include "mimorx/core/hd.hpp"
#include "mimorx/modem/demap.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::detect::sts {

inline constexpr int kMaxBits = 64;    // nt * m <= 8 * 8
inline constexpr int kMaxLevels = 16;  // levels per real axis (256-QAM)
using sphere::kMaxReal;

// The output bits of each real column c of the model: mask[c] = the bits it decides, ones[c][l]
// = those of them that are 1 at level l (38.211 labelling: QAM stream t's bit 2j is bit j of its
// real axis, bit 2j + 1 bit j of its imaginary axis; BPSK level 0 is amplitude -1, bit 1).
struct BitTable {
  std::uint64_t mask[kMaxReal];
  std::uint64_t ones[kMaxReal][kMaxLevels];
};

MIMORX_HD void make_bit_table(Modulation mod, int nt, BitTable& tab) {
  const int m = bits_per_symbol(mod);
  for (int c = 0; c < kMaxReal; ++c) {
    tab.mask[c] = 0;
    for (int l = 0; l < kMaxLevels; ++l) tab.ones[c][l] = 0;
  }
  if (mod == Modulation::bpsk) {
    for (int t = 0; t < nt; ++t) {
      tab.mask[t] = std::uint64_t(1) << t;
      tab.ones[t][0] = std::uint64_t(1) << t;
    }
    return;
  }
  const int kb = axis_bits(mod), L = axis_levels(mod);
  for (int c = 0; c < 2 * nt; ++c) {
    const int t = c % nt, axis = c / nt;
    for (int l = 0; l < L; ++l) {
      std::uint8_t cb[4] = {0, 0, 0, 0};
      pam_level_bits(mod, l, cb);
      for (int j = 0; j < kb; ++j) {
        const std::uint64_t bit = std::uint64_t(1) << (t * m + 2 * j + axis);
        tab.mask[c] |= bit;
        if (cb[j]) tab.ones[c][l] |= bit;
      }
    }
  }
}

MIMORX_HD int lowest_bit(std::uint64_t x) {
#ifdef __CUDA_ARCH__
  return __ffsll(static_cast<long long>(x)) - 1;
#else
  return __builtin_ctzll(x);
#endif
}

// max(v, lam(j) for the bits j of mask).
template <class St>
MIMORX_HD float max_over(St& st, std::uint64_t mask, float v) {
  while (mask) {
    const float x = st.lam(lowest_bit(mask));
    v = x > v ? x : v;
    mask &= mask - 1;
  }
  return v;
}

MIMORX_HD float fmax3(float a, float b, float c) {
  const float ab = a > b ? a : b;
  return ab > c ? ab : c;
}

// The search state of one vector (the CPU's: arrays on the stack). The accessors z, w, span, pm,
// amp are sphere_se.hpp's Schnorr-Euchner enumeration state (se_enter); xb, up, low, lam are the
// STS's. search() and write_outputs() take any type with these accessors (the CUDA kernel's lives
// in shared memory, interleaved across a block's threads).
struct State {
  const float* zp = nullptr;  // z = Q^T y, n values
  float wv[kMaxReal], pmv[kMaxReal + 1], ampv[kMaxReal];
  int spanv[kMaxReal];
  std::uint64_t xbv[kMaxReal + 1];  // bits of the fixed columns >= k (xb(n) = 0)
  float upv[kMaxReal];              // max lam over the fixed columns > k, bits differing from ml
  float lowv[kMaxReal + 1];         // max lam over the columns < k (low(0) = 0)
  float lamv[kMaxBits];             // counter-hypothesis metric per bit
  MIMORX_HD float z(int k) const { return zp[k]; }
  MIMORX_HD float& w(int k) { return wv[k]; }
  MIMORX_HD int& span(int k) { return spanv[k]; }
  MIMORX_HD float& pm(int k) { return pmv[k]; }
  MIMORX_HD float& amp(int k) { return ampv[k]; }
  MIMORX_HD std::uint64_t& xb(int k) { return xbv[k]; }
  MIMORX_HD float& up(int k) { return upv[k]; }
  MIMORX_HD float& low(int k) { return lowv[k]; }
  MIMORX_HD float& lam(int j) { return lamv[j]; }
};

// The same state interleaved across BT threads (the CUDA kernel's shared memory): word w of
// thread t at w * BT + t, the xb of every thread first (n + 1 uint64 each), then z, w, span,
// amp, up (n words each), pm, low (n + 1 each) and lam (nbits). base: state_words(n, nbits) * BT
// 32-bit words, 8-byte aligned.
MIMORX_HD constexpr int state_words(int n, int nbits) { return 2 * (n + 1) + 7 * n + 2 + nbits; }

template <int BT>
struct InterleavedState {
  std::uint64_t* x;  // xb(0) of this thread
  float* f;          // word 0 of this thread's float area
  int n;
  MIMORX_HD InterleavedState(std::uint64_t* base, int t, int n_)
      : x(base + t), f(reinterpret_cast<float*>(base + (n_ + 1) * BT) + t), n(n_) {}
  MIMORX_HD float z(int k) const { return f[k * BT]; }
  MIMORX_HD float& zw(int k) { return f[k * BT]; }
  MIMORX_HD float& w(int k) { return f[(n + k) * BT]; }
  MIMORX_HD int& span(int k) { return reinterpret_cast<int*>(f)[(2 * n + k) * BT]; }
  MIMORX_HD float& amp(int k) { return f[(3 * n + k) * BT]; }
  MIMORX_HD float& up(int k) { return f[(4 * n + k) * BT]; }
  MIMORX_HD float& pm(int k) { return f[(5 * n + k) * BT]; }
  MIMORX_HD float& low(int k) { return f[(6 * n + 1 + k) * BT]; }
  MIMORX_HD float& lam(int j) { return f[(7 * n + 2 + j) * BT]; }
  MIMORX_HD std::uint64_t& xb(int k) { return x[k * BT]; }
};

struct Params {
  int n = 0;            // real dimension
  int L = 0;            // levels per real axis
  int nbits = 0;        // nt * m
  const float* r;       // n x n upper triangular, column-major: R(i, j) = r[j * n + i]
  const int* perm;      // tree column -> real column
  const BitTable* tab;  // per real column
  float clip_n0 = 0.f;  // clip * N0; 0 = no clipping
  std::int64_t node_cap = 0;
};

struct Outcome {
  std::uint64_t ml = 0;  // bits of the ML hypothesis
  float metric = 0.f;    // its metric ||z - R a||^2 (the residual outside span(G) excluded)
  std::int64_t nodes = 0;
  std::int32_t leaves = 0;   // leaves that lowered lml or a lam
  std::int32_t updates = 0;  // ML hypothesis changes
  std::uint8_t capped = 0;
};

// low(k) for every k, from lam.
template <class St>
MIMORX_HD void refresh_low(const Params& p, St& st) {
  st.low(0) = 0.f;
  for (int c = 0; c < p.n; ++c) st.low(c + 1) = max_over(st, p.tab->mask[p.perm[c]], st.low(c));
}

// low(k) for every k and up(k) for the columns below the fixed path, from lam and ml; at a leaf
// (every column fixed, xb[1..n-1] set).
template <class St>
MIMORX_HD void refresh_bounds(const Params& p, St& st, std::uint64_t ml) {
  refresh_low(p, st);
  st.up(p.n - 1) = 0.f;
  for (int c = p.n - 2; c >= 0; --c)
    st.up(c) = max_over(st, p.tab->mask[p.perm[c + 1]] & (st.xb(c + 1) ^ ml), st.up(c + 1));
}

// A leaf x with metric d below its radius (the update rule of Studer et al. 2008).
template <class St>
MIMORX_HD void update_leaf(const Params& p, St& st, Outcome& o, float d, std::uint64_t x) {
  std::uint64_t diff = x ^ o.ml;
  if (d < o.metric) {
    // The old ML hypothesis becomes the counter-hypothesis of the bits that flip.
    for (; diff; diff &= diff - 1) st.lam(lowest_bit(diff)) = o.metric;
    o.ml = x;
    o.metric = d;
    ++o.updates;
  } else {
    for (; diff; diff &= diff - 1) {
      float& v = st.lam(lowest_bit(diff));
      v = d < v ? d : v;
    }
  }
  if (p.clip_n0 > 0.f) {
    const float cap = o.metric + p.clip_n0;
    for (int j = 0; j < p.nbits; ++j) {
      float& v = st.lam(j);
      v = v < cap ? v : cap;
    }
  }
  ++o.leaves;
}

// The search as a resumable loop: start() sets up the root, each step() is one iteration of
// the depth-first loop (one node evaluated, or a move up out of an exhausted column) and returns
// true when the search is over. The CUDA kernel that refills its lanes calls them directly;
// search() runs them to the end. N > 0: the real dimension p.n known at compile time
// (se_enter unrolls its sum).
template <int N = 0, class St = State>
MIMORX_HD void start(const Params& p, St& st, Outcome& o, int& k) {
  o = Outcome{};
  o.metric = sphere::inf_metric();
  const int n = p.n, L = p.L;
  for (int j = 0; j < p.nbits; ++j) st.lam(j) = sphere::inf_metric();
  st.pm(n) = 0.f;
  st.xb(n) = 0;
  refresh_low(p, st);
  st.up(n - 1) = 0.f;
  k = n - 1;
  sphere::se_enter<N>(p.r, st, n, L, k);
}

template <int N = 0, class St = State>
MIMORX_HD bool step(const Params& p, St& st, Outcome& o, int& k) {
  const int n = p.n, L = p.L;
  const int span = st.span(k);
  const int lo = span & 0xff, hi = span >> 8;
  const bool can_lo = lo > 0, can_hi = hi < L - 1;
  if (!can_lo && !can_hi) return ++k == n;  // column exhausted
  // Zig-zag: the nearer of lo - 1 and hi + 1 to the centre (sphere_se.hpp).
  const float w = st.w(k);
  const bool take_lo = can_lo && (!can_hi || w <= float(lo + hi));
  const int l = take_lo ? lo - 1 : hi + 1;
  st.span(k) = take_lo ? (l | (hi << 8)) : (lo | (l << 8));
  const float e = p.r[k * n + k] * (w - float(2 * l));
  const float m = st.pm(k + 1) + e * e;
  ++o.nodes;
  if (!(m < fmax3(o.metric, st.up(k), st.low(k + 1)))) {
    if (++k == n) return true;  // this and every later sibling are pruned
  } else {
    const int c = p.perm[k];
    const std::uint64_t x = st.xb(k + 1) | p.tab->ones[c][l];
    const float rc =
        max_over(st, p.tab->mask[c] & (x ^ o.ml), fmax3(o.metric, st.up(k), st.low(k)));
    if (!(m < rc)) {
      // Pruned; a later sibling has other bits and may still pass.
    } else if (k == 0) {
      update_leaf(p, st, o, m, x);
      refresh_bounds(p, st, o.ml);
    } else {
      st.amp(k) = float(2 * l - (L - 1));
      st.pm(k) = m;
      st.xb(k) = x;
      --k;
      st.up(k) = max_over(st, p.tab->mask[c] & (x ^ o.ml), st.up(k + 1));
      sphere::se_enter<N>(p.r, st, n, L, k);
    }
  }
  if (p.node_cap > 0 && o.nodes >= p.node_cap && o.metric < sphere::inf_metric()) {
    o.capped = 1;
    return true;
  }
  return false;
}

// The whole search; leaves st.lam with the counter-hypothesis metrics (+inf where none was
// reached, possible only when capped).
template <int N = 0, class St = State>
MIMORX_HD Outcome search(const Params& p, St& st) {
  Outcome o;
  int k = 0;
  start<N>(p, st, o, k);
  while (!step<N>(p, st, o, k)) {
  }
  return o;
}

// Hard bits (the ML decision) and LLRs (llrs may be null) of one vector:
// (min metric with b = 1 - min metric with b = 0) / N0, as MlPlan computes them. With clipping a
// counter-hypothesis metric at its cap (lml + clip N0, the same float sum as update_leaf's) gives
// exactly +-clip, and every LLR is clamped to [-clip, clip]. A counter-hypothesis never reached
// (capped search) gives +-(clip > 0 ? clip : capped_llr).
template <class St>
MIMORX_HD void write_outputs(const Params& p, const Outcome& o, St& st, float n0, float clip,
                             float capped_llr, std::uint8_t* bits, float* llrs) {
  const float cap = p.clip_n0 > 0.f ? o.metric + p.clip_n0 : sphere::inf_metric();
  for (int j = 0; j < p.nbits; ++j) {
    const bool one = ((o.ml >> j) & 1u) != 0;
    bits[j] = std::uint8_t(one ? 1 : 0);
    if (!llrs) continue;
    const float lj = st.lam(j);
    float v;
    if (lj < sphere::inf_metric() && lj < cap) {
      v = one ? (o.metric - lj) / n0 : (lj - o.metric) / n0;
    } else {
      const float u = clip > 0.f ? clip : capped_llr;
      v = one ? -u : u;
    }
    if (clip > 0.f) v = v > clip ? clip : (v < -clip ? -clip : v);
    llrs[j] = v;
  }
}

}  // namespace mimorx::detect::sts
