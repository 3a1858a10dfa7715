// CR-MB-LLL with the basis resident on the GPU, on an active window [lo, m) (the columns before
// lo are reduced and keep their Gram-Schmidt data; docs/lll.md, "CR-MB-LLL"). Per pass,
// all on one stream:
//   R = chol(B^T B) in float64 (gram_cholesky_cuda.cu) and its checks (singular column,
//     diagonal ratio) at the start, every 8 passes and to confirm a check that passed on the
//     updated R; after the first pass only the columns changed since (tail_cholesky_enqueue);
//     in between R follows the GSC-Update below;
//   the check: Lovasz on every pair, each pair's r_{k-1,k} reduced as the size reduction would,
//     with the first violated pair (which sets lo); one sync;
//   global size reduction (before the final check, or when the blocks' transforms may have
//     grown the entries by 2^16): R's columns in tiles (size_reduce_cuda.cu), recording the
//     multipliers in a matrix M; then B -= B0 M and T -= T0 M as tiled products (T's in float64
//     where that is exact);
//   the window's diagonal blocks of R (offset 0 or l/2, as the host version), reduced with their
//     transforms U_c by the column-warp kernel on R (blocks of up to 32 columns) or as
//     float/double bases by the all-swap kernel;
//   B, T and R's block columns multiplied by U_c in place (one thread per row), then the rows of
//     each block by Q_c^T (Householder QR of the new diagonal block): the GSC-Update
//     R <- Q^T R U (blocks whose U_c is the identity skipped); the blocks that swapped counted,
//     one sync.
// The host side is BlockRun, one call's state, and its stages in the order of
// block_lll_device's loop: set_up and start; per pass begin_pass, refactorise, read_check,
// settle_factorisation, converged (with size_reduce), choose_window, reduce_blocks
// (reduce_group, apply_group), end_block_pass; then finish, or fall_back to the host version.
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <type_traits>
#include <vector>

#include "core/cuda_check.hpp"
#include "lattice/column_warp_lll.hpp"
#include "lattice/lll_internal.hpp"
#include "lattice/lll_math.hpp"
#include "lattice/mma_f64.cuh"
#include "lattice/split_k.cuh"

namespace mimorx::lattice::detail {
namespace {

// Device flags, read by the host at the sync points of a pass.
enum Flag : int {
  kCholFail = 0,    // a Cholesky pivot was not positive
  kSingular,        // r_jj below singular_fraction * ||b_j||, or not finite
  kInaccurate,      // min |r_jj| <= 1e-6 max |r_jj|: the host path uses Householder QR
  kOverflow,        // an int64 transform entry overflowed
  kSwapped,         // blocks of this pass that swapped
  kBlockStatus,     // 1 + the status of a block that was not reduced (0: all reduced)
  kViolations,      // Lovasz violations in the pass's check
  kFirstViolation,  // m - k for the first violated pair (k - 1, k); 0: none
  kFirstChanged,    // m - k for the first column the size reduction changed; 0: none
  kChanged,         // blocks of this pass whose U is not the identity
  kUMax,            // the largest |U| entry of this pass's blocks (clamped to 2^30)
  kFlags
};
// A second bank of kFlags ints after the first takes the checks whose verdicts the host reads
// together with an earlier one (after the block pass, after a size reduction enqueued before
// the host knew it wanted it).
constexpr int kBank = kFlags;
// A third bank keeps a block pass's flags whose reading waits for the next read (stash_flags).
constexpr int kStash = 2 * kFlags;

// The block pass's flags (bank 0) kept in the stash for the host's next read, and banks 0 and 1
// cleared for the next pass: one launch instead of a copy to the host and a memset, two
// operations on the critical path.
__global__ void stash_flags_kernel(int* flags) {  // one block of 32 threads
  static_assert(kFlags <= 64, "two flags a thread");
  int v[2] = {0, 0};
  for (int i = threadIdx.x, u = 0; i < kFlags; i += blockDim.x, ++u) v[u] = flags[i];
  __syncthreads();
  for (int i = threadIdx.x, u = 0; i < kFlags; i += blockDim.x, ++u) flags[kStash + i] = v[u];
  for (int i = threadIdx.x; i < 2 * kFlags; i += blockDim.x) flags[i] = 0;
}
// The size reduction enqueued behind a check runs only where the ints [0, kGateCount) of the
// first bank are zero: no failed factorisation and no Lovasz violation (overflow, swap and block
// status are zero before a pass's blocks).
constexpr int kGateCount = kViolations + 1;
static_assert(kCholFail < kGateCount && kSingular < kGateCount && kInaccurate < kGateCount,
              "the size reduction's gate covers the factorisation's failures");
static_assert(kFirstViolation == kViolations + 1, "one memset clears a bank's check");

// Up to three device-to-device copies in one launch, on the SMs: the size reduction's
// snapshots taken ahead (snapshot_ahead). Not cudaMemcpyAsync: those go to a copy engine, where
// the host's read of the start's flags (a 64-byte copy) would wait behind them. 16-byte units
// where a range allows them, else 4-byte ones (every range here is a multiple of 4 bytes).
struct CopyRange {
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
};
__device__ void copy_range(const CopyRange& c, std::size_t tid, std::size_t threads) {
  const bool wide = (reinterpret_cast<std::uintptr_t>(c.dst) |
                     reinterpret_cast<std::uintptr_t>(c.src) | c.bytes) %
                        16 ==
                    0;
  if (wide) {
    auto* d = static_cast<int4*>(c.dst);
    const auto* s = static_cast<const int4*>(c.src);
    for (std::size_t i = tid; i < c.bytes / 16; i += threads) d[i] = s[i];
  } else {
    auto* d = static_cast<int*>(c.dst);
    const auto* s = static_cast<const int*>(c.src);
    for (std::size_t i = tid; i < c.bytes / 4; i += threads) d[i] = s[i];
  }
}
__global__ void copy_ranges_kernel(CopyRange a, CopyRange b, CopyRange c) {
  const std::size_t tid = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x,
                    threads = std::size_t(gridDim.x) * blockDim.x;
  copy_range(a, tid, threads);
  copy_range(b, tid, threads);
  copy_range(c, tid, threads);
}

// T = I, and tbound (the running upper bound of |T|, raised by every kernel that writes T) =
// bound0 (1; 2^60 where !LllOptions::block_t_float64 turns the float64 products off).
__global__ void identity_kernel(std::int64_t* t, int m, unsigned long long* tbound,
                                unsigned long long bound0) {
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e < (long long)m * m) t[e] = (e % m) == (e / m) ? 1 : 0;
  if (e == 0) *tbound = bound0;
}

// The check of one pair (k - 1, k): Lovasz with r_{k-1,k} reduced against r_{k-1,k-1} as the size
// reduction's first step would (so R need not be size-reduced); a violation counted, and the
// first violated pair kept (m - k, the largest).
__device__ __forceinline__ void check_pair(const double* r, int m, int k, double delta,
                                           int* flags) {
  const double prev = r[(long long)(k - 1) * m + k - 1];
  double off = r[(long long)k * m + k - 1];
  const double q = round_nearest(__dmul_rn(off, 1.0 / prev));
  off = fma(-q, prev, off);
  if (lovasz_violated(delta, prev, off, r[(long long)k * m + k])) {
    atomicAdd(&flags[kViolations], 1);
    atomicMax(&flags[kFirstViolation], m - k);
  }
}

// The checks gs_update (lll_plan.cpp) makes on the Cholesky factor, from the squared column
// norms saved before the factorisation; with `lovasz`, also the pass's check (lovasz_kernel's,
// into the same flags) in the same launch (one launch fewer on the critical path, twice a run).
template <class F>
__global__ void __launch_bounds__(1024)
    check_factor_kernel(const double* norm2, int m, const double* r, int* flags, double delta,
                        int lovasz) {
  using Reduce = cub::BlockReduce<double, 1024>;
  __shared__ typename Reduce::TempStorage tmp;
  double lo = INFINITY, hi = 0;
  for (int j = threadIdx.x; j < m; j += blockDim.x) {
    const double d = fabs(r[(long long)j * m + j]);
    if (!(d > double(singular_fraction<F>()) * sqrt(norm2[j])) || !isfinite(d))
      flags[kSingular] = 1;
    lo = fmin(lo, d);
    hi = fmax(hi, d);
    if (lovasz && j > 0) check_pair(r, m, j, delta, flags);
  }
  lo = Reduce(tmp).Reduce(lo, [](double a, double c) { return fmin(a, c); });
  __syncthreads();
  hi = Reduce(tmp).Reduce(hi, [](double a, double c) { return fmax(a, c); });
  if (threadIdx.x == 0 && !(lo > 1e-6 * hi)) flags[kInaccurate] = 1;
}

// The other half of the size reduction: C[:, k] -= sum_j A[:, j] M(j, k) for the snapshot A
// (B0 or T0, rows x m) and the multipliers M (upper triangular, m x m) size_reduce_enqueue
// recorded, as one tiled product (the column-by-column form re-read the snapshot for every
// column: most of the size reduction's time when the multipliers are dense). 64 x 64 output
// tiles; a tile whose columns have no multiplier, and a 16-wide slab of M that is all zero, is
// skipped. B: float64 accumulation. T: exact, in float64 where every partial sum is below 2^53
// (|T| <= tbound and sum_j |M(j, k)| <= colsum[k] over the tile's columns: the usual case, and
// several times faster than the 128-bit integer products), else in 128-bit integers with
// overflow flagged; the new entries raise tbound.
constexpr double kExact = 9007199254740992.0;  // 2^53

// The largest |v| of the calling warp's values into *bound (a monotone upper bound of |T|).
__device__ void raise_bound(unsigned long long* bound, unsigned long long v) {
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
  if (threadIdx.x % 32 == 0) atomicMax(bound, v);
}

// The largest of the block's non-negative values v (0 from threads without one), returned to
// every thread; non-negative doubles order as their bits. Called by the whole block: the last
// barrier lets it be called again.
__device__ double block_max_nonneg(double v) {
  __shared__ unsigned long long best;
  if (threadIdx.x == 0) best = 0;
  __syncthreads();
  atomicMax(&best, static_cast<unsigned long long>(__double_as_longlong(v)));
  __syncthreads();
  const double r = __longlong_as_double(static_cast<long long>(best));
  __syncthreads();
  return r;
}

__device__ unsigned long long magnitude(std::int64_t v) {
  return v < 0 ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
}

// The slabs of one 64 x 64 output tile, 16 deep: A = the snapshot (rows I0.., [k][row], the
// row-major order of the loads) and M (columns J0.., [column][k]); M(j, k) = 0 for j >= k, so
// the k range ends at the tile's last column. The next slab is loaded into registers while this
// one is multiplied (the longest tiles have 64 slabs). Loads: thread e reads A(I0 + e % 64,
// k0 + e / 64) (along the rows) and M(k0 + e % 16, J0 + e / 16) (along k).
template <class X>
struct ProductSlabs {
  static constexpr int kLdA = 64 + 4, kLdM = 16 + 4;  // half-warp fragment loads on 16 banks
  X ra[4];
  double rq[4];
  __device__ void fetch(const X* a, long long ld, int rows, int m, const double* mult, int I0,
                        int J0, int k0) {
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      const int e = threadIdx.x + 256 * p;
      const int i = e % 64, kk = e / 64;
      ra[p] = I0 + i < rows && k0 + kk < m ? a[(long long)(k0 + kk) * ld + I0 + i] : X(0);
      const int jj = e % 16, cc = e / 16;
      rq[p] = J0 + cc < m && k0 + jj < m ? mult[(long long)(J0 + cc) * m + k0 + jj] : 0.0;
    }
  }
};

