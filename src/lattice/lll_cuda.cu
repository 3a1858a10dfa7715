// CR-AS-LLL on CUDA (Jozsa et al., J. Supercomput. 70(2) 2014, Algorithm 2): one thread block
// per basis, a 2-D block TB(Tx, Ty) whose Ty groups of Tx lanes each own one column (one
// vector) and reduce along it with shuffles. The basis B, its Gram-Schmidt factor R and the
// transform T live in shared memory for the whole reduction; global memory is touched once on
// entry and once on exit.
//
// One iteration = one SimpleSwap phase: all pairs (k-1, k) of one parity size-reduce column k
// against column k-1, test Lovasz and swap in parallel, then Givens rotations of the disjoint
// row pairs restore R. Every kFullReductionEvery iterations (and before the final check) a full
// SimpleSizeReduce of all columns runs first (step j descending: every column k > j against
// column j, in parallel over k), which keeps the entries of B small.
// The R factor is updated by these rotations instead of being recomputed (the delayed GS
// update); it is recomputed from B by modified Gram-Schmidt at the start, after a large
// size-reduction multiplier, and for the final check once two phases in a row made no swap.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/cuda_check.hpp"
#include "core/cuda_smem_limit.hpp"
#include "lattice/lll_internal.hpp"
#include "lattice/lll_math.hpp"

namespace mimorx::lattice::detail {
namespace {

// Sum over the Tx lanes of one group. The group width is a runtime value (it follows n), so
// this is written with width-limited shuffles instead of cub::WarpReduce, whose logical warp
// size is a template parameter.
template <class F>
__device__ __forceinline__ F group_sum(F v, int tx_width) {
  for (int off = tx_width >> 1; off > 0; off >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, off, tx_width);
  return v;
}

constexpr int kCounters = 6;  // Basis::ctr

// NC > 0: a square NC x NC basis whose shape (NC, lanes TXC, groups TYC) is known at compile
// time, so that every loop along a vector unrolls into independent loads and FMAs, and the
// Gram-Schmidt keeps each group's columns in registers (qr_fixed). NC = 0: any n x m, shape
// from the launch. Both compute the same numbers in the same order (tested bit for bit).
template <class F, bool kT, int NC = 0, int TXC = 0, int TYC = 0>
struct Basis {
  static constexpr bool kFixed = NC > 0;
  static_assert(!kFixed || (NC % TXC == 0 && TXC <= 32 && 32 % TXC == 0), "fixed shape");
  int n, m, tx, ty, Tx, Ty, tid, nth;
  F* B;
  F* Q;  // generic: the n x m work copy of B; fixed: two pivot vectors of NC entries
  // Column-major: R(i, j) = R[j * m + i] (generic); the fixed shape packs the upper triangle
  // and the subdiagonal (a swap moves r(k, k) below the diagonal of column k - 1 until the
  // Givens rotation clears it): R(i, j) = R[j (j + 3) / 2 + i], i <= j + 1. At 64x64 that is
  // 8.6 KB instead of 16, so with T a fifth block fits on an SM.
  F* R;
  // T in int32 for float32 bases: an entry of 2^31 or more means B' = B T has lost every bit of
  // a float32 entry to cancellation, so such a reduction ends in precision_loss anyway; half the
  // shared memory of int64 (with the packed R, five 64x64 blocks with T per SM instead of three).
  using TT = std::conditional_t<sizeof(F) == 4, int, long long>;
  TT* T;
  // The column bounds of int32 T (sub_column) pay at 64x64, with eight entries per lane; with
  // one to four (8x8..32x32) their bookkeeping costs more than the checks it saves (measured),
  // so those keep the checks.
  static constexpr bool kBounds = kT && sizeof(TT) == 4 && NC >= 64;
  float* tb;           // kBounds: a bound on |T| per column (sub_column)
  float t_fast_limit;  // below it an update of T needs no overflow check (2e9; 0 in a test)
  int* flag;           // per-pair swap decisions
  int* ctr;            // [0] and [5] singular, [1] big multiplier, [2] swaps of the phase,
                       // [3] violations, [4] T left the range of TT

