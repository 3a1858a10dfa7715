#pragma once
// Arithmetic shared by the CPU sphere decoders and the CUDA PSD kernel (MIMORX_HD), so that
// both compute the same real-valued model, the same sorted QR and the same partial distances.
//
// Real-valued model. Square QAM with L = sqrt(M) levels per axis: x_real = [Re x; Im x] and
//   G = s [Re H, -Im H; Im H, Re H]  (2nr x 2nt), s = qam_scale,
// so that each real symbol is an odd integer amplitude a = 2l - (L - 1), level l in [0, L).
// BPSK: x = a s (1 + j), a = +-1, so G = s [Re H - Im H; Im H + Re H] (2nr x nt), L = 2.
// Tree: after the sorted QR G P = Q R, column k of R is tree level k + 1 (level n is detected
// first); a partial vector stores the level index of column k in bits 4k..4k+3 of a uint64.
#include <cmath>
#include <cstdint>
#include <limits>

#include "mimorx/core/complex.hpp"
#include "mimorx/core/hd.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::detect::sphere {

inline constexpr int kMaxReal = 16;            // real dimension n (nt <= 8 complex streams)
inline constexpr int kMaxLevels = 16;          // entries of PsdLevels::lvl
inline constexpr int kMaxBuffer = 512;         // entries of one sorted PSD level buffer
inline constexpr int kMaxLeafBatch = 1 << 16;  // children of one leaf expansion

MIMORX_HD float inf_metric() { return std::numeric_limits<float>::infinity(); }

MIMORX_HD int real_dim(Modulation mod, int nt) { return mod == Modulation::bpsk ? nt : 2 * nt; }
MIMORX_HD int log2_levels(Modulation mod) { return mod == Modulation::bpsk ? 1 : axis_bits(mod); }

// Integer amplitude of level l on an L-level axis.
MIMORX_HD float amplitude(int l, int L) { return float(2 * l - (L - 1)); }

MIMORX_HD int level_of(std::uint64_t vec, int k) { return int((vec >> (4 * k)) & 15u); }
MIMORX_HD std::uint64_t with_level(std::uint64_t vec, int k, int l) {
  return (vec & ~(std::uint64_t(15) << (4 * k))) | (std::uint64_t(l) << (4 * k));
}

// Real model matrix G (m = 2nr rows, n columns, column-major; element (i, j) at g[(j m + i) sg])
// of one complex channel.
MIMORX_HD void real_model(Modulation mod, const cf32* h, int nr, int nt, float* g, int sg = 1) {
  const float s = qam_scale(mod);
  const int m = 2 * nr;
  for (int t = 0; t < nt; ++t) {
    for (int i = 0; i < nr; ++i) {
      const cf32 v = h[t * nr + i];
      if (mod == Modulation::bpsk) {
        g[(t * m + i) * sg] = s * (v.re - v.im);
        g[(t * m + nr + i) * sg] = s * (v.im + v.re);
      } else {
        g[(t * m + i) * sg] = s * v.re;
        g[(t * m + nr + i) * sg] = s * v.im;
        g[((nt + t) * m + i) * sg] = -s * v.im;
        g[((nt + t) * m + nr + i) * sg] = s * v.re;
      }
    }
  }
}

// Relative margin by which a column's remaining norm must be smaller to be taken first.
inline constexpr float kSqrdTieTolerance = 1.f - 1e-4f;