// The products' shared memory: the float64 form's partial tile (its slabs fit in it), and the
// 128-bit form's two 16 x 65 int64 slabs.
constexpr int kProductSmem = 64 * 64;

// The float64 form (B, and T where every partial sum stays below 2^53, so exact in any order):
// 8 warps of 32 x 16 outputs on the float64 tensor cores (mma_f64.cuh): an FMA loop (4 x 4
// outputs per thread) is bound by its shared-memory loads. The k range is split over the blocks
// of a cluster (split_k.cuh): the products of the final size reduction have a few output tiles
// with up to 64 slabs each, which one block per tile would run serially.
template <class X>
__device__ void subtract_products_tile(X* c, const X* a, long long ld, int rows, int m,
                                       const double* mult, unsigned long long* tbound,
                                       double* smem) {
  constexpr bool kInt = std::is_same_v<X, std::int64_t>;
  using Slabs = ProductSlabs<X>;
  const int I0 = blockIdx.y * 64, J0 = blockIdx.x * 64;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, wr = warp % 2, wc = warp / 2;
  // smem (kProductSmem): the slabs, and after the products the block's partial tile
  // (smem[col * 64 + row]).
  double* xa = smem;
  double* xm = smem + 16 * Slabs::kLdA;
  double acc[4][2][2] = {};
  int k_begin = 0, k_end = 0;
  split_range(min(m, J0 + 64), 16, k_begin, k_end);
  Slabs sl;
  if (k_begin < k_end) sl.fetch(a, ld, rows, m, mult, I0, J0, k_begin);
  for (int k0 = k_begin; k0 < k_end; k0 += 16) {
    bool nz = false;
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      const int e = threadIdx.x + 256 * p;
      xa[(e / 64) * Slabs::kLdA + e % 64] = double(sl.ra[p]);
      xm[(e / 16) * Slabs::kLdM + e % 16] = sl.rq[p];
      nz |= sl.rq[p] != 0;
    }
    if (k0 + 16 < k_end) sl.fetch(a, ld, rows, m, mult, I0, J0, k0 + 16);
    if (!__syncthreads_or(nz)) continue;
    warp_mma<16, 4, 2, 1, Slabs::kLdA, Slabs::kLdM, 1>(xa + 32 * wr, xm + 16 * wc * Slabs::kLdM,
                                                       acc, lane);
    __syncthreads();
  }
  // The loop ended on a barrier after the last reads of the slabs.
  store_acc(smem, 64, 32 * wr, 16 * wc, acc, lane);
  unsigned long long big = 0;
  cluster_sum(smem, 64 * 64, [&](int e, double sum) {
    const int r = I0 + e % 64, k = J0 + e / 64;
    if (r >= rows || k >= m) return;
    X& dst = c[(long long)k * ld + r];
    if constexpr (kInt) {
      dst = std::int64_t(double(dst) - sum);  // exact: every term below 2^53
      big = max(big, magnitude(dst));
    } else {
      dst = X(double(dst) - sum);
    }
  });
  if constexpr (kInt) raise_bound(tbound, big);
}

// T's product in 128-bit integers (when the float64 bound does not hold), overflow flagged.
__device__ void subtract_products_tile_wide(std::int64_t* c, const std::int64_t* a, long long ld,
                                            int rows, int m, const double* mult, int* flags,
                                            unsigned long long* tbound, double* smem) {
  using Slabs = ProductSlabs<std::int64_t>;
  const int I0 = blockIdx.y * 64, J0 = blockIdx.x * 64;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  auto xa = reinterpret_cast<std::int64_t(*)[65]>(smem);  // [16][65]
  auto xm = xa + 16;                                      // [16][65]
  __int128 acc[4][4] = {};
  const int kend = min(m, J0 + 64);
  Slabs sl;
  sl.fetch(a, ld, rows, m, mult, I0, J0, 0);
  for (int k0 = 0; k0 < kend; k0 += 16) {
    bool nz = false;
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      const int e = threadIdx.x + 256 * p;
      xa[e / 64][e % 64] = sl.ra[p];
      const double q = sl.rq[p];
      if (!(fabs(q) < 4.0e18)) flags[kOverflow] = 1;
      xm[e % 16][e / 16] = fabs(q) < 4.0e18 ? std::int64_t(q) : 0;
      nz |= q != 0;
    }
    if (k0 + 16 < kend) sl.fetch(a, ld, rows, m, mult, I0, J0, k0 + 16);
    if (!__syncthreads_or(nz)) continue;
#pragma unroll
    for (int kk = 0; kk < 16; ++kk) {
      __int128 av[4], mv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        av[i] = xa[kk][tx + 16 * i];
        mv[i] = xm[kk][ty + 16 * i];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * mv[j];
    }
    __syncthreads();
  }
  unsigned long long big = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int r = I0 + tx + 16 * i, k = J0 + ty + 16 * j;
      if (r >= rows || k >= m) continue;
      std::int64_t& dst = c[(long long)k * ld + r];
      const __int128 v = (__int128)dst - acc[i][j];
      if (v > (__int128)INT64_MAX || v < (__int128)INT64_MIN) flags[kOverflow] = 1;
      dst = std::int64_t(v);
      big = max(big, magnitude(dst));
    }
  raise_bound(tbound, big);
}