  __device__ int rows() const {
    if constexpr (kFixed) return NC;
    return n;
  }
  __device__ int cols() const {
    if constexpr (kFixed) return NC;
    return m;
  }
  __device__ int lanes() const {
    if constexpr (kFixed) return TXC;
    return Tx;
  }
  __device__ int groups() const {
    if constexpr (kFixed) return TYC;
    return Ty;
  }
  // The lanes of this thread's group within its warp (groups are consecutive lanes, and their
  // width divides 32).
  __device__ unsigned group_mask() const {
    const int w = lanes(), base = (tid % 32) / w * w;
    return w == 32 ? 0xffffffffu : ((1u << w) - 1u) << base;
  }
  static constexpr int kPackedR = NC * (NC + 3) / 2;
  // The dependence flag of QR step j, one slot per parity: thread 0 may set step j + 1's before
  // a slower thread has read step j's after the barrier between them (racecheck saw that with
  // one slot: such a thread left qr() a step early and met a different barrier).
  __device__ int& dependent(int j) const { return ctr[(j & 1) ? 5 : 0]; }

  __device__ F& r(int i, int j) const {
    if constexpr (kFixed) return R[j * (j + 3) / 2 + i];
    return R[j * cols() + i];
  }

  // f(i) for the entries i = tx, tx + lanes, ... < len of a vector (len = n or m; both NC
  // in the fixed shape, where the loop unrolls).
  template <class Fn>
  __device__ __forceinline__ void along(int len, Fn&& f) const {
    if constexpr (kFixed) {
#pragma unroll
      for (int e = 0; e < NC / TXC; ++e) f(tx + e * TXC);
    } else {
      for (int i = tx; i < len; i += Tx) f(i);
    }
  }

  __device__ bool qr() const {
    if constexpr (kFixed) return qr_fixed();
    return qr_generic();
  }

  // Modified Gram-Schmidt of the fixed shape: group ty owns columns ty, ty + TYC, ... and keeps
  // their partially projected entries in registers; the owner of column j + 1 publishes it to
  // a double-buffered pivot vector during step j (read by all groups in step j + 1). Same
  // arithmetic as qr_generic.
  __device__ bool qr_fixed() const {
    constexpr int kPer = NC / TXC;               // entries of a vector per lane
    constexpr int kCols = (NC + TYC - 1) / TYC;  // columns per group
    F* orig = reinterpret_cast<F*>(flag);
    F q[kCols][kPer];
    for (int i = tid; i < kPackedR; i += TXC * TYC) R[i] = F(0);
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      const int k = ty + c * TYC;
      F s = 0;
#pragma unroll
      for (int e = 0; e < kPer; ++e) {
        q[c][e] = k < NC ? B[k * NC + tx + e * TXC] : F(0);
        s += q[c][e] * q[c][e];
      }
      s = group_sum(s, TXC);
      if (k < NC && tx == 0) orig[k] = s;
      if (k == 0)
#pragma unroll
        for (int e = 0; e < kPer; ++e) Q[tx + e * TXC] = q[c][e];
    }
    __syncthreads();
    for (int j = 0; j < NC; ++j) {
      const F* qj = Q + (j & 1) * NC;
      F v[kPer];
      F nrm = 0;
#pragma unroll
      for (int e = 0; e < kPer; ++e) {
        v[e] = qj[tx + e * TXC];
        nrm += v[e] * v[e];
      }
      nrm = group_sum(nrm, TXC);
      const F rjj = sqrt(nrm);
      if (tid == 0) {
        r(j, j) = rjj;
        if (!(rjj > singular_fraction<F>() * sqrt(orig[j])) || !isfinite(rjj)) dependent(j) = 1;
      }
#pragma unroll
      for (int c = 0; c < kCols; ++c) {
        if (c * TYC + TYC - 1 <= j) continue;  // no group's slot-c column is after j
        const int k = ty + c * TYC;
        const bool act = k > j && k < NC;
        F dot = 0;
#pragma unroll
        for (int e = 0; e < kPer; ++e) dot += v[e] * q[c][e];
        dot = group_sum(dot, TXC);
        if (act) {
          if (tx == 0) r(j, k) = dot / rjj;
          const F f = dot / nrm;
#pragma unroll
          for (int e = 0; e < kPer; ++e) q[c][e] -= f * v[e];
          if (k == j + 1)
#pragma unroll
            for (int e = 0; e < kPer; ++e) Q[((j + 1) & 1) * NC + tx + e * TXC] = q[c][e];
        }
      }
      __syncthreads();
      if (dependent(j)) return true;
    }
    return false;
  }