// Sorted QR (Wuebben et al.'s SQRD: the column of least remaining norm goes first, so the
// strongest streams are detected first, at the top of the tree, which shrinks the search).
// a (m x n, column-major) is overwritten by Q; r gets R (n x n, column-major, upper); perm[k]
// is the real column of G at tree column k. Modified Gram-Schmidt with one re-orthogonalisation
// pass per column: plain MGS loses orthogonality in proportion to cond(G), and z = Q^T y then
// misstates distances on ill-conditioned channels (tested with cond = 1e3). Element strides sa
// and sr (the CUDA kernel interleaves the matrices of a block's threads in shared memory).
// sort = false keeps the columns in their order (perm is the identity).
MIMORX_HD void sorted_qr(float* a, int m, int n, float* r, int* perm, int sa = 1, int sr = 1,
                         bool sort = true) {
#define MIMORX_A(j, i) a[((j)*m + (i)) * sa]
#define MIMORX_R(j, i) r[((j)*n + (i)) * sr]
  for (int j = 0; j < n; ++j) {
    perm[j] = j;
    for (int i = 0; i < n; ++i) MIMORX_R(j, i) = 0.f;
  }
  for (int k = 0; k < n; ++k) {
    int best = k;
    float best_norm = inf_metric();
    for (int j = k; sort && j < n; ++j) {
      float s = 0.f;
      for (int i = 0; i < m; ++i) s += MIMORX_A(j, i) * MIMORX_A(j, i);
      // Ties go to the lower column, also near-ties: the real model of a complex channel has
      // pairs of columns ([Re h; Im h], [-Im h; Re h]) of equal norm before and after every
      // projection, and rounding alone (FMA contraction on the device) would otherwise pick a
      // different member of a pair on the CPU and on the GPU, i.e. a different tree.
      if (s < best_norm * kSqrdTieTolerance) {
        best_norm = s;
        best = j;
      }
    }
    if (best != k) {
      for (int i = 0; i < m; ++i) {
        const float t = MIMORX_A(k, i);
        MIMORX_A(k, i) = MIMORX_A(best, i);
        MIMORX_A(best, i) = t;
      }
      for (int i = 0; i < k; ++i) {
        const float t = MIMORX_R(k, i);
        MIMORX_R(k, i) = MIMORX_R(best, i);
        MIMORX_R(best, i) = t;
      }
      const int t = perm[k];
      perm[k] = perm[best];
      perm[best] = t;
    }
    for (int i = 0; i < k; ++i) {
      float c = 0.f;
      for (int p = 0; p < m; ++p) c += MIMORX_A(i, p) * MIMORX_A(k, p);
      for (int p = 0; p < m; ++p) MIMORX_A(k, p) -= c * MIMORX_A(i, p);
      MIMORX_R(k, i) += c;
    }
    float s = 0.f;
    for (int p = 0; p < m; ++p) s += MIMORX_A(k, p) * MIMORX_A(k, p);
    const float nrm = std::sqrt(s);
    MIMORX_R(k, k) = nrm;
    const float inv = nrm > 0.f ? 1.f / nrm : 0.f;
    for (int p = 0; p < m; ++p) MIMORX_A(k, p) *= inv;
    for (int j = k + 1; j < n; ++j) {
      float c = 0.f;
      for (int p = 0; p < m; ++p) c += MIMORX_A(k, p) * MIMORX_A(j, p);
      MIMORX_R(j, k) = c;
      for (int p = 0; p < m; ++p) MIMORX_A(j, p) -= c * MIMORX_A(k, p);
    }
  }
#undef MIMORX_A
#undef MIMORX_R
}

// z_k = q_k^T [Re y; Im y] (both models stack rows the same way), summed over the rows in order;
// the CPU and both CUDA kernels call it, so z is the same sum everywhere.
MIMORX_HD float project(const float* q, int m, int nr, const cf32* y, int k) {
  const float* qk = q + k * m;
  float s = 0.f;
  for (int i = 0; i < nr; ++i) s += qk[i] * y[i].re;
  for (int i = 0; i < nr; ++i) s += qk[nr + i] * y[i].im;
  return s;
}

// b_k = z_k - sum_{j>k} R_kj a_j: the target of column k given the symbols above it.
MIMORX_HD float column_target(const float* r, const float* z, int n, int L, std::uint64_t vec,
                              int k) {
  float b = z[k];
  for (int j = k + 1; j < n; ++j) b -= r[j * n + k] * amplitude(level_of(vec, j), L);
  return b;
}

// Level nearest to the centre b / R_kk (the Babai choice), clamped to the alphabet.
MIMORX_HD int nearest_level(float b, float rkk, int L) {
  const float c = rkk > 0.f ? b / rkk : 0.f;
  int l = int(std::floor((c + float(L - 1)) * 0.5f + 0.5f));
  return l < 0 ? 0 : (l > L - 1 ? L - 1 : l);
}

// Partial distance increment of column k at level l: (b_k - R_kk a)^2.
MIMORX_HD float increment(float b, float rkk, int l, int L) {
  const float e = b - rkk * amplitude(l, L);
  return e * e;
}

// b_k restricted to the columns j >= from that are already fixed: z_k - sum_{j>=from} R_kj a_j.
// An expansion computes it once per (parent, new column) (the parent's targets) instead of once
// per child and column.
MIMORX_HD float partial_target(const float* r, const float* z, int n, int L, std::uint64_t vec,
                               int k, int from) {
  float b = z[k];
  for (int j = from; j < n; ++j) b -= r[j * n + k] * amplitude(level_of(vec, j), L);
  return b;
}