template <class X>
__global__ void __launch_bounds__(256)
    subtract_products_kernel(X* c, const X* a, long long ld, int rows, int m, const double* mult,
                             const int* mcol, int* flags, const double* colsum,
                             unsigned long long* tbound) {
  __shared__ double smem[kProductSmem];  // both tile forms' shared memory
  const int J0 = blockIdx.x * 64;
  const bool has = threadIdx.x < 64 && J0 + int(threadIdx.x) < m && mcol[J0 + threadIdx.x];
  if (!__syncthreads_or(has)) return;
  if constexpr (std::is_same_v<X, std::int64_t>) {
    // float64 is exact when |T0| (<= tbound) times (1 + the tile's largest column sum of |M|)
    // stays below 2^53.
    const double cmax = block_max_nonneg(
        threadIdx.x < 64 && J0 + int(threadIdx.x) < m ? colsum[J0 + threadIdx.x] : 0.0);
    // The bound as rank 0 of the cluster read it: other clusters raise it concurrently, and the
    // blocks of one cluster must choose the same path.
    if (double(cluster_rank0_value(tbound)) * (1.0 + cmax) < kExact) {
      subtract_products_tile<X>(c, a, ld, rows, m, mult, tbound, smem);
    } else if (blockIdx.z == 0) {  // one block of the cluster, over the whole k range
      subtract_products_tile_wide(c, a, ld, rows, m, mult, flags, tbound, smem);
    }
  } else {
    subtract_products_tile<X>(c, a, ld, rows, m, mult, tbound, smem);
  }
}

// colsum[k] = sum_j |M(j, k)| (0 for a column without multipliers), one warp per column: the
// bound that lets T's product run in float64.
__global__ void abs_colsum_kernel(const double* mult, const int* mcol, int m, double* colsum) {
  const int k = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (k >= m) return;
  double s = 0;
  if (mcol[k])
    for (int j = lane; j < k; j += 32) s += fabs(mult[(long long)k * m + j]);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (lane == 0) colsum[k] = s;
}

// Diagonal block c (columns s0 + c * stride ...) of R as an upper-triangular sz x sz basis.
template <class F>
__global__ void extract_blocks_kernel(const double* r, int m, int s0, int stride, int sz,
                                      F* blocks) {
  const int c = blockIdx.x, s = s0 + c * stride;
  F* out = blocks + (long long)c * sz * sz;
  for (int e = threadIdx.x; e < sz * sz; e += blockDim.x) {
    const int i = e % sz, j = e / sz;
    out[e] = i <= j ? F(r[(long long)(s + j) * m + s + i]) : F(0);
  }
}

constexpr int kMaxBlock = 64;  // LllConfig::block <= 64

// X[row, s : s + sz] <- X[row, s : s + sz] U_c for every row (B and R: float accumulation in
// double, as the host version; T: exact, in float64 where |T| <= tbound times U_c's largest
// column sum of |U| stays below 2^53, else in 128-bit integers with overflow flagged; the new
// entries raise tbound).
// A block takes 32 rows (lane = row) and its four warps a quarter of the output columns each
// (measured faster than one thread a row for all columns, one warp per SMSP). Each output
// accumulates over k in order, so the numbers do not depend on the split.
// SZ: the block size at compile time (32, the automatic one from m = 64 on), 0: sz at run time;
// with a run-time size the loads of U_c and of the row wait for one another.
constexpr int kApplyRows = 32, kApplyGroups = 4;
template <class X, int SZ>
__global__ void __launch_bounds__(128)
    apply_u_kernel(X* x, long long ld, int rows, int s0, int stride, int sz_run,
                   const std::int64_t* u, const int* ident, int* flags,
                   unsigned long long* tbound) {
  const int sz = SZ ? SZ : sz_run;
  constexpr int kMaxK = SZ ? SZ : kMaxBlock;  // the unrolled loops' bound
  if (ident[blockIdx.x]) return;              // U_c = I
  constexpr bool kInt = std::is_same_v<X, std::int64_t>;
  const int c = blockIdx.x, s = s0 + c * stride;
  const std::int64_t* uc = u + (long long)c * sz * sz;
  // U_c staged in shared memory as double (B, R, and T where float64 is exact: one conversion
  // per entry instead of one per row and entry) or as int64.
  __shared__ std::int64_t us_raw[kMaxBlock * kMaxBlock];
  double* usd = reinterpret_cast<double*>(us_raw);
  bool wide = false;
  if constexpr (kInt) {
    double colmax = 0;  // the largest column sum of |U_c| among this thread's columns
    for (int j = threadIdx.x; j < sz; j += blockDim.x) {
      double sum = 0;
      for (int kk = 0; kk < sz; ++kk) sum += fabs(double(uc[j * sz + kk]));
      colmax = fmax(colmax, sum);
    }
    wide = !(double(*tbound) * block_max_nonneg(colmax) < kExact);
  }
  // 8 loads in flight a thread.
  constexpr int kStageLoads = 8;
  for (int e0 = threadIdx.x; e0 < sz * sz; e0 += kStageLoads * blockDim.x) {
    std::int64_t v[kStageLoads];
#pragma unroll
    for (int p = 0; p < kStageLoads; ++p) {
      const int e = e0 + p * int(blockDim.x);
      v[p] = e < sz * sz ? uc[e] : 0;
    }
#pragma unroll
    for (int p = 0; p < kStageLoads; ++p) {
      const int e = e0 + p * int(blockDim.x);
      if (e >= sz * sz) break;
      if (wide) {
        us_raw[e] = v[p];
      } else {
        usd[e] = double(v[p]);
      }
    }
  }
  __syncthreads();
  const int row = blockIdx.y * kApplyRows + int(threadIdx.x) % kApplyRows;
  if (row >= rows) return;
  const int per = (sz + kApplyGroups - 1) / kApplyGroups;  // output columns a warp
  const int j0 = int(threadIdx.x) / kApplyRows * per, j1 = min(sz, j0 + per);
  if constexpr (kInt) {
    if (wide) {
      std::int64_t in[kMaxK];
#pragma unroll
      for (int kk = 0; kk < kMaxK; ++kk)
        if (kk < sz) in[kk] = x[(long long)(s + kk) * ld + row];
      unsigned long long big = 0;
      for (int j = j0; j < j1; ++j) {
        __int128 acc = 0;
#pragma unroll
        for (int kk = 0; kk < kMaxK; ++kk)
          if (kk < sz) acc += (__int128)us_raw[j * sz + kk] * in[kk];
        if (acc > (__int128)INT64_MAX || acc < (__int128)INT64_MIN) flags[kOverflow] = 1;
        x[(long long)(s + j) * ld + row] = std::int64_t(acc);
        big = max(big, magnitude(std::int64_t(acc)));
      }
      atomicMax(tbound, big);
      return;
    }
  }
  // Four output columns per step, four independent accumulation chains (one chain per thread
  // left the kernel latency-bound at 4 resident warps per SM).
  using In = std::conditional_t<kInt, double, X>;
  In in[kMaxK];
#pragma unroll
  for (int kk = 0; kk < kMaxK; ++kk)
    if (kk < sz) in[kk] = In(x[(long long)(s + kk) * ld + row]);
  unsigned long long big = 0;
  for (int j = j0; j < j1; j += 4) {
    double acc[4] = {0, 0, 0, 0};
#pragma unroll
    for (int kk = 0; kk < kMaxK; ++kk)
      if (kk < sz) {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj)
          if (j + jj < j1) acc[jj] = fma(usd[(j + jj) * sz + kk], double(in[kk]), acc[jj]);
      }
#pragma unroll
    for (int jj = 0; jj < 4; ++jj)
      if (j + jj < j1) {
        x[(long long)(s + j + jj) * ld + row] = X(acc[jj]);  // T: an exact integer
        if constexpr (kInt) big = max(big, magnitude(std::int64_t(acc[jj])));
      }
  }
  if constexpr (kInt) atomicMax(tbound, big);
}

dim3 apply_grid(int blocks, int rows) {
  return dim3(unsigned(blocks), unsigned((rows + kApplyRows - 1) / kApplyRows));
}

// X[:, blocks of the group] <- X U_c: the kernel for the group's block size.
template <class X>
void apply_u(X* x, long long ld, int rows, int s0, int stride, int sz, int count,
             const std::int64_t* u, const int* ident, int* flags, unsigned long long* tbound,
             cudaStream_t s) {
  const dim3 grid = apply_grid(count, rows), block(kApplyRows * kApplyGroups);
  if (sz == 32) {
    apply_u_kernel<X, 32>
        <<<grid, block, 0, s>>>(x, ld, rows, s0, stride, sz, u, ident, flags, tbound);
  } else {
    apply_u_kernel<X, 0>
        <<<grid, block, 0, s>>>(x, ld, rows, s0, stride, sz, u, ident, flags, tbound);
  }
  MIMORX_CUDA_CHECK_LAUNCH();
}

// The row half of the GSC-Update (Jozsa et al., CR-MB-LLL) for diagonal block c at s (after the
// column half R[:, s : s + sz] <- R[:, s : s + sz] U_c), in two kernels: gsc_qr_kernel
// factors A = R[s : s + sz, s : s + sz] (= R_cc U_c) by Householder QR, writes R~_c and keeps
// the reflectors; gsc_apply_kernel applies Q_c^T to the rows R[s : s + sz, s + sz :], one thread
// per column over the whole grid (the host version does the same with Eigen).
constexpr int kReflStride = kMaxBlock * kMaxBlock + 2 * kMaxBlock;  // per block: V, v0, beta