  // Modified Gram-Schmidt, right-looking: step j normalises column j and projects it out of
  // every later column (one group per column). Returns true when a column was dependent.
  // ||q_j||^2 is reduced once per group and step (not once per column), and the input norms
  // for the dependence test once per column before the loop (in the flag array, which the swap
  // phases own only between QR calls): the 64x64 kernel spent most of its instructions here.
  __device__ bool qr_generic() const {
    F* orig = reinterpret_cast<F*>(flag);  // ||b_k||^2; the flag region holds m values of F
    for (int i = tid; i < n * m; i += nth) Q[i] = B[i];
    for (int i = tid; i < m * m; i += nth) R[i] = F(0);
    for (int kk = 0; kk < m; kk += Ty) {
      const int k = kk + ty;
      F s = 0;
      if (k < m)
        for (int i = tx; i < n; i += Tx) s += B[k * n + i] * B[k * n + i];
      s = group_sum(s, Tx);
      if (k < m && tx == 0) orig[k] = s;
    }
    __syncthreads();
    for (int j = 0; j < m; ++j) {
      const F* qj = Q + j * n;
      F nrm = 0;
      for (int i = tx; i < n; i += Tx) nrm += qj[i] * qj[i];
      nrm = group_sum(nrm, Tx);
      const F rjj = sqrt(nrm);
      if (tid == 0) {
        r(j, j) = rjj;
        if (!(rjj > singular_fraction<F>() * sqrt(orig[j])) || !isfinite(rjj)) dependent(j) = 1;
      }
      // Every group runs the same trip count (the shuffles need all lanes of the warp).
      for (int kk = j + 1; kk < m; kk += Ty) {
        const int k = kk + ty;
        const bool act = k < m;
        F dot = 0;
        if (act)
          for (int i = tx; i < n; i += Tx) dot += qj[i] * Q[k * n + i];
        dot = group_sum(dot, Tx);
        if (act) {
          if (tx == 0) r(j, k) = dot / rjj;
          const F f = dot / nrm;
          for (int i = tx; i < n; i += Tx) Q[k * n + i] -= f * qj[i];
        }
      }
      __syncthreads();
      if (dependent(j)) return true;
    }
    return false;
  }