// Level of column k (lo <= k) in child `off` of an expansion: the base-L digits of `off`, the
// lowest column taking the lowest digit.
MIMORX_HD int child_digit(int off, int k, int lo, int log2L, int L) {
  return (off >> ((k - lo) * log2L)) & (L - 1);
}

// A child of a PSD expansion: its parent (metric `metric`) is fixed on the columns above `top`;
// the child sets columns top..lo from `off`. tgt[k - lo] = partial_target(parent, k, top + 1).
// Returns the child's metric, or +inf as soon as a partial metric reaches d2 (pruned: metrics
// only grow towards the leaves).
MIMORX_HD float child_metric(const float* r, int n, int L, int log2L, const float* tgt,
                             float metric, int lo, int top, int off, float d2) {
  for (int k = top; k >= lo; --k) {
    float b = tgt[k - lo];
    for (int j = k + 1; j <= top; ++j)
      b -= r[j * n + k] * amplitude(child_digit(off, j, lo, log2L, L), L);
    metric += increment(b, r[k * n + k], child_digit(off, k, lo, log2L, L), L);
    if (!(metric < d2)) return inf_metric();
  }
  return metric;
}

// The child's partial vector (the parent's columns below top + 1 are still zero).
MIMORX_HD std::uint64_t child_vector(std::uint64_t parent, int lo, int top, int off, int log2L,
                                     int L) {
  for (int k = lo; k <= top; ++k)
    parent |= std::uint64_t(child_digit(off, k, lo, log2L, L)) << (4 * k);
  return parent;
}

// Total order of the PSD's sorts and leaf reductions: by metric, ties to the smaller index of
// the child within its expansion (what a stable sort of the children in index order gives).
MIMORX_HD bool precedes(float m1, int i1, float m2, int i2) {
  return m1 < m2 || (m1 == m2 && i1 < i2);
}

// The Babai (successive interference cancellation) point and its metric.
MIMORX_HD std::uint64_t babai_point(const float* r, const float* z, int n, int L, float* metric) {
  std::uint64_t vec = 0;
  float m = 0.f;
  for (int k = n - 1; k >= 0; --k) {
    const float b = column_target(r, z, n, L, vec, k);
    const int l = nearest_level(b, r[k * n + k], L);
    vec = with_level(vec, k, l);
    m += increment(b, r[k * n + k], l, L);
  }
  *metric = m;
  return vec;
}

// Axis bits c0..c(k-1) (38.211 order) of level l, by inverting pam_amplitude.
MIMORX_HD void level_bits(int k, int l, std::uint8_t* c) {
  const int want = 2 * l - ((1 << k) - 1);
  for (int p = 0; p < (1 << k); ++p) {
    std::uint8_t bits[4];
    for (int j = 0; j < k; ++j) bits[j] = std::uint8_t((p >> (k - 1 - j)) & 1);
    if (pam_amplitude(k, bits) == want) {
      for (int j = 0; j < k; ++j) c[j] = bits[j];
      return;
    }
  }
}

// Writes stream t's bits and symbol from the tree vector. inv_perm[c] = tree column of real
// column c.
MIMORX_HD void write_stream(Modulation mod, int nt, int t, std::uint64_t vec, const int* inv_perm,
                            std::uint8_t* bits, cf32* sym) {
  const float s = qam_scale(mod);
  if (mod == Modulation::bpsk) {
    const int l = level_of(vec, inv_perm[t]);
    if (bits) bits[0] = std::uint8_t(l == 0 ? 1 : 0);
    if (sym) *sym = cf32(amplitude(l, 2) * s, amplitude(l, 2) * s);
    return;
  }
  const int k = axis_bits(mod);
  const int L = 1 << k;
  const int lre = level_of(vec, inv_perm[t]);
  const int lim = level_of(vec, inv_perm[nt + t]);
  if (bits) {
    std::uint8_t cre[4], cim[4];
    level_bits(k, lre, cre);
    level_bits(k, lim, cim);
    for (int j = 0; j < k; ++j) {
      bits[2 * j] = cre[j];
      bits[2 * j + 1] = cim[j];
    }
  }
  if (sym) *sym = cf32(amplitude(lre, L) * s, amplitude(lim, L) * s);
}