__global__ void __launch_bounds__(128)
    gsc_qr_kernel(double* r, int m, int s0, int stride, int sz, const int* ident, double* refl) {
  if (ident[blockIdx.x]) return;  // R_cc unchanged: still upper triangular
  // a[i][k] = A(i, k); after step j, a[i][j] (i > j) holds reflector j below its first entry
  // vdiag[j] (LAPACK's compact form).
  __shared__ double a[kMaxBlock][kMaxBlock + 1];
  __shared__ double vdiag[kMaxBlock], beta[kMaxBlock], red[4];
  const int c = blockIdx.x, s = s0 + c * stride;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int e = threadIdx.x; e < sz * sz; e += blockDim.x)
    a[e % sz][e / sz] = r[(long long)(s + e / sz) * m + s + e % sz];
  __syncthreads();
  for (int j = 0; j < sz; ++j) {
    double part = 0;
    for (int i = j + threadIdx.x; i < sz; i += blockDim.x) part += a[i][j] * a[i][j];
    for (int off = 16; off > 0; off >>= 1) part += __shfl_xor_sync(0xffffffffu, part, off);
    if (lane == 0) red[warp] = part;
    __syncthreads();
    const double nrm2 = red[0] + red[1] + red[2] + red[3];
    const double x0 = a[j][j];
    const double alpha = -copysign(sqrt(nrm2), x0);
    const double v0 = x0 - alpha;
    const double vn2 = nrm2 - x0 * x0 + v0 * v0;
    const double bj = vn2 > 0 ? 2.0 / vn2 : 0.0;
    // Apply H_j = I - beta v v^T to the block's columns k > j (one thread per column).
    for (int k = j + 1 + threadIdx.x; k < sz; k += blockDim.x) {
      double dot = v0 * a[j][k];
      for (int i = j + 1; i < sz; ++i) dot += a[i][j] * a[i][k];
      dot *= bj;
      a[j][k] -= dot * v0;
      for (int i = j + 1; i < sz; ++i) a[i][k] -= dot * a[i][j];
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      vdiag[j] = v0;
      beta[j] = bj;
      a[j][j] = bj > 0 ? alpha : x0;
    }
    __syncthreads();
  }
  double* out = refl + (long long)c * kReflStride;  // V column-major (sz x sz), v0, beta
  for (int e = threadIdx.x; e < sz * sz; e += blockDim.x) {
    const int i = e % sz, k = e / sz;
    r[(long long)(s + k) * m + s + i] = i <= k ? a[i][k] : 0.0;
    out[e] = i > k ? a[i][k] : 0.0;
  }
  for (int j = threadIdx.x; j < sz; j += blockDim.x) {
    out[sz * sz + j] = vdiag[j];
    out[sz * sz + sz + j] = beta[j];
  }
}

template <int kMax>
__global__ void __launch_bounds__(128)
    gsc_apply_kernel(double* r, int m, int s0, int stride, int sz, const int* ident,
                     const double* refl) {
  if (ident[blockIdx.x]) return;
  __shared__ double v[kMax][kMax + 1];  // v[i][j]: reflector j, rows j..sz-1
  __shared__ double beta[kMax];
  const int c = blockIdx.x, s = s0 + c * stride;
  const double* in = refl + (long long)c * kReflStride;
  for (int e = threadIdx.x; e < kMax * kMax; e += blockDim.x) {
    const int i = e % kMax, j = e / kMax;
    v[i][j] = i >= sz || j >= sz ? 0.0 : i == j ? in[sz * sz + j] : in[j * sz + i];
  }
  for (int j = threadIdx.x; j < kMax; j += blockDim.x)
    beta[j] = j < sz ? in[sz * sz + sz + j] : 0.0;
  __syncthreads();
  const int k = s + sz + blockIdx.y * blockDim.x + threadIdx.x;
  if (k >= m) return;
  double* col = r + (long long)k * m + s;
  double x[kMax];
#pragma unroll
  for (int i = 0; i < kMax; ++i) x[i] = i < sz ? col[i] : 0.0;
  for (int j = 0; j < sz; ++j) {
    double dot = 0;
#pragma unroll
    for (int i = 0; i < kMax; ++i)
      if (i >= j) dot += v[i][j] * x[i];  // v[i][j] = 0 for i >= sz
    dot *= beta[j];
#pragma unroll
    for (int i = 0; i < kMax; ++i)
      if (i >= j) x[i] -= dot * v[i][j];
  }
#pragma unroll
  for (int i = 0; i < kMax; ++i)
    if (i < sz) col[i] = x[i];
}

// Blocks whose U is not upper triangular (they swapped), the first block status that is not
// `reduced`, and per block whether U is the identity (ident[c]: the products with U and the
// GSC-Update skip it; in the passes that end a reduction no block changes).
__global__ void count_swaps_kernel(const std::int64_t* u, const std::int32_t* status, int sz,
                                   int* flags, int* ident) {
  const int c = blockIdx.x;
  const std::int64_t* uc = u + (long long)c * sz * sz;
  bool lower = false, changed = false;
  std::int64_t big = 0;  // this thread's largest |U| entry
  for (int e = threadIdx.x; e < sz * sz; e += blockDim.x) {
    if (e % sz > e / sz && uc[e] != 0) lower = true;
    if (uc[e] != (e % sz == e / sz ? 1 : 0)) changed = true;
    big = max(big, uc[e] < 0 ? -uc[e] : uc[e]);
  }
  if (big > 1) atomicMax(&flags[kUMax], int(big < (1 << 30) ? big : (1 << 30)));
  lower = __syncthreads_or(lower);
  changed = __syncthreads_or(changed);
  if (threadIdx.x == 0) {
    ident[c] = !changed;
    if (changed) atomicAdd(&flags[kChanged], 1);
    if (lower) atomicAdd(&flags[kSwapped], 1);
    if (status[c] != std::int32_t(LllStatus::reduced))
      atomicCAS(&flags[kBlockStatus], 0, 1 + status[c]);
  }
}

// The pass's check: Lovasz on every pair (k - 1, k), with r_{k-1,k} reduced against r_{k-1,k-1}
// as the size reduction's first step would (so R need not be size-reduced), and the first
// violated pair. mcol (may be null): after a size reduction, also the first column it changed
// (m - k into changed[kFirstChanged]), in the same launch.
__global__ void lovasz_kernel(const double* r, int m, double delta, int* flags, const int* mcol,
                              int* changed) {
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < m; k += gridDim.x * blockDim.x) {
    if (k > 0) check_pair(r, m, k, delta, flags);
    if (mcol && mcol[k]) atomicMax(&changed[kFirstChanged], m - k);
  }
}

// The first column of the window a check's first violated pair asks for: that pair's first
// column rounded down to l (first_violation_flag: flags[kFirstViolation], m - k for the pair
// (k - 1, k)). The host and the side stream's gate both choose by it.
__host__ __device__ inline int window_start(int m, int first_violation_flag, int l) {
  return (m - first_violation_flag - 1) / l * l;
}

// A window of at most m / 8 columns: refactorised after its block pass rather than carried
// through the GSC-Update (LllOptions::refactor_small_window).
__host__ __device__ inline bool small_window(int m, int lo) {
  return std::int64_t(m - lo) * 8 <= m;
}

// The side stream's inverse of R runs where the first check finds the factorisation sound and
// its window starts at `from` or later (the host's choice after reading the same flags);
// *skip = 1 otherwise.
// skip[1]: the diagonal blocks from column `early` on (those the start did not invert) are
// skipped too where the window starts at or before `early` (W's columns from there are not used).
// small_needs_none: a small window (at most m / 8 columns) does not use W either (its
// refactorisation keeps the head's block rows: head_rows_kept).
__global__ void inverse_gate_kernel(const int* flags, int m, int l, int from, int early,
                                    int small_needs_none, int* skip) {
  bool use = flags[kViolations] > 0 && flags[kFirstViolation] > 0 && !flags[kCholFail] &&
             !flags[kSingular] && !flags[kInaccurate];
  const int lo = window_start(m, flags[kFirstViolation], l);
  if (use) use = lo >= from && !(small_needs_none && small_window(m, lo));
  skip[0] = use ? 0 : 1;
  skip[1] = use && lo > early ? 0 : 1;
}

// The head inverse pays from this window start on (below it the forward substitution is short).
constexpr int kInverseFrom = 512;
// R is recomputed from B at least every kFullEvery passes (the GSC-Update's drift).
constexpr long kFullEvery = 8;
// The first size reduction's snapshots are taken ahead from this m on.
constexpr int kSnapshotFrom = 256;

// What one pass does, decided at its start from the run's state.
struct PassPlan {
  bool confirming;    // a fresh R confirms a check that passed on the updated R
  bool fresh;         // R is computed from B in this pass
  bool reduce_first;  // a size reduction precedes the check (the entries may have grown by 2^16)
  // The final size reduction and its check are enqueued behind a confirming factorisation's
  // check, gated on the device by its verdict, and all of them read at once.
  bool speculate;
};