  // T(:, k) -= q T(:, j), the lanes' share of it. int32 T: the products in 64 bits, and any
  // result outside int32 (or |q| >= 2^31) raises ctr[4]; the kernel then ends in precision_loss.
  __device__ __forceinline__ void sub_column(int k, int j, F q) const {
    const int mc = cols();
    if constexpr (sizeof(TT) == 4) {
      // kBounds: tb bounds |T| per column (rounded up). Where tb[k] + |q| tb[j] stays below 2e9
      // the new column fits int32 and one 32-bit multiply-add per entry does (cheaper than the
      // checked 64-bit form). Otherwise the checked
      // form, which then also sets tb[k] to the column's exact largest |entry|.
      [[maybe_unused]] unsigned gmask = 0;
      if constexpr (kBounds) {
        const float bound = __fmaf_ru(fabsf(float(q)), tb[j], tb[k]);
        gmask = group_mask();
        __syncwarp(gmask);  // every lane read tb[k] before lane 0 writes it
        if (bound < t_fast_limit) {
          const int qi = int(q);
          along(mc, [&](int i) { T[k * mc + i] -= qi * T[j * mc + i]; });
          if (tx == 0) tb[k] = bound;
          return;
        }
      }
      const bool fits = fabs(q) < F(2147483648.0);
      const int qi = fits ? int(q) : 0;
      bool out = !fits;
      [[maybe_unused]] unsigned long long big = 0;
      along(mc, [&](int i) {
        const long long v = (long long)T[k * mc + i] - (long long)qi * T[j * mc + i];
        out |= v != (long long)(int)v;
        T[k * mc + i] = int(v);
        if constexpr (kBounds) big = max(big, (unsigned long long)(v < 0 ? -v : v));
      });
      if constexpr (kBounds) {
        for (int o = lanes() >> 1; o > 0; o >>= 1)
          big = max(big, __shfl_xor_sync(gmask, big, o, lanes()));
        if (tx == 0) tb[k] = __ull2float_ru(big);
      }
      if (out) ctr[4] = 1;
    } else {
      const long long qi = (long long)q;
      along(mc, [&](int i) { T[k * mc + i] -= qi * T[j * mc + i]; });
    }
  }

  // SimpleSizeReduce of every column (Alg. 2, lines "size reduction"): column j is unchanged
  // during step j, so all k > j proceed in parallel.
  __device__ void size_reduce() const {
    const int nr = rows(), mc = cols(), lx = lanes(), gy = groups();
    for (int j = mc - 2; j >= 0; --j) {
      const F rjj = r(j, j);
      for (int kk = j + 1; kk < mc; kk += gy) {
        const int k = kk + ty;
        F q = 0;
        if (k < mc) q = round_nearest(r(j, k) / rjj);
        __syncwarp();  // every lane has read r(j, k) before one of them overwrites it
        if (q != F(0)) {
          if (tx == 0 && fabs(q) > big_quotient<F>()) ctr[1] = 1;
          for (int i = tx; i <= j; i += lx) r(i, k) -= q * r(i, j);
          along(nr, [&](int i) { B[k * nr + i] -= q * B[j * nr + i]; });
          if (kT) sub_column(k, j, q);
        }
      }
      __syncthreads();
    }
  }

  // SimpleSwap of all pairs (k-1, k) with k = first, first + 2, ...; returns the swap count.
  __device__ int swap_phase(int parity, F delta) const {
    const int nr = rows(), mc = cols(), lx = lanes(), gy = groups();
    const int first = parity == 0 ? 1 : 2;
    const int npairs = first < mc ? (mc - first + 1) / 2 : 0;
    if (tid == 0) ctr[2] = 0;
    __syncthreads();
    for (int bb = 0; bb < npairs; bb += gy) {
      const int idx = bb + ty, k = first + 2 * idx;
      const bool act = idx < npairs;
      // Pair size reduction: only mu_{k,k-1} enters the Lovasz test, so between full
      // reductions column k is reduced against column k-1 alone (pairs are disjoint).
      F q = 0;
      if (act) q = round_nearest(r(k - 1, k) / r(k - 1, k - 1));
      __syncwarp();
      if (q != F(0)) {
        if (tx == 0 && fabs(q) > big_quotient<F>()) ctr[1] = 1;
        for (int i = tx; i < k; i += lx) r(i, k) -= q * r(i, k - 1);
        along(nr, [&](int i) { B[k * nr + i] -= q * B[(k - 1) * nr + i]; });
        if (kT) sub_column(k, k - 1, q);
      }
      __syncwarp();
      bool sw = false;
      if (act) sw = lovasz_violated(delta, r(k - 1, k - 1), r(k - 1, k), r(k, k));
      __syncwarp();
      if (act && tx == 0) flag[k] = sw;
      if (sw) {
        along(nr, [&](int i) {
          const F a = B[(k - 1) * nr + i];
          B[(k - 1) * nr + i] = B[k * nr + i];
          B[k * nr + i] = a;
        });
        if (kT) {
          along(mc, [&](int i) {
            const TT a = T[(k - 1) * mc + i];
            T[(k - 1) * mc + i] = T[k * mc + i];
            T[k * mc + i] = a;
          });
          if (kBounds && tx == 0) {  // the group's lane 0 alone touches these bounds
            const float a = tb[k - 1];
            tb[k - 1] = tb[k];
            tb[k] = a;
          }
        }
        for (int i = tx; i <= k; i += lx) {
          const F a = r(i, k - 1);
          r(i, k - 1) = r(i, k);
          r(i, k) = a;
        }
        if (tx == 0) atomicAdd(&ctr[2], 1);
      }
    }
    __syncthreads();
    // Givens rotations of rows (k-1, k): disjoint row pairs, so no two groups collide.
    for (int bb = 0; bb < npairs; bb += gy) {
      const int idx = bb + ty, k = first + 2 * idx;
      const bool sw = idx < npairs && flag[k];
      F c = 0, s = 0;
      if (sw) givens(r(k - 1, k - 1), r(k, k - 1), &c, &s);
      __syncwarp();
      if (sw) {
        for (int j = k - 1 + tx; j < mc; j += lx) {
          const F x = r(k - 1, j), y = r(k, j);
          r(k - 1, j) = c * x + s * y;
          r(k, j) = j == k - 1 ? F(0) : -s * x + c * y;
        }
      }
    }
    __syncthreads();
    const int swaps = ctr[2];
    __syncthreads();
    return swaps;
  }

