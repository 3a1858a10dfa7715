#pragma once
// Depth-first Schnorr-Euchner search of one received vector, written once for the CPU reference
// and for the CUDA kernel with one lane per vector (sphere_lane_cuda.cu).
//
// It is the PSD with an expansion on every level and one path per expansion, run by a single
// thread: the zig-zag enumeration yields a column's children in increasing partial distance,
// which is what sorting them would give, but lazily, so that children behind the first pruned
// one are never evaluated.
//
// Per tree column k the search keeps (through `St`, the CPU: arrays on the stack; CUDA: shared
// memory interleaved across the block's threads):
//   float z(k)        z_k = q_k^T y (set by the caller)
//   float& w(k)       the centre of column k in doubled level units: b_k / R_kk + (L - 1), where
//                     b_k = z_k - sum_{j>k} R_kj a_j is the column's target; level l is at
//                     distance |w - 2l| R_kk from it
//   int& span(k)      the levels [lo, hi] visited so far, lo | hi << 8 (empty: lo = hi + 1)
//   float& pm(k)      metric of the fixed columns >= k (pm(n) = 0)
//   float& amp(k)     amplitude 2l - (L - 1) of the level fixed on column k
// Counts: nodes = partial distances evaluated (leaves included), leaves = complete vectors
// that improved the radius, updates = radius updates.
#include <cmath>
#include <cstdint>

#include "detect/sphere_math.hpp"
#include "mimorx/core/hd.hpp"
#include "mimorx/core/rounding.hpp"

namespace mimorx::detect::sphere {

// The centre w of column k given the fixed columns above it, and its first span (empty, just
// above the level nearest to the centre, so that the zig-zag starts there). N > 0: the tree
// dimension n known at compile time (the sum is unrolled and its loads issued together).
template <int N, class St>
MIMORX_HD void se_enter(const float* r, St& st, int n, int L, int k) {
  float b = st.z(k);
  if constexpr (N > 0) {
    MIMORX_UNROLL
    for (int j = 1; j < N; ++j)
      if (j > k) b -= r[j * N + k] * st.amp(j);
  } else {
    for (int j = k + 1; j < n; ++j) b -= r[j * n + k] * st.amp(j);
  }
  const float rkk = r[k * n + k];
  const float w = b * (rkk > 0.f ? rounding::frcp(rkk) : 0.f) + float(L - 1);
  int l = int(std::floor(w * 0.5f + 0.5f));
  l = l < 0 ? 0 : (l > L - 1 ? L - 1 : l);
  st.w(k) = w;
  st.span(k) = (l + 1) | (l << 8);
}

// Resumable: start(), then step() until it returns true (one node, or one exhausted column,
// per step); the result is in `o`.
template <int N, class St>
struct SeSearch {
  int n = 0, L = 0;
  std::int64_t node_cap = 0;
  int k = 0;
  PsdOutcome o;

  MIMORX_HD void start(const float* r, St& st, float d2, std::uint64_t best) {
    o = PsdOutcome{};
    o.best = best;
    o.d2 = d2;
    st.pm(n) = 0.f;
    k = n - 1;
    se_enter<N>(r, st, n, L, k);
  }

  MIMORX_HD bool step(const float* r, St& st) {
    const int span = st.span(k);
    const int lo = span & 0xff, hi = span >> 8;
    const bool can_lo = lo > 0, can_hi = hi < L - 1;
    if (!can_lo && !can_hi) return ++k == n;  // column exhausted
    const float w = st.w(k);
    // The nearer of lo - 1 and hi + 1 to the centre (ties to lo - 1): w - 2(lo - 1) <=
    // 2(hi + 1) - w, i.e. w <= lo + hi.
    const bool take_lo = can_lo && (!can_hi || w <= float(lo + hi));
    const int l = take_lo ? lo - 1 : hi + 1;
    st.span(k) = take_lo ? (l | (hi << 8)) : (lo | (l << 8));
    const float e = r[k * n + k] * (w - float(2 * l));
    const float m = st.pm(k + 1) + e * e;
    ++o.nodes;
    if (!(m < o.d2)) {
      // Candidates come in increasing distance: every later sibling is pruned too.
      if (++k == n) return true;
    } else if (k == 0) {
      o.d2 = m;
      std::uint64_t vec = std::uint64_t(l);
      for (int j = 1; j < n; ++j) vec |= std::uint64_t((int(st.amp(j)) + L - 1) >> 1) << (4 * j);
      o.best = vec;
      ++o.leaves;
      ++o.updates;
      if (++k == n) return true;  // the remaining siblings are farther than this leaf
    } else {
      st.amp(k) = float(2 * l - (L - 1));
      st.pm(k) = m;
      se_enter<N>(r, st, n, L, --k);
    }
    if (node_cap > 0 && o.nodes >= node_cap && o.d2 < inf_metric()) {
      o.capped = 1;
      return true;
    }
    return false;
  }
};

template <int N, class St>
MIMORX_HD PsdOutcome schnorr_euchner(const float* r, St& st, int n, int L, float d2,
                                     std::uint64_t best, std::int64_t node_cap) {
  SeSearch<N, St> s;
  s.n = n;
  s.L = L;
  s.node_cap = node_cap;
  s.start(r, st, d2, best);
  while (!s.step(r, st)) {
  }
  return s.o;
}

// The Babai (successive interference cancellation) point and its metric, from the same state;
// leaves amp() set to it.
template <class St>
MIMORX_HD std::uint64_t se_babai(const float* r, St& st, int n, int L, float* metric) {
  std::uint64_t vec = 0;
  float m = 0.f;
  for (int k = n - 1; k >= 0; --k) {
    se_enter<0>(r, st, n, L, k);
    const int l = st.span(k) >> 8;
    const float e = r[k * n + k] * (st.w(k) - float(2 * l));
    m += e * e;
    st.amp(k) = float(2 * l - (L - 1));
    vec |= std::uint64_t(l) << (4 * k);
  }
  *metric = m;
  return vec;
}

}  // namespace mimorx::detect::sphere