// The block pass over the active window [lo, m).
struct WindowPass {
  bool update_r;   // R carried through the pass by the GSC-Update (else refactorised after it)
  bool keep_rows;  // R's head rows of the window's columns take the blocks' U (head_rows_kept)
};

// How a stage leaves the pass: on to the pass's next stage, on to the next pass, or the end of
// the run (finish with `status`, or hand the restored input back to the caller: fall_back).
enum class Next { stage, pass, finish, fall_back };
struct Verdict {
  Next next = Next::stage;
  LllStatus status = LllStatus::reduced;
};
Verdict finish_with(LllStatus status) { return {Next::finish, status}; }

// One call of block_lll_device: its arguments, the device buffers it works on and the state its
// stages share. The stages below run in the order of block_lll_device's loop; each enqueues on
// `stream` (and the side and snapshot streams) and reads the device flags only where it says so.
template <class F>
struct BlockRun {
  // The call's arguments.
  int n, m;
  F* b;
  std::int64_t* t;
  double delta;
  int l;
  BlockLllWorkspace<F>& ws;
  void* stream;
  cudaStream_t s;
  int device;
  const LllOptions& options;
  const StartPrologue* prologue;
  LllStats* stats;  // receives st at the finish
  std::size_t nm, mm;

  // Set by set_up.
  unsigned long long* tbound = nullptr;  // T's running bound (null without T)
  int* flags = nullptr;                  // device: two banks and the stash (Flag)
  int* hf = nullptr;                     // pinned: the flags as last read
  // float32 blocks see R rounded to float: the final float64 check allows that rounding (as
  // the host version).
  double delta_check = 0;
  bool head_inverse = false;
  // The diagonal blocks of W before R's last 128-column block (early_cols columns) are inverted
  // inside the start, on the side stream beside the factorisation's panels after them (the
  // factorisation stops at early_cols, FactorSplit, and resumes leaving their blocks free), so
  // that W is ready when the window's refactorisation needs it. The last block, where the window
  // starts after it, and the doubling's products follow the start, gated by its check.
  int early_cols = 0;
  void* side = nullptr;
  cudaStream_t ss = nullptr;
  FactorSplit split{};
  // With the small window's head rows kept, W serves wider windows only.
  bool small_needs_no_inverse = false;

  LllStats st{};
  // The active window (docs/lll.md, "CR-MB-LLL"): the blocks cover [lo, m) only. Columns
  // before lo satisfy Lovasz with their neighbours, and nothing in [lo, m) changes their
  // Gram-Schmidt data: they keep them to the end. Every check covers all pairs, so lo moves
  // down where the window's reduction made its first pair (lo - 1, lo) violate Lovasz.
  // The global size reduction is not needed by the blocks (they reduce within themselves, and
  // the check reduces each pair's r_{k-1,k} as the size reduction would): it runs before the
  // final check, and between when the blocks' transforms may have grown the entries by more
  // than 2^16 since the last one.
  int lo = 0;
  int dirty = 0;      // columns from here on may differ from those R was last computed from
  int sr_from = 0;    // columns from here on may not be size-reduced
  double growth = 0;  // log2 of the entries' possible growth since the last size reduction
  int quiet = 0, checks = 0;
  bool refresh = true;  // the next pass starts from a fresh R
  // The next fresh R confirms a check that passed on the updated R (or follows drift): counted
  // against a loop of confirmations that keep failing.
  bool confirm_check = false;
  long last_full = 0;
  // W = R^{-1} of the first factorisation (tri_inverse_cuda.cu), computed on the side stream
  // from the moment R is there (enqueued before the host reads the first check, behind a copy
  // of R), gated on the device by that check: it runs where the first window starts at
  // kInverseFrom or later. W's leading block of the head [0, lo) is the inverse of R's (R is
  // triangular), and the refactorisations' head block rows are then one product. Columns before
  // the window keep their R to the end (while the window does not reach them), so W stays valid
  // for every refactorisation from a column up to inv_size.
  int inv_size = 0;
  bool side_launched = false;
  // The size reduction's snapshots (R0, B0 and T0 of the columns [snap_lo, snap_upto)) and its
  // initialisation of M taken ahead on a stream of their own (snapshot_ahead), off the critical
  // path between the refactorisation and the size reduction: pending while not yet waited for
  // on `stream`.
  bool snap_pending = false, snap_valid = false;
  int snap_lo = 0, snap_upto = 0;
  // A size reduction's first changed column is found by the check that follows it.
  bool changed_pending = false;
  // R's rows before kept_from of the columns from it hold the head's block rows of the current
  // B (the fresh ones times the last block pass's U; -1: no such rows).
  int kept_from = -1;
  // The check of the R a block pass left, read with that pass's flags: the next pass's check
  // where nothing comes between (one host round trip fewer a pass). Its verdict stays in hf's
  // second bank until then.
  bool have_next_check = false;
  // A small window's pass whose flags were not read before the refactorisation that follows it
  // was enqueued (their copy is at hf + kStash).
  bool pending = false;
  bool flags_cleared = false;  // the next pass's banks are already zero (stash_flags_kernel)

  // Set-up: the workspace holds every buffer this n, m (and T, and the head inverse) needs, and
  // the side stream exists where the head inverse runs. Enqueues nothing.
  void set_up() {
    MIMORX_CUDA_CHECK(cudaSetDevice(device));
    ensure_device(ws.b_in, nm, device);
    ensure_device(ws.b0, nm, device);
    ensure_device(ws.blocks, std::size_t(m) * kMaxBlock, device);
    ensure_device(ws.r, mm, device);
    ensure_device(ws.r0, mm, device);
    ensure_device(ws.mult, mm, device);
    ensure_device(ws.mcol, std::size_t(m), device);
    ensure_device(ws.srsync, size_reduce_sync_size(m), device);
    ensure_device(ws.diag, diag_scratch_size(m), device);
    ensure_device(ws.norm2, std::size_t(m), device);
    ensure_device(ws.u, std::size_t(m) * kMaxBlock, device);
    ensure_device(ws.refl, std::size_t(m / 2 + 1) * kReflStride, device);
    ensure_device(ws.bstatus, std::size_t(m), device);
    ensure_device(ws.ident, std::size_t(m), device);
    ensure_device(ws.flags, 3 * kFlags, device);
    if (t) {
      ensure_device(ws.t0, mm, device);
      ensure_device(ws.colsum, std::size_t(m), device);
      ensure_device(ws.tbound, 1, device);
    }
    tbound = t ? ws.tbound.data() : nullptr;
    // Two banks, then the flags of a block pass settled late (`pending`): all three read.
    if (ws.hflags.size() < 3 * kFlags) ws.hflags = Buffer<int>::pinned(3 * kFlags);
    flags = ws.flags.data();
    hf = ws.hflags.data();
    delta_check = sizeof(F) == 4 ? delta * (1 - 1e-5) : delta * (1 - 1e-12);
    head_inverse = m >= kInverseFrom;
    early_cols = head_inverse && options.early_head_inverse
                     ? (m - 1) / kTriInverseBlock * kTriInverseBlock
                     : 0;
    side = head_inverse ? ws.side.get(device) : nullptr;
    ss = mimorx::detail::as_stream(side);
    if (head_inverse) {
      ensure_device(ws.rcopy, mm, device);
      ensure_device(ws.rinv, mm, device);
      ensure_device(ws.rinv_tmp, mm, device);
      ensure_device(ws.inv_skip, 2, device);
    }
    split.col = early_cols;
    split.reserve = tri_inverse_diag_blocks(early_cols);
    split.at = [this] {
      ws.head_factored.record(stream);
      ws.head_factored.wait(side);
      MIMORX_CUDA_CHECK(cudaMemcpyAsync(ws.rcopy.data(), ws.r.data(),
                                        std::size_t(early_cols) * m * sizeof(double),
                                        cudaMemcpyDeviceToDevice, ss));
      MIMORX_CUDA_CHECK(cudaMemsetAsync(ws.rinv.data(), 0, mm * sizeof(double), ss));
      tri_inverse_diag_enqueue(ws.rcopy.data(), m, early_cols, 0, ws.rinv.data(), side);
    };
    small_needs_no_inverse = options.kept_head_rows && options.refactor_small_window;
  }