  // LllConfig::presort: the columns of B put in presort order (lll_math.hpp, the same keys and
  // ties as presort_columns on the host); rank[j] receives the new position of column j. The
  // keys (m doubles as hi/lo words: the Q region may be only 4-byte aligned) go to the Q
  // region; the basis is permuted through Q (generic: n x m) or registers (fixed shape).
  __device__ void presort(int* rank) const {
    const int nr = rows(), mc = cols();
    int* kw = reinterpret_cast<int*>(Q);
    for (int j = tid; j < mc; j += nth) {
      const double k = presort_key(B + j * nr, nr);
      kw[2 * j] = __double2hiint(k);
      kw[2 * j + 1] = __double2loint(k);
    }
    __syncthreads();
    for (int j = tid; j < mc; j += nth) {
      const double kj = __hiloint2double(kw[2 * j], kw[2 * j + 1]);
      int r = 0;
      for (int k = 0; k < mc; ++k)
        r += presort_before(__hiloint2double(kw[2 * k], kw[2 * k + 1]), k, kj, j);
      rank[j] = r;
    }
    __syncthreads();
    if constexpr (kFixed) {
      // Through registers: the packed R is smaller than the basis.
      constexpr int kPer = (NC * NC + TXC * TYC - 1) / (TXC * TYC);
      F v[kPer];
#pragma unroll
      for (int e = 0; e < kPer; ++e) {
        const int i = tid + e * TXC * TYC;
        if (i < NC * NC) v[e] = B[i];
      }
      __syncthreads();
#pragma unroll
      for (int e = 0; e < kPer; ++e) {
        const int i = tid + e * TXC * TYC;
        if (i < NC * NC) B[rank[i / NC] * NC + i % NC] = v[e];
      }
    } else {
      for (int i = tid; i < nr * mc; i += nth) Q[i] = B[i];
      __syncthreads();
      for (int i = tid; i < nr * mc; i += nth) B[rank[i / nr] * nr + i % nr] = Q[i];
    }
    __syncthreads();
  }