// ||y - H x||^2 with the decided constellation points.
MIMORX_HD float residual_metric(const cf32* h, int nr, int nt, const cf32* y, const cf32* x) {
  float acc = 0.f;
  for (int i = 0; i < nr; ++i) {
    cf32 e = y[i];
    for (int t = 0; t < nt; ++t) e -= h[t * nr + i] * x[t];
    acc += norm2(e);
  }
  return acc;
}

// A team's cursor over the work queue: V vectors dealt in chunks of `len`, chunk c holding the
// vectors c, c + nchunks, c + 2 nchunks, ... The consecutive vectors of one channel have
// correlated costs (an ill-conditioned channel makes all of them expensive); strided chunks put
// them in different teams instead of queueing them behind one another in the same team.
struct QueueCursor {
  std::int64_t vectors = 0, nchunks = 0, chunk = -1;
  int len = 1, j = 0;
  MIMORX_HD QueueCursor(std::int64_t v, int chunk_len)
      : vectors(v), nchunks((v + chunk_len - 1) / chunk_len), len(chunk_len) {}
  MIMORX_HD bool exhausted() const {
    return chunk < 0 || j >= len || std::int64_t(j) * nchunks + chunk >= vectors;
  }
  // Starts chunk `c` (from the shared counter); false when the queue is empty.
  MIMORX_HD bool start(std::int64_t c) {
    if (c >= nchunks) return false;
    chunk = c;
    j = 0;
    return true;
  }
  MIMORX_HD std::int64_t pop() { return std::int64_t(j++) * nchunks + chunk; }
};

// The PSD search of one received vector (Jozsa et al. 2013, Alg. 1), written once for the CUDA
// team of threads and for its sequential CPU emulation used by the tests. `Team` provides:
//   int take(int x, int pos, int cnt, int paths, float d2): puts the best (up to) `paths`
//       entries of level x's buffer [pos, cnt) that are below d2 at pos.. in increasing metric;
//       returns how many;
//   int expand_sort(int x, int first, int np, int y, float d2): expands entries first..first+np-1
//       of level x (x = -1: the root) into level y's buffer, pruned at d2; returns the buffer's
//       entry count (sorted mode: the entries < d2, which come first);
//   void expand_leaves(int x, int first, int np, int y, float d2, float* m, uint64_t* v): the
//       best leaf under those parents (m = +inf when all are pruned).
struct PsdSearchParams {
  int nlev = 0;
  const int* lvl = nullptr;                           // nlev entries
  const int* paths = nullptr;                         // nlev entries
  const std::int64_t* nodes_per_parent = nullptr;     // Q + Q^2 + ... + Q^d of level x's jump
  const std::int64_t* children_per_parent = nullptr;  // Q^d
  std::int64_t node_cap = 0;
};

struct PsdOutcome {
  std::uint64_t best = 0;
  float d2 = 0.f;
  std::int64_t nodes = 0;
  std::int32_t leaves = 0;
  std::int32_t updates = 0;
  std::uint8_t capped = 0;
};

template <class Team>
MIMORX_HD PsdOutcome psd_search(Team& team, const PsdSearchParams& p, float d2,
                                std::uint64_t best) {
  PsdOutcome o;
  int pos[kMaxLevels];
  int cnt[kMaxLevels];
  bool root_done = false;
  int x = -1;
  for (;;) {
    int first = 0;
    int np = 0;
    if (x < 0) {
      if (root_done) break;
      root_done = true;
      np = 1;
    } else {
      // The next (up to) paths_x best entries below d2, moved to pos[x].. by the team: in a
      // sorted buffer they are already there, and the first entry at or above d2 ends the level
      // (the radius only shrinks).
      np = team.take(x, pos[x], cnt[x], p.paths[x], d2);
      if (np == 0) {
        --x;
        continue;
      }
      first = pos[x];
      pos[x] += np;
    }
    const int y = x + 1;
    o.nodes += np * p.nodes_per_parent[y];
    if (y == p.nlev - 1) {
      float m;
      std::uint64_t v;
      team.expand_leaves(x, first, np, y, d2, &m, &v);
      o.leaves += std::int32_t(np * p.children_per_parent[y]);
      if (m < d2) {
        d2 = m;
        best = v;
        ++o.updates;
      }
    } else {
      cnt[y] = team.expand_sort(x, first, np, y, d2);
      pos[y] = 0;
      x = y;
    }
    if (p.node_cap > 0 && o.nodes >= p.node_cap && d2 < inf_metric()) {
      o.capped = 1;
      break;
    }
  }
  o.best = best;
  o.d2 = d2;
  return o;
}

}  // namespace mimorx::detect::sphere