  // hf holds the device flags (all three banks) as they are after the work enqueued so far.
  void read_flags() {
    MIMORX_CUDA_CHECK(
        cudaMemcpyAsync(hf, flags, 3 * kFlags * sizeof(int), cudaMemcpyDeviceToHost, s));
    MIMORX_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  // Later work on `stream` waits for the snapshots taken ahead.
  void join_snapshot() {
    if (snap_pending) ws.snapped.wait(stream);
    snap_pending = false;
  }
  // Later work on `stream` (this call's or the next) waits for the side and snapshot streams.
  void join_side() {
    if (side_launched) ws.done.wait(stream);
    join_snapshot();
  }

  // The head inverse's rest on the side stream, behind the start's check and gated on the
  // device by it (inverse_gate_kernel makes the host's later choice of inv_size).
  void launch_inverse() {
    ws.factored.record(stream);
    ws.factored.wait(side);
    const std::size_t from = std::size_t(early_cols) * m;  // rcopy's columns copied in the start
    MIMORX_CUDA_CHECK(cudaMemcpyAsync(ws.rcopy.data() + from, ws.r.data() + from,
                                      (mm - from) * sizeof(double), cudaMemcpyDeviceToDevice, ss));
    inverse_gate_kernel<<<1, 1, 0, ss>>>(flags, m, l, kInverseFrom, early_cols,
                                         small_needs_no_inverse ? 1 : 0, ws.inv_skip.data());
    MIMORX_CUDA_CHECK_LAUNCH();
    ws.copied.record(side);  // R copied and the flags read: this stream may change both
    if (early_cols > 0) {
      tri_inverse_diag_enqueue(ws.rcopy.data(), m, m, early_cols / kTriInverseBlock, ws.rinv.data(),
                               side, ws.inv_skip.data() + 1);
      tri_inverse_products_enqueue(ws.rcopy.data(), m, m, ws.rinv.data(), ws.rinv_tmp.data(), side,
                                   ws.inv_skip.data(), options);
    } else {
      tri_inverse_enqueue(ws.rcopy.data(), m, m, ws.rinv.data(), ws.rinv_tmp.data(), side,
                          ws.inv_skip.data(), options);
    }
    ws.done.record(side);
    side_launched = true;
  }

  // Finish: the run ends with `status` (B and T as the passes left them); later work on
  // `stream` is ordered behind the side streams.
  bool finish(LllStatus status) {
    join_side();
    st.status = status;
    *stats = st;
    return true;
  }

  // Fall back: b holds the input again, all streams joined; the caller runs the host version.
  bool fall_back() {
    MIMORX_CUDA_CHECK(
        cudaMemcpyAsync(b, ws.b_in.data(), nm * sizeof(F), cudaMemcpyDeviceToDevice, s));
    join_side();
    MIMORX_CUDA_CHECK(cudaStreamSynchronize(s));
    return false;
  }

  // Columns from `col` on are about to change on `stream`: the snapshot ahead ends before them
  // (and the copies of those columns, if still running, are waited for first).
  void limit_snapshot(int col) {
    if (!snap_valid || col >= snap_upto) return;
    join_snapshot();
    snap_upto = std::max(col, snap_lo);
  }
  // The snapshots R0, B0 and T0 of the columns [c0, c1), one launch on stream `cs`.
  void copy_columns(std::size_t c0, std::size_t c1, cudaStream_t cs) {
    CopyRange cr{ws.r0.data() + c0 * m, ws.r.data() + c0 * m, (c1 - c0) * m * sizeof(double)};
    CopyRange cb{ws.b0.data() + c0 * n, b + c0 * n, (c1 - c0) * n * sizeof(F)};
    CopyRange ct;
    if (t) ct = {ws.t0.data() + c0 * m, t + c0 * m, (c1 - c0) * m * sizeof(std::int64_t)};
    copy_ranges_kernel<<<264, 512, 0, cs>>>(cr, cb, ct);
    MIMORX_CUDA_CHECK_LAUNCH();
  }
  // The snapshots of the columns [sr_from, upto) and M's initialisation, on the snapshot stream
  // behind the work enqueued on `stream` so far.
  void snapshot_ahead(int upto) {
    join_snapshot();
    void* ps = ws.snap.get(device);
    const auto pss = mimorx::detail::as_stream(ps);
    const std::size_t c0 = std::size_t(sr_from), cu = std::size_t(upto);
    ws.snap_from.record(stream);
    ws.snap_from.wait(ps);
    copy_columns(c0, cu, pss);
    size_reduce_prepare(m, ws.mult.data(), ws.mcol.data(), ws.srsync.data(), ps, sr_from);
    ws.snapped.record(ps);
    snap_pending = snap_valid = true;
    snap_lo = sr_from;
    snap_upto = upto;
  }

  // The size-reduction pass: R's columns from sr_from on size-reduced against a snapshot (those
  // before have not changed since the snapshots were last taken), then B -= B0 M and
  // T -= T0 M. gate: null, or the flags whose kGateCount first ints must be zero for it to run.
  // The check that follows it finds its first changed column.
  void size_reduce(const int* gate) {
    // The columns the snapshot ahead did not take (all of them without one); the pivots are
    // R0's diagonal.
    join_snapshot();
    kept_from = -1;  // R changes
    const bool ahead = snap_valid && snap_lo == sr_from;
    snap_valid = false;
    const std::size_t c0 = ahead ? std::size_t(snap_upto) : std::size_t(sr_from);
    if (c0 < std::size_t(m)) copy_columns(c0, std::size_t(m), s);
    size_reduce_enqueue(m, ws.r.data(), ws.r0.data(), ws.mult.data(), ws.mcol.data(),
                        ws.srsync.data(), stream, sr_from, gate, gate ? kGateCount : 0, ahead);
    const unsigned ct = unsigned((m + 63) / 64);
    launch_split(split_for(reinterpret_cast<const void*>(subtract_products_kernel<F>), kSplitK,
                           options.split_k),
                 subtract_products_kernel<F>, dim3(ct, unsigned((n + 63) / 64)), dim3(256), s, b,
                 static_cast<const F*>(ws.b0.data()), (long long)n, n, m,
                 static_cast<const double*>(ws.mult.data()),
                 static_cast<const int*>(ws.mcol.data()), flags,
                 static_cast<const double*>(nullptr), static_cast<unsigned long long*>(nullptr));
    MIMORX_CUDA_CHECK_LAUNCH();
    if (t) {
      abs_colsum_kernel<<<unsigned((m + 7) / 8), 256, 0, s>>>(ws.mult.data(), ws.mcol.data(), m,
                                                              ws.colsum.data());
      MIMORX_CUDA_CHECK_LAUNCH();
      auto* kernel = subtract_products_kernel<std::int64_t>;
      launch_split(split_for(reinterpret_cast<const void*>(kernel), kSplitK, options.split_k),
                   kernel, dim3(ct, ct), dim3(256), s, t,
                   static_cast<const std::int64_t*>(ws.t0.data()), (long long)m, m, m,
                   static_cast<const double*>(ws.mult.data()),
                   static_cast<const int*>(ws.mcol.data()), flags,
                   static_cast<const double*>(ws.colsum.data()), tbound);
      MIMORX_CUDA_CHECK_LAUNCH();
    }
    changed_pending = true;
  }
  // After a size reduction (flags read): it changed columns from kFirstChanged on.
  void after_size_reduction() {
    if (hf[kFirstChanged]) dirty = std::min(dirty, m - hf[kFirstChanged]);
    sr_from = m;
    growth = 0;
  }
  // The Lovasz check of R into `bank`, with a size reduction's first changed column.
  void enqueue_check(int* bank) {
    lovasz_kernel<<<std::max(1, std::min(64, (m + 255) / 256)), 256, 0, s>>>(
        ws.r.data(), m, delta_check, bank, changed_pending ? ws.mcol.data() : nullptr, flags);
    MIMORX_CUDA_CHECK_LAUNCH();
    changed_pending = false;
  }
  void check() {
    enqueue_check(flags);
    read_flags();
  }

  // The start (upload): the caller's prologue, the input's copy in b_in, T = I, R of B and its
  // check (pass 0's fresh factorisation and check, which pass 0 then only reads), as one
  // sequence: from the second run on the same pointers a CUDA graph (CapturedSequence), one
  // launch instead of ~10. Then the first size reduction's snapshots taken ahead.
  void start() {
    const auto u64 = [](const void* p) {
      return std::uint64_t(reinterpret_cast<std::uintptr_t>(p));
    };
    std::vector<std::uint64_t> key = {std::uint64_t(n),
                                      std::uint64_t(m),
                                      std::bit_cast<std::uint64_t>(delta_check),
                                      u64(b),
                                      u64(t),
                                      u64(ws.b_in.data()),
                                      u64(ws.b0.data()),
                                      u64(flags),
                                      u64(ws.r.data()),
                                      u64(ws.diag.data()),
                                      u64(ws.norm2.data()),
                                      u64(tbound),
                                      std::uint64_t(options.block_t_float64),
                                      std::uint64_t(options.lookahead_factorisation),
                                      std::uint64_t(options.split_k),
                                      std::uint64_t(device),
                                      std::uint64_t(early_cols),
                                      u64(side),
                                      u64(ws.rcopy.data()),
                                      u64(ws.rinv.data())};
    if (prologue) key.insert(key.end(), prologue->key.begin(), prologue->key.end());
    const auto body = [this] {
      if (prologue) {  // it leaves the input's copy in b_in (b0: its scratch, free until then)
        prologue->enqueue(stream, ws.b_in.data(), ws.b0.data());
      } else {
        MIMORX_CUDA_CHECK(
            cudaMemcpyAsync(ws.b_in.data(), b, nm * sizeof(F), cudaMemcpyDeviceToDevice, s));
      }
      if (t) {
        identity_kernel<<<unsigned((mm + 255) / 256), 256, 0, s>>>(
            t, m, tbound, options.block_t_float64 ? 1ull : (1ull << 60));
        MIMORX_CUDA_CHECK_LAUNCH();
      }
      MIMORX_CUDA_CHECK(cudaMemsetAsync(flags, 0, 2 * kFlags * sizeof(int), s));
      tail_cholesky_enqueue<F>(b, n, m, 0, ws.r.data(), ws.diag.data(), flags + kCholFail,
                               ws.norm2.data(), stream, nullptr, 0, nullptr, nullptr,
                               early_cols > 0 ? &split : nullptr, false, options);
      // The factor's checks and the pass's check, in one launch.
      check_factor_kernel<F>
          <<<1, 1024, 0, s>>>(ws.norm2.data(), m, ws.r.data(), flags, delta_check, 1);
      MIMORX_CUDA_CHECK_LAUNCH();
      if (early_cols > 0) {  // the side stream's part joins (a captured fork must)
        ws.head_inverted.record(side);
        ws.head_inverted.wait(stream);
      }
    };
    ws.start.run(stream, key, body, options.captured_sequences);
    // The first size reduction's snapshots and its initialisation of M, on their own stream
    // right behind the start, while the host waits for the start's check: the passes before
    // that reduction change only the columns from their windows on, and only those are copied
    // again before it (limit_snapshot, size_reduce).
    if (options.snapshot_ahead && m >= kSnapshotFrom) snapshot_ahead(m);
  }

  // A block pass's flags (pf: as read): its blocks' statuses, overflow, swaps, growth, quiet
  // passes. Returns a status to finish with, or -1.
  int settle_pass(const int* pf) {
    if (pf[kBlockStatus]) return pf[kBlockStatus] - 1;
    if (pf[kOverflow]) return int(LllStatus::precision_loss);
    st.swaps += pf[kSwapped];
    if (pf[kChanged]) {
      dirty = std::min(dirty, lo);
      sr_from = std::min(sr_from, lo);
      growth += std::log2(1.0 + double(std::max(pf[kUMax], 1)) * l);
    }
    // Two passes (both offsets) without a swap while the updated R still shows violations: its
    // drift; start again from a fresh one.
    quiet = pf[kSwapped] == 0 ? quiet + 1 : 0;
    if (quiet >= 2) {
      refresh = true;
      confirm_check = true;
      quiet = 0;
    }
    return -1;
  }

  // A pass's plan from the run's state; flags' banks 0 and 1 zero on the device.
  PassPlan begin_pass(long pass) {
    st.iterations = pass + 1;
    if (pass > 0 && !flags_cleared)
      MIMORX_CUDA_CHECK(cudaMemsetAsync(flags, 0, 2 * kFlags * sizeof(int), s));
    flags_cleared = false;
    // R from B at the start (pass 0: enqueued by the start), every kFullEvery passes against
    // drift and to confirm a check that passed on the updated R (as the host version);
    // otherwise R follows the block reductions by the GSC-Update. A fresh R after a check that
    // passed on the updated R, or after a block pass that left R as it was (a small window,
    // refactorised instead): expected to pass.
    PassPlan p;
    p.confirming = refresh && pass > 0;
    p.fresh = refresh || pass - last_full >= kFullEvery;
    p.reduce_first = m > 1 && sr_from < m && growth > 16;
    p.speculate = p.confirming && !p.reduce_first && m > 1 && sr_from < m;
    return p;
  }

  // The refactorisation: on a fresh pass after the first, R of the columns from `dirty` on
  // recomputed from B against the kept R of the columns before, and its checks enqueued (with
  // the pass's check where it speculates); R is then R of B.
  void refactorise(long pass, const PassPlan& p) {
    if (p.fresh && pass > 0) {
      const int first = std::min(dirty, m - 1);
      // R's columns from its start change: a snapshot ahead ends before them.
      limit_snapshot(tail_cholesky_start(first));
      // The head's block rows kept from the block pass just before (keep_rows), or recomputed.
      const bool kept = kept_from >= 0 && tail_cholesky_start(first) == kept_from;
      kept_from = -1;
      // Only where the factorisation uses W (lll_internal.hpp) does it wait for the side
      // stream, and then only after the Gram columns.
      const bool use_inverse =
          !kept && tail_cholesky_uses_inverse(tail_cholesky_start(first), inv_size);
      tail_cholesky_enqueue<F>(b, n, m, first, ws.r.data(), ws.diag.data(), flags + kCholFail,
                               ws.norm2.data(), stream, use_inverse ? ws.rinv.data() : nullptr,
                               inv_size, ws.rinv_tmp.data(), use_inverse ? &ws.done : nullptr,
                               nullptr, kept, options);
      check_factor_kernel<F><<<1, 1024, 0, s>>>(ws.norm2.data(), m, ws.r.data(), flags, delta_check,
                                                p.speculate ? 1 : 0);
      MIMORX_CUDA_CHECK_LAUNCH();
    }
    if (p.fresh) {
      last_full = pass;
      dirty = m;
    }
  }

  // The pass's check: hf holds the Lovasz check of the current R (bank 0) and, on a fresh pass,
  // the factorisation's flags; where a size reduction comes first, its check follows it
  // (converged). One host round trip at most.
  void read_check(long pass, const PassPlan& p) {
    // The factorisation's flags are read with the check's (one sync fewer), unless a size
    // reduction, which changes B, would come between.
    if (p.fresh && p.reduce_first) read_flags();
    if (p.speculate) {  // the check ran with the factor's (fresh: speculate implies it)
      size_reduce(flags);
      enqueue_check(flags + kBank);
      read_flags();
    } else if (!p.reduce_first && !p.fresh && have_next_check) {
      // No flags were read since the block pass's: its bank-1 check is this pass's check.
      const int violations = hf[kBank + kViolations], first = hf[kBank + kFirstViolation];
      std::fill(hf, hf + 2 * kFlags, 0);  // as a check() after the memset of begin_pass
      hf[kViolations] = violations;
      hf[kFirstViolation] = first;
    } else if (pass == 0 && head_inverse) {
      launch_inverse();  // behind the start's check
      read_flags();
      ws.copied.wait(stream);  // R and the flags are read before this stream changes them
    } else if (pass == 0) {
      read_flags();  // the start's check
    } else if (!p.reduce_first) {
      check();
    }
    have_next_check = false;
  }

  // The factorisation's verdict: a late block pass's flags settled, then a failed or inaccurate
  // factorisation hands the basis back (fall_back) and a singular column ends the run.
  Verdict settle_factorisation(const PassPlan& p) {
    if (pending) {
      // Before the factorisation's verdict: a block that failed may have left B unusable.
      pending = false;
      if (const int f = settle_pass(hf + kStash); f >= 0) return finish_with(LllStatus(f));
    }
    if (p.fresh) {
      if (hf[kCholFail] || hf[kInaccurate]) return {Next::fall_back};
      if (hf[kSingular]) return finish_with(LllStatus::singular);
    }
    return {};
  }

  // The convergence check: the size reductions due before the check counts (speculated, or
  // growth), then reduced where a fresh, size-reduced R passes Lovasz; a check that passed on
  // the updated R is confirmed on a fresh R in the next pass.
  Verdict converged(const PassPlan& p) {
    if (p.speculate && hf[kViolations] == 0) {
      // The gate was open: the size reduction ran, and its check is the one that counts.
      after_size_reduction();
      hf[kViolations] = hf[kBank + kViolations];
      hf[kFirstViolation] = hf[kBank + kFirstViolation];
    }
    if (p.reduce_first) {
      size_reduce(nullptr);
      check();
      after_size_reduction();
    }
    if (hf[kOverflow]) return finish_with(LllStatus::precision_loss);
    if (hf[kViolations] == 0 && !p.fresh) {
      refresh = true;  // confirm on a fresh R
      confirm_check = true;
      return {Next::pass};
    }
    if (hf[kViolations] == 0 && m > 1 && sr_from < m) {
      // The final check: size-reduce, then Lovasz again on the size-reduced R.
      size_reduce(nullptr);
      check();
      after_size_reduction();
      if (hf[kOverflow]) return finish_with(LllStatus::precision_loss);
    }
    if (hf[kViolations] == 0) return finish_with(LllStatus::reduced);  // fresh and size-reduced
    if (p.confirming && confirm_check && ++checks > 16)
      return finish_with(LllStatus::precision_loss);
    refresh = false;
    confirm_check = false;
    return {};
  }

  // The window [lo, m) from the check's first violation (lo only moves down), and how its block
  // pass treats R; the snapshot ahead ends before lo.
  WindowPass choose_window(long pass) {
    const int want = window_start(m, hf[kFirstViolation], l);
    lo = pass == 0 ? want : std::min(lo, want);
    // The side stream's gate made the same choice.
    if (pass == 0 && side_launched && lo >= kInverseFrom &&
        !(small_needs_no_inverse && small_window(m, lo)))
      inv_size = lo;
    // A window of at most m / 8 columns: R is not carried through the pass (R U_c, the GSC QR
    // and its application); the changed columns are refactorised instead, which the last pass
    // needs anyway to confirm. On a wider window the refactorisation grows with it and the
    // GSC-Update stays.
    WindowPass w;
    w.update_r = !(options.refactor_small_window && small_window(m, lo));
    // The blocks change B's and T's columns (and R's, with update_r) from lo on.
    limit_snapshot(lo);
    // A small window's pass on a fresh R: its head rows are kept for the refactorisation.
    w.keep_rows = options.kept_head_rows && !w.update_r && pass == last_full;
    kept_from = w.keep_rows ? lo : -1;
    return w;
  }

  // The per-block local reduction of one group of diagonal blocks: U_c with R_cc U_c reduced
  // into ws.u, the statuses into ws.bstatus, and the blocks that swapped counted (ws.ident[c]:
  // U_c = I).
  void reduce_group(const BlockGroup& g) {
    const int sz = g.size;
    const std::int64_t bs = std::int64_t(sz) * sz;
    if (options.column_warp_blocks && sz <= kColumnWarpMaxBlock) {
      // Blocks of up to 32 columns: a warp a column on R in float64, shaped for latency (the
      // batched all-swap kernel is shaped for thousands of bases, not a few blocks).
      column_warp_lll_enqueue(ws.r.data(), m, g.start, g.stride, sz, g.count, delta,
                              default_max_iter(sz), ws.u.data(), ws.bstatus.data(), stream);
    } else {
      extract_blocks_kernel<F>
          <<<g.count, 256, 0, s>>>(ws.r.data(), m, g.start, g.stride, sz, ws.blocks.data());
      MIMORX_CUDA_CHECK_LAUNCH();
      all_swap_cuda<F>(ws.blocks.data(), ws.u.data(), ws.bstatus.data(), g.count, sz, sz, bs, bs,
                       delta, default_max_iter(sz), stream, device, false, nullptr, options);
    }
    count_swaps_kernel<<<g.count, 256, 0, s>>>(ws.u.data(), ws.bstatus.data(), sz, flags,
                                               ws.ident.data());
    MIMORX_CUDA_CHECK_LAUNCH();
  }

  // The group's U_c applied: B and T times U_c (and R's kept head rows), and with update_r the
  // GSC-Update R <- Q_c^T R U_c, so that R stays R of B.
  void apply_group(const BlockGroup& g, const WindowPass& w) {
    const int sz = g.size;
    int* ident = ws.ident.data();
    apply_u<F>(b, n, n, g.start, g.stride, sz, g.count, ws.u.data(), ident, flags, nullptr, s);
    if (t)
      apply_u<std::int64_t>(t, m, m, g.start, g.stride, sz, g.count, ws.u.data(), ident, flags,
                            tbound, s);
    // R's head rows of the window's columns (X = R_hh^{-T} G_ht, fresh in this pass) take the
    // blocks' U like B: X U is the head's block rows of B U, exactly but for rounding, and the
    // refactorisation that follows keeps them (head_rows_kept).
    if (w.keep_rows && lo > 0)
      apply_u<double>(ws.r.data(), m, lo, g.start, g.stride, sz, g.count, ws.u.data(), ident, flags,
                      nullptr, s);
    if (!w.update_r) return;
    // GSC-Update: R's columns times U_c (rows below a block are zero and stay zero), then the
    // rows by Q_c^T.
    apply_u<double>(ws.r.data(), m, m, g.start, g.stride, sz, g.count, ws.u.data(), ident, flags,
                    nullptr, s);
    gsc_qr_kernel<<<g.count, 128, 0, s>>>(ws.r.data(), m, g.start, g.stride, sz, ident,
                                          ws.refl.data());
    MIMORX_CUDA_CHECK_LAUNCH();
    const dim3 agrid(g.count, unsigned(std::max(1, (m - g.start - sz + 127) / 128)));
    if (sz <= 32) {
      gsc_apply_kernel<32>
          <<<agrid, 128, 0, s>>>(ws.r.data(), m, g.start, g.stride, sz, ident, ws.refl.data());
    } else {
      gsc_apply_kernel<kMaxBlock>
          <<<agrid, 128, 0, s>>>(ws.r.data(), m, g.start, g.stride, sz, ident, ws.refl.data());
    }
    MIMORX_CUDA_CHECK_LAUNCH();
  }

  // The block pass: the window's diagonal blocks (offset 0 or l/2 by the pass's parity), each
  // group reduced and applied in turn.
  void reduce_blocks(long pass, const WindowPass& w) {
    for (BlockGroup g : block_groups(m - lo, l, pass)) {
      if (g.count == 0) continue;
      g.start += lo;
      reduce_group(g);
      apply_group(g, w);
    }
  }

  // The block pass's end: with update_r the next pass's check enqueued into bank 1 and read with
  // the pass's flags; without it (early_refactorisation) the flags stashed for the next read and
  // the next pass told to refactorise; else the flags read and settled.
  Verdict end_block_pass(const WindowPass& w) {
    if (w.update_r) {
      MIMORX_CUDA_CHECK(cudaMemsetAsync(flags + kBank + kViolations, 0, 2 * sizeof(int),
                                        s));  // the bank's check
      enqueue_check(flags + kBank);
    }
    if (!w.update_r && options.early_refactorisation) {
      // R not updated: the next pass refactorises the window as if the pass changed it (it
      // does unless no block swapped; refactorising unchanged columns gives the same R), without
      // waiting for the pass's flags: they are copied aside and settled with the next read (one
      // host round trip fewer). The growth they report counts from then on.
      // They go to the stash bank, which the next read brings in (at hf + kStash), and the next
      // pass's banks are cleared with it.
      stash_flags_kernel<<<1, 32, 0, s>>>(flags);
      MIMORX_CUDA_CHECK_LAUNCH();
      flags_cleared = true;
      pending = true;
      dirty = std::min(dirty, lo);
      sr_from = std::min(sr_from, lo);
      refresh = true;
      return {Next::pass};
    }
    read_flags();
    have_next_check = w.update_r;
    if (const int f = settle_pass(hf); f >= 0) return finish_with(LllStatus(f));
    // R not updated: the next pass refactorises the changed columns (without a change it is
    // still R of B, and the next pass checks it again with the other block offset).
    if (!w.update_r && hf[kChanged]) refresh = true;
    return {Next::pass};
  }
};

}  // namespace