  __device__ int count_violations(F delta) const {
    if (tid == 0) ctr[3] = 0;
    __syncthreads();
    for (int k = 1 + tid; k < cols(); k += nth)
      if (lovasz_violated(delta, r(k - 1, k - 1), r(k - 1, k), r(k, k))) atomicAdd(&ctr[3], 1);
    __syncthreads();
    const int v = ctr[3];
    __syncthreads();
    return v;
  }
};

// Lanes per vector and groups per basis of the automatic block shape (host and the fixed-shape
// instantiations use the same rule). Lanes: 4 for n <= 16, 8 beyond (the fastest of 4..32 on
// float32 Gaussian bases, docs/lll.md): fewer lanes per
// column mean shorter shuffle reductions and more columns in flight per step of the
// Gram-Schmidt and size reduction, which dominate. n <= 8 keeps one lane per entry. Groups:
// about one per column pair, at most 512 threads, a whole number of warps so that every
// shuffle has its 32 lanes.
constexpr int pow2_at_least(int x) {
  int p = 1;
  while (p < x) p <<= 1;
  return p;
}
constexpr int auto_lanes(int n) {
  return n <= 8 ? std::clamp(pow2_at_least(n), 4, 32) : n <= 16 ? 4 : 8;
}
constexpr int shape_groups(int lanes, int m) {
  int ty = std::clamp(std::max(1, m / 2), 1, 512 / lanes);
  const int per_warp = 32 / lanes;
  return (ty + per_warp - 1) / per_warp * per_warp;
}

// Square sizes with a fixed-shape kernel (the benchmark sizes and the block method's blocks).
constexpr int kFixedSizes[] = {4, 8, 16, 32, 64};
bool uses_fixed_kernel(int n, int m, const LllOptions& options) {
  return n == m && !options.all_swap_generic_only &&
         std::find(std::begin(kFixedSizes), std::end(kFixedSizes), n) != std::end(kFixedSizes);
}

// Blocks per SM the compiler must leave room for (0: its choice). 64x64: 5 of float32 (with T
// too: its 42 KB of shared memory allow 5) and 3 of float64 without T, as the shared memory
// allows; the register counts would cap them at 4 and 2.
template <class F, bool kT, int NC>
constexpr int min_blocks() {
  if (NC != 64) return 0;
  if (sizeof(F) == 4) return 5;
  return kT ? 0 : 3;
}

template <class F, bool kT, int NC = 0, int TXC = 0, int TYC = 0>
__global__ void __launch_bounds__(NC ? TXC* TYC : 512, (min_blocks<F, kT, NC>()))
    all_swap_kernel(F* gb, long long* gt, int* gstatus, int n, int m, long long sb, long long st,
                    F delta, long max_iter, bool presort, float t_fast_limit, F* gkeep) {
  extern __shared__ __align__(16) unsigned char smem[];
  Basis<F, kT, NC, TXC, TYC> w;
  w.n = n;
  w.m = m;
  w.tx = threadIdx.x;
  w.ty = threadIdx.y;
  w.Tx = blockDim.x;
  w.Ty = blockDim.y;
  w.tid = w.ty * w.Tx + w.tx;
  w.nth = w.Tx * w.Ty;
  using TT = typename decltype(w)::TT;
  w.T = reinterpret_cast<TT*>(smem);
  w.B = reinterpret_cast<F*>(smem + (kT ? sizeof(TT) * m * m : 0));
  w.Q = w.B + n * m;
  w.R = w.Q + (NC ? 2 * NC : n * m);
  w.flag = reinterpret_cast<int*>(w.R + (NC ? decltype(w)::kPackedR : m * m));
  w.ctr = w.flag + m * int(sizeof(F) / sizeof(int));   // flag doubles as m floats in qr()
  w.tb = reinterpret_cast<float*>(w.ctr + kCounters);  // used where kBounds only
  w.t_fast_limit = t_fast_limit;

  F* gB = gb + blockIdx.x * sb;
  // gkeep (optional): the input as given, packed, for the float32 lattice check (copied while
  // loading: one pass over the batch less than a separate copy).
  F* keep = gkeep ? gkeep + blockIdx.x * (long long)n * m : nullptr;
  for (int i = w.tid; i < n * m; i += w.nth) {
    const F v = gB[i];
    w.B[i] = v;
    if (keep) keep[i] = v;
  }
  __syncthreads();
  // T starts as the presort permutation (T(j, rank[j]) = 1), so that B' = B T for the basis as
  // given; the ranks sit in the flag region until the first QR.
  const bool sorted = presort && m > 1;
  if (sorted) w.presort(w.flag);
  if (kT)
    for (int i = w.tid; i < m * m; i += w.nth)
      w.T[i] = (sorted ? w.flag[i % m] : i % m) == i / m ? 1 : 0;
  if (decltype(w)::kBounds)
    for (int i = w.tid; i < m; i += w.nth) w.tb[i] = 1.0f;  // a permutation
  if (w.tid < kCounters) w.ctr[w.tid] = 0;
  __syncthreads();

  int status = int(LllStatus::not_converged);
  long iter = 0;
  if (w.qr()) {
    status = int(LllStatus::singular);
  } else {
    int quiet = 0, checks = 0;
    for (; iter < max_iter; ++iter) {
      // Full size reduction (m block-wide barriers) only every kFullReductionEvery iterations;
      // the swap phases reduce the tested pairs themselves.
      if (iter % kFullReductionEvery == 0) w.size_reduce();
      const int big = w.ctr[1], out_of_range = w.ctr[4];
      __syncthreads();  // read before this iteration's updates can write them
      if (kT && out_of_range) {
        status = int(LllStatus::precision_loss);
        break;
      }
      if (big) {
        // An imprecise multiplier was rounded: recompute R from B and reduce again.
        if (w.tid == 0) w.ctr[1] = 0;
        if (w.qr()) {
          status = int(LllStatus::singular);
          break;
        }
        w.size_reduce();
      }
      const int swaps = w.swap_phase(int(iter & 1), delta);
      quiet = swaps ? 0 : quiet + 1;
      if (quiet >= 2) {
        if (w.qr()) {
          status = int(LllStatus::singular);
          break;
        }
        w.size_reduce();
        // A big multiplier in this size reduction left R imprecise: not reduced yet (the next
        // iteration recomputes R), as on the CPU.
        if (w.count_violations(delta) == 0 && !w.ctr[1]) {
          status = int(LllStatus::reduced);
          break;
        }
        quiet = 0;
        if (++checks > 16) {
          status = int(LllStatus::precision_loss);
          break;
        }
      }
    }
  }
  __syncthreads();
  if (kT && w.ctr[4]) status = int(LllStatus::precision_loss);  // in the final size reduction
  for (int i = w.tid; i < n * m; i += w.nth) gB[i] = w.B[i];
  if (kT) {
    long long* gT = gt + blockIdx.x * st;
    for (int i = w.tid; i < m * m; i += w.nth) gT[i] = (long long)w.T[i];
  }
  if (w.tid == 0) gstatus[blockIdx.x] = status;
}

// The kernel, with its dynamic shared memory limit raised to the device maximum (once per device:
// core/cuda_smem_limit.hpp). The attribute is a per-function limit, not a per-launch size: CPU
// threads of the block scheduler launch different block sizes concurrently, and setting it to
// each launch's size let one thread lower the limit under another's larger launch
// (cudaErrorInvalidValue seen under compute-sanitizer).
template <auto Kernel>
auto with_smem_limit() {
  mimorx::detail::raise_smem_limit(reinterpret_cast<const void*>(Kernel));
  return Kernel;
}

template <class F, bool kT>
void launch(F* b, std::int64_t* t, std::int32_t* status, std::int64_t batch, int n, int m,
            std::int64_t sb, std::int64_t st, double delta, long max_iter, cudaStream_t s,
            std::size_t smem, bool presort, F* keep, const LllOptions& options) {
  const int Tx = auto_lanes(n);
  const int Ty = shape_groups(Tx, m);
  auto kernel = with_smem_limit<all_swap_kernel<F, kT>>();
  if (uses_fixed_kernel(n, m, options)) {
    switch (n) {
#define MIMORX_LLL_FIXED(N)                                                          \
  case N:                                                                            \
    kernel = with_smem_limit<                                                        \
        all_swap_kernel<F, kT, N, auto_lanes(N), shape_groups(auto_lanes(N), N)>>(); \
    break;
      MIMORX_LLL_FIXED(4)
      MIMORX_LLL_FIXED(8)
      MIMORX_LLL_FIXED(16)
      MIMORX_LLL_FIXED(32)
      MIMORX_LLL_FIXED(64)
#undef MIMORX_LLL_FIXED
      default:
        break;
    }
  }
  const dim3 block(Tx, Ty);
  for (std::int64_t off = 0; off < batch; off += 2147483647LL) {
    const unsigned grid = unsigned(std::min<std::int64_t>(batch - off, 2147483647LL));
    kernel<<<grid, block, smem, s>>>(
        b + off * sb, reinterpret_cast<long long*>(t ? t + off * st : nullptr), status + off, n, m,
        sb, st, F(delta), max_iter, presort, options.int32_transform_fast_path ? 2.0e9f : 0.0f,
        keep ? keep + off * std::int64_t(n) * m : nullptr);
    MIMORX_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

std::size_t all_swap_cuda_smem(int n, int m, bool transform, bool dbl, const LllOptions& options) {
  // T (int64 for float64, int32 for float32), B, the work copy Q (generic) or two pivot vectors
  // (fixed shape), R, the flag / input-norm region (m values of F), the counters and, with int32
  // T, its column bounds.
  const std::size_t f = dbl ? 8 : 4;
  const bool fixed = uses_fixed_kernel(n, m, options);
  const std::size_t q = fixed ? 2 * std::size_t(n) : std::size_t(n) * m;
  const std::size_t r = fixed ? std::size_t(m) * (m + 3) / 2 : std::size_t(m) * m;
  return (transform ? f * m * m : 0) + f * (std::size_t(n) * m + q + r) + f * std::size_t(m) +
         4 * kCounters + (transform && !dbl ? 4 * std::size_t(m) : 0);
}

bool all_swap_cuda_fits(int n, int m, bool transform, bool dbl, int device,
                        const LllOptions& options) {
  int optin = 0;
  MIMORX_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return all_swap_cuda_smem(n, m, transform, dbl, options) <= std::size_t(optin);
}

template <class F>
void all_swap_cuda(F* b, std::int64_t* t, std::int32_t* status, std::int64_t batch, int n, int m,
                   std::int64_t stride_b, std::int64_t stride_t, double delta, long max_iter,
                   void* stream, int device, bool presort, F* keep, const LllOptions& options) {
  if (batch == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const bool dbl = sizeof(F) == 8;
  const std::size_t smem = all_swap_cuda_smem(n, m, t != nullptr, dbl, options);
  if (!all_swap_cuda_fits(n, m, t != nullptr, dbl, device, options))
    throw Unsupported("m, n: a " + std::to_string(n) + "x" + std::to_string(m) + " basis needs " +
                      std::to_string(smem) +
                      " bytes of shared memory, more than one block can have; use method block");
  const auto s = mimorx::detail::as_stream(stream);
  if (t) {
    launch<F, true>(b, t, status, batch, n, m, stride_b, stride_t, delta, max_iter, s, smem,
                    presort, keep, options);
  } else {
    launch<F, false>(b, t, status, batch, n, m, stride_b, stride_t, delta, max_iter, s, smem,
                     presort, keep, options);
  }
}

template void all_swap_cuda<float>(float*, std::int64_t*, std::int32_t*, std::int64_t, int, int,
                                   std::int64_t, std::int64_t, double, long, void*, int, bool,
                                   float*, const LllOptions&);
template void all_swap_cuda<double>(double*, std::int64_t*, std::int32_t*, std::int64_t, int, int,
                                    std::int64_t, std::int64_t, double, long, void*, int, bool,
                                    double*, const LllOptions&);

}  // namespace mimorx::lattice::detail