template <class F>
bool block_lll_device(int n, int m, F* b, std::int64_t* t, double delta, int l, long max_passes,
                      BlockLllWorkspace<F>& ws, void* stream, int device, LllStats* stats,
                      const LllOptions& options, const StartPrologue* prologue) {
  BlockRun<F> run{n,
                  m,
                  b,
                  t,
                  delta,
                  l,
                  ws,
                  stream,
                  mimorx::detail::as_stream(stream),
                  device,
                  options,
                  prologue,
                  stats,
                  std::size_t(n) * m,
                  std::size_t(m) * m};
  run.set_up();
  run.start();
  for (long pass = 0;; ++pass) {
    if (pass >= max_passes) return run.finish(LllStatus::not_converged);
    const PassPlan p = run.begin_pass(pass);
    run.refactorise(pass, p);
    run.read_check(pass, p);
    Verdict v = run.settle_factorisation(p);
    if (v.next == Next::stage) v = run.converged(p);
    if (v.next == Next::stage) {
      const WindowPass w = run.choose_window(pass);
      run.reduce_blocks(pass, w);
      v = run.end_block_pass(w);
    }
    if (v.next == Next::fall_back) return run.fall_back();
    if (v.next == Next::finish) return run.finish(v.status);
  }
}

template bool block_lll_device<float>(int, int, float*, std::int64_t*, double, int, long,
                                      BlockLllWorkspace<float>&, void*, int, LllStats*,
                                      const LllOptions&, const StartPrologue*);
template bool block_lll_device<double>(int, int, double*, std::int64_t*, double, int, long,
                                       BlockLllWorkspace<double>&, void*, int, LllStats*,
                                       const LllOptions&, const StartPrologue*);

}  // namespace mimorx::lattice::detail
