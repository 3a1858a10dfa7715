// float32 reductions on the GPU with T tracked: is B' still (float32 rounding of) B T?
// - all-swap batches (small bases): B' rebuilt as B T in float64 where the float32 basis drifted
//   off the input lattice (the same repair as rebuild_from_transform in lll_plan.cpp, which the
//   CPU paths use; docs/lll.md, "The float32 lattice check"). One thread block per basis: the
//   largest |B T - B'| and |B T| over the basis by a block reduction; where the difference exceeds
//   1e-6 max |B T| the block writes the rounded B T and marks the basis (kStatusRecheck). Most
//   bases drift that far (float32 updates leave B' 1e-6..1e-5 from B T), so the LLL conditions
//   of the rebuilt ones are checked again here too, in float64 (recheck_kernel). Square bases
//   of 8..64 take one kernel for all of it (check_square_kernel, the basis in registers). A basis
//   that fails the re-check is polished in float64 on the device (polish_float64_cuda: the
//   float64 all-swap kernel from B T); only what that cannot finish goes to the host.
// - the block method (one large basis): the same test with B T as a tiled product over the
//   whole grid (one thread block per 64 x 64 tile, on the tensor cores) instead of one thread
//   block per basis.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <type_traits>

#include "core/cuda_check.hpp"
#include "lattice/lll_internal.hpp"
#include "lattice/mma_f64.cuh"
#include "lattice/split_k.cuh"

namespace mimorx::lattice::detail {
namespace {

constexpr int kThreads = 256;

// Whether the block's basis drifted: the largest |B T - B'| (diff, per thread) above 1e-6 of the
// largest |B T| (scale). The same answer for every thread of the block.
template <int kBlock>
__device__ bool block_drifted(double diff, double scale) {
  using Reduce = cub::BlockReduce<double, kBlock>;
  __shared__ typename Reduce::TempStorage tmp;
  __shared__ bool drifted;
  const double dmax = Reduce(tmp).Reduce(diff, [](double a, double c) { return fmax(a, c); });
  __syncthreads();  // tmp is reused
  const double smax = Reduce(tmp).Reduce(scale, [](double a, double c) { return fmax(a, c); });
  if (threadIdx.x == 0) drifted = dmax > 1e-6 * smax;
  __syncthreads();
  return drifted;
}

// The product is kept in shared memory as float (what a rebuild writes), so a drifted basis is
// written without computing B T a second time.
template <int kBlock>
__global__ void __launch_bounds__(kBlock)
    rebuild_kernel(const float* in, float* b, const std::int64_t* t, std::int32_t* status, int n,
                   int m, std::int64_t stride_b, std::int64_t stride_t) {
  const std::int64_t k = blockIdx.x;
  if (status[k] != std::int32_t(LllStatus::reduced)) return;  // uniform over the block
  extern __shared__ float bt[];                               // n x m
  const float* bin = in + k * std::int64_t(n) * m;
  float* bk = b + k * stride_b;
  const std::int64_t* tk = t + k * stride_t;
  const int entries = n * m;
  // Entry e = (row e % n, column e / n) of B T, summed in float64 in a fixed order.
  double diff = 0, scale = 0;
  for (int e = threadIdx.x; e < entries; e += kBlock) {
    const int i = e % n, j = e / n;
    const std::int64_t* tj = tk + std::int64_t(j) * m;
    double s = 0;
    for (int q = 0; q < m; ++q) s = fma(double(bin[std::int64_t(q) * n + i]), double(tj[q]), s);
    diff = fmax(diff, fabs(s - double(bk[e])));
    scale = fmax(scale, fabs(s));
    bt[e] = float(s);
  }
  if (!block_drifted<kBlock>(diff, scale)) return;
  for (int e = threadIdx.x; e < entries; e += kBlock) bk[e] = bt[e];  // own entries: no barrier
  if (threadIdx.x == 0) status[k] = kStatusRecheck;
}

// The LLL conditions of a rebuilt basis (status kStatusRecheck) in float64 with the float32
// tolerances of recheck_float32 in lll_plan.cpp (|mu_ij| <= 0.51, Lovasz with delta - 1e-3),
// from a modified Gram-Schmidt QR of the basis in shared memory (its R is as accurate as
// Householder's, Bjorck 1967; Q's orthogonality, which MGS loses, is not used). One thread
// block per basis, one warp per column of the update. A basis that passes is reduced; one that
// fails keeps kStatusRecheck for the host (lll_plan.cpp: the same check, then a float64 polish).
// Sum over each group of W consecutive lanes (W = 32: the warp).
template <int W>
__device__ __forceinline__ double group_sum(double v) {
  for (int o = W / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o, W);
  return v;
}

template <int kBlock>
__global__ void __launch_bounds__(kBlock)
    recheck_kernel(const float* b, std::int32_t* status, int n, int m, std::int64_t stride_b,
                   double delta) {
  const std::int64_t k = blockIdx.x;
  if (status[k] != kStatusRecheck) return;  // uniform over the block
  extern __shared__ double a[];             // the basis, n x m column-major
  __shared__ double rpp_s, rnext_s;
  __shared__ int bad;
  const float* bk = b + k * stride_b;
  for (int e = threadIdx.x; e < n * m; e += kBlock) a[e] = double(bk[e]);
  if (threadIdx.x == 0) bad = 0;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  constexpr int kWarps = kBlock / 32;
  const double dcheck = delta - 1e-3;
  double prev_rpp = 0, prev_off = 0;  // r_{p-1,p-1}, r_{p-1,p} (read by thread 0 only)
  __syncthreads();
  for (int p = 0; p < m; ++p) {
    const double* ap = a + std::size_t(p) * n;
    if (warp == 0) {
      double s = 0;
      for (int i = lane; i < n; i += 32) s += ap[i] * ap[i];
      s = group_sum<32>(s);
      if (lane == 0) rpp_s = sqrt(s);
    }
    __syncthreads();
    const double rpp = rpp_s;
    if (threadIdx.x == 0) {
      if (!(rpp > 0) || !isfinite(rpp)) bad = 1;
      if (p > 0 && !(prev_off * prev_off + rpp * rpp >= dcheck * prev_rpp * prev_rpp)) bad = 1;
    }
    // r_pj = a_p . a_j / r_pp (a_p orthogonalised, not normalised); a_j -= (r_pj / r_pp) a_p.
    for (int j = p + 1 + warp; j < m; j += kWarps) {
      double* aj = a + std::size_t(j) * n;
      double s = 0;
      for (int i = lane; i < n; i += 32) s += ap[i] * aj[i];
      s = group_sum<32>(s);
      const double rpj = s / rpp;
      if (lane == 0) {
        if (!(fabs(rpj) <= 0.51 * rpp)) bad = 1;
        if (j == p + 1) rnext_s = rpj;
      }
      const double c = rpj / rpp;
      for (int i = lane; i < n; i += 32) aj[i] -= c * ap[i];
    }
    __syncthreads();
    if (bad) break;  // uniform: written before the barrier
    prev_rpp = rpp;
    prev_off = rnext_s;
  }
  if (threadIdx.x == 0 && !bad) status[k] = std::int32_t(LllStatus::reduced);
}

// The float64 re-check of a square basis held in registers as the check kernels below lay it
// out: thread (lane tx, group ty) of TXC x NC/2 holds rows tx, tx + TXC, ... of columns ty and
// ty + NC/2 in a[c][e]. A modified Gram-Schmidt whose pivot column goes through shared memory
// (as the all-swap kernel's qr_fixed), with the LLL conditions of recheck_kernel. a is
// overwritten; returns whether a condition failed (the same answer in every thread).
template <int NC, int TXC>
__device__ bool square_recheck(double (&a)[2][NC / TXC], double delta) {
  constexpr int kGroups = NC / 2, kPer = NC / TXC, kCols = 2;
  __shared__ double piv[2][NC];  // the pivot column of step p in piv[p & 1]
  __shared__ double roff[2];     // r(p - 1, p) for step p in roff[p & 1]
  __shared__ int bad[2];         // a failed condition of step p in bad[p & 1]
  const int tid = threadIdx.x, tx = tid % TXC, ty = tid / TXC;
  if (tid == 0) bad[0] = bad[1] = 0;
  if (ty == 0)
#pragma unroll
    for (int e = 0; e < kPer; ++e) piv[0][tx + e * TXC] = a[0][e];
  __syncthreads();
  const double dcheck = delta - 1e-3;
  double prev_rpp = 0;
  int failed = 0;
  for (int p = 0; p < NC; ++p) {
    double v[kPer];
    double nrm = 0;
#pragma unroll
    for (int e = 0; e < kPer; ++e) {
      v[e] = piv[p & 1][tx + e * TXC];
      nrm = fma(v[e], v[e], nrm);
    }
    nrm = group_sum<TXC>(nrm);
    const double rpp = sqrt(nrm);
    const double inv = 1.0 / rpp;  // one division per step instead of two per column
    if (tid == 0) {
      if (!(rpp > 0) || !isfinite(rpp)) bad[p & 1] = 1;
      if (p > 0) {
        const double off = roff[p & 1];
        if (!(off * off + rpp * rpp >= dcheck * prev_rpp * prev_rpp)) bad[p & 1] = 1;
      }
    }
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      if (c * kGroups + kGroups - 1 <= p) continue;  // uniform: no group's slot c is after p
      const int j = ty + c * kGroups;
      double dot = 0;
#pragma unroll
      for (int e = 0; e < kPer; ++e) dot = fma(v[e], a[c][e], dot);
      dot = group_sum<TXC>(dot);  // every lane of the warp takes part
      if (j > p) {
        const double rpj = dot * inv;
        if (tx == 0) {
          if (!(fabs(rpj) <= 0.51 * rpp)) bad[p & 1] = 1;
          if (j == p + 1) roff[(p + 1) & 1] = rpj;
        }
        const double f = rpj * inv;
#pragma unroll
        for (int e = 0; e < kPer; ++e) a[c][e] -= f * v[e];
        if (j == p + 1)
#pragma unroll
          for (int e = 0; e < kPer; ++e) piv[(p + 1) & 1][tx + e * TXC] = a[c][e];
      }
    }
    prev_rpp = rpp;
    __syncthreads();
    // Written before the barrier; the slot is written again only in step p + 2, after the
    // barrier of step p + 1 that every thread reaches after reading it here.
    failed = bad[p & 1];
    if (failed) break;
  }
  return failed != 0;
}

// Square bases of the fixed-shape sizes (8..64): the two kernels above in one, with the basis in
// registers instead of shared memory. Thread (lane tx, group ty) of TXC x NC/2 owns rows
// tx, tx + TXC, ... of columns ty and ty + NC/2: it sums those entries of B T (the same fused
// multiply-adds in the same order as rebuild_kernel, so the same bits), and, where the basis
// drifted, keeps their float32 roundings as float64 for the re-check (square_recheck).
// Shared memory: the input (float32) and T (int32: the float32 all-swap kernel keeps T in int32,
// lll_cuda.cu); at 64x64 34 KB instead of the two kernels' 16 KB and 32 KB, and one pass over
// the basis instead of three.
template <int NC, int TXC>
__global__ void __launch_bounds__(TXC* NC / 2)
    check_square_kernel(const float* in, float* b, const std::int64_t* t, std::int32_t* status,
                        std::int64_t stride_b, std::int64_t stride_t, double delta) {
  constexpr int kGroups = NC / 2, kBlock = TXC * kGroups, kPer = NC / TXC, kCols = 2;
  constexpr int kLdT = NC + 1;  // groups of a warp read different columns at the same q
  static_assert(kBlock % 32 == 0 && NC % TXC == 0, "whole warps, whole columns");
  const std::int64_t k = blockIdx.x;
  if (status[k] != std::int32_t(LllStatus::reduced)) return;  // uniform over the block
  __shared__ float bin[NC * NC];
  __shared__ int tcol[NC * kLdT];
  __shared__ int wide;  // an entry of T outside int32
  const int tid = threadIdx.x, tx = tid % TXC, ty = tid / TXC;
  const float* bk_in = in + k * NC * NC;
  float* bk = b + k * stride_b;
  const std::int64_t* tk = t + k * stride_t;
  if (tid == 0) wide = 0;
  __syncthreads();
  for (int e = tid; e < NC * NC; e += kBlock) {
    bin[e] = bk_in[e];
    const std::int64_t v = tk[e];
    if (v != std::int64_t(int(v))) wide = 1;
    tcol[(e / NC) * kLdT + e % NC] = int(v);
  }
  __syncthreads();
  if (wide) {  // not produced by the float32 kernel; the check cannot vouch for the basis
    if (tid == 0) status[k] = std::int32_t(LllStatus::precision_loss);
    return;
  }
  double a[kCols][kPer];
#pragma unroll
  for (int c = 0; c < kCols; ++c)
#pragma unroll
    for (int e = 0; e < kPer; ++e) a[c][e] = 0;
  for (int q = 0; q < NC; ++q) {
    double bv[kPer];
#pragma unroll
    for (int e = 0; e < kPer; ++e) bv[e] = double(bin[q * NC + tx + e * TXC]);
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      const double tv = double(tcol[(ty + c * kGroups) * kLdT + q]);
#pragma unroll
      for (int e = 0; e < kPer; ++e) a[c][e] = fma(bv[e], tv, a[c][e]);
    }
  }
  double diff = 0, scale = 0;
#pragma unroll
  for (int c = 0; c < kCols; ++c)
#pragma unroll
    for (int e = 0; e < kPer; ++e) {
      const double s = a[c][e];
      diff = fmax(diff, fabs(s - double(bk[(ty + c * kGroups) * NC + tx + e * TXC])));
      scale = fmax(scale, fabs(s));
    }
  if (!block_drifted<kBlock>(diff, scale)) return;
    // The rounded product replaces B'; the re-check runs on exactly what was written.
#pragma unroll
  for (int c = 0; c < kCols; ++c)
#pragma unroll
    for (int e = 0; e < kPer; ++e) {
      const float r = float(a[c][e]);
      bk[(ty + c * kGroups) * NC + tx + e * TXC] = r;
      a[c][e] = double(r);
    }
  const bool failed = square_recheck<NC, TXC>(a, delta);
  if (tid == 0) status[k] = failed ? kStatusRecheck : std::int32_t(LllStatus::reduced);
}

// recheck_kernel for square 8..64 bases: the basis in registers, as check_square_kernel holds
// it (the polish's re-check: with one block per basis the time is all latency, which
// recheck_kernel's one warp per column step makes long).
template <int NC, int TXC>
__global__ void __launch_bounds__(TXC* NC / 2)
    recheck_square_kernel(const float* b, std::int32_t* status, double delta) {
  constexpr int kGroups = NC / 2, kPer = NC / TXC, kCols = 2;
  const std::int64_t k = blockIdx.x;
  if (status[k] != kStatusRecheck) return;  // uniform over the block
  const int tid = threadIdx.x, tx = tid % TXC, ty = tid / TXC;
  const float* bk = b + k * NC * NC;
  double a[kCols][kPer];
#pragma unroll
  for (int c = 0; c < kCols; ++c)
#pragma unroll
    for (int e = 0; e < kPer; ++e) a[c][e] = double(bk[(ty + c * kGroups) * NC + tx + e * TXC]);
  const bool failed = square_recheck<NC, TXC>(a, delta);
  if (tid == 0 && !failed) status[k] = std::int32_t(LllStatus::reduced);
}

// The fixed-shape kernels' shapes: fn(NC, TXC) as integral constants for square n of 8, 16, 32
// or 64 (blocks of TXC * NC / 2 threads); false for other shapes.
template <class Fn>
bool with_square_shape(int n, Fn&& fn) {
  using std::integral_constant;
  switch (n) {
    case 8:
      return fn(integral_constant<int, 8>{}, integral_constant<int, 8>{}), true;
    case 16:
      return fn(integral_constant<int, 16>{}, integral_constant<int, 4>{}), true;
    case 32:
      return fn(integral_constant<int, 32>{}, integral_constant<int, 8>{}), true;
    case 64:
      return fn(integral_constant<int, 64>{}, integral_constant<int, 8>{}), true;
    default:
      return false;
  }
}

// The block method's product on the float64 tensor cores (mma_f64.cuh): one 64 x 64 tile of
// B T per cluster of thread blocks of four warps (32 x 32 each; the cluster's blocks split the k
// range, split_k.cuh), B and T staged through shared memory 16 deep in float64 (T exact: the plan's
// bound keeps |T| below 2^53). Writes B T (n x m doubles) and the largest |B T - B'| and |B T|
// (non-negative doubles as ordered bits, atomicMax). (An FMA loop over 32 x 32 tiles is bound by
// its shared-memory loads.)
constexpr int kProdTile = 64;
constexpr int kProdSlab = 16;
constexpr int kProdLdA = kProdTile + 4;  // B slab: [k][row]
constexpr int kProdLdT = kProdSlab + 4;  // T slab: [column][k]
constexpr int kProdThreads = 128;
constexpr int kProdPer = kProdTile * kProdSlab / kProdThreads;

// mask[tile * slabs + s] = whether T's 16-row slab s of the 64-column tile has a non-zero
// entry (slabs = ceil(m / 16)), one warp per slab and tile. T is the sorted basis's transform:
// the identity outside the columns the reduction changed, so most slabs of most tiles are zero.
__global__ void slab_mask_kernel(const std::int64_t* t, int m, int* mask) {
  const int slabs = (m + kProdSlab - 1) / kProdSlab, tiles = (m + kProdTile - 1) / kProdTile;
  const int w = int((blockIdx.x * blockDim.x + threadIdx.x) / 32), lane = threadIdx.x % 32;
  if (w >= slabs * tiles) return;
  const int tile = w / slabs, slab = w % slabs;
  bool nz = false;
  for (int c = lane; c < kProdTile; c += 32) {
    const int col = tile * kProdTile + c;
    if (col >= m) break;
#pragma unroll
    for (int q = 0; q < kProdSlab; ++q) {
      const int k = slab * kProdSlab + q;
      if (k < m) nz |= t[std::size_t(col) * m + k] != 0;
    }
  }
  nz = __any_sync(0xffffffffu, nz);
  if (lane == 0) mask[w] = nz;
}

// unit[k] = j where T's column k is the unit vector e_j, else -1; one warp a column. After a
// block method run T is the identity outside the columns the reduction changed (at 1024 x 1024,
// 896 of the 1024 columns): B T there is a column of B, exactly.
__global__ void unit_columns_kernel(const std::int64_t* t, int m, int* unit) {
  const int k = int((blockIdx.x * blockDim.x + threadIdx.x) / 32), lane = threadIdx.x % 32;
  if (k >= m) return;
  int count = 0, where = -1;
  bool one = true;
#pragma unroll 8
  for (int q = lane; q < m; q += 32) {  // unrolled: 8 loads in flight
    const std::int64_t v = t[std::size_t(k) * m + q];
    if (v != 0) {
      ++count;
      where = q;
      one = one && v == 1;
    }
  }
  for (int o = 16; o > 0; o >>= 1) {
    count += __shfl_xor_sync(0xffffffffu, count, o);
    where = max(where, __shfl_xor_sync(0xffffffffu, where, o));
  }
  one = __all_sync(0xffffffffu, one);
  if (lane == 0) unit[k] = count == 1 && one ? where : -1;
}

// Whether every column of the 64-column tile at col0 is a unit column (unit_columns_kernel):
// then the product kernel leaves the tile to unit_tile_kernel. Called by every thread.
__device__ __forceinline__ bool unit_tile(const int* unit, int col0, int m) {
  const int c = col0 + int(threadIdx.x) % kProdTile;
  return __syncthreads_and(c >= m || unit[c] >= 0);
}

// The largest |B T - B'| and |B T| of this thread into maxima (as product_kernel).
__device__ __forceinline__ void publish_maxima(double diff, double scale,
                                               unsigned long long* maxima) {
  for (int o = 16; o > 0; o >>= 1) {
    diff = fmax(diff, __shfl_xor_sync(0xffffffffu, diff, o));
    scale = fmax(scale, __shfl_xor_sync(0xffffffffu, scale, o));
  }
  if (threadIdx.x % 32 == 0) {
    atomicMax(&maxima[0], static_cast<unsigned long long>(__double_as_longlong(diff)));
    atomicMax(&maxima[1], static_cast<unsigned long long>(__double_as_longlong(scale)));
  }
}

// B T for a tile of unit columns: column k is column unit[k] of B (the product's sum of one
// non-zero term, the same number), compared with B' as product_kernel does. A block takes
// kUnitRows rows of the tile's 64 columns, kUnitPer entries a thread with all their loads in
// flight at once (a loop over the columns would wait for each column's loads in turn). Grid:
// (column tiles, row chunks).
constexpr int kUnitRows = 32;
constexpr int kUnitThreads = 256;
constexpr int kUnitPer = kProdTile * kUnitRows / kUnitThreads;
__global__ void __launch_bounds__(kUnitThreads)
    unit_tile_kernel(const float* in, const int* unit, const float* b, int n, int m, double* bt,
                     unsigned long long* maxima) {
  const int col0 = blockIdx.x * kProdTile, row0 = blockIdx.y * kUnitRows;
  if (!unit_tile(unit, col0, m)) return;
  int from[kUnitPer];
  float x[kUnitPer], y[kUnitPer];
#pragma unroll
  for (int p = 0; p < kUnitPer; ++p) {  // entry e: column col0 + e / 32, row row0 + e % 32
    const int e = int(threadIdx.x) + kUnitThreads * p, c = col0 + e / kUnitRows,
              r = row0 + e % kUnitRows;
    const bool in_range = c < m && r < n;
    from[p] = in_range ? unit[c] : -1;
    y[p] = in_range ? b[std::size_t(c) * n + r] : 0.f;
  }
#pragma unroll
  for (int p = 0; p < kUnitPer; ++p) {
    const int r = row0 + (int(threadIdx.x) + kUnitThreads * p) % kUnitRows;
    x[p] = from[p] >= 0 ? in[std::size_t(from[p]) * n + r] : 0.f;
  }
  double diff = 0, scale = 0;
#pragma unroll
  for (int p = 0; p < kUnitPer; ++p) {
    if (from[p] < 0) continue;
    const int e = int(threadIdx.x) + kUnitThreads * p, c = col0 + e / kUnitRows,
              r = row0 + e % kUnitRows;
    const double v = double(x[p]);
    bt[std::size_t(c) * n + r] = v;
    diff = fmax(diff, fabs(v - double(y[p])));
    scale = fmax(scale, fabs(v));
  }
  publish_maxima(diff, scale, maxima);
}

__global__ void __launch_bounds__(kProdThreads)
    product_kernel(const float* in, const std::int64_t* t, const float* b, int n, int m, double* bt,
                   unsigned long long* maxima, const int* mask, const int* unit) {
  // A tile of unit columns is unit_tile_kernel's (the whole cluster: it shares the tile).
  if (unit_tile(unit, blockIdx.y * kProdTile, m)) return;
  // The slabs, and after the products the block's partial tile (smem[col * 64 + row]).
  __shared__ double smem[kProdTile * kProdTile];
  double* sa = smem;
  double* st = smem + kProdSlab * kProdLdA;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wr = warp % 2, wc = warp / 2;
  const int row0 = blockIdx.x * kProdTile, col0 = blockIdx.y * kProdTile;
  double acc[4][4][2] = {};
  float ra[kProdPer];
  std::int64_t rt[kProdPer];
  auto fetch = [&](int k0) {
#pragma unroll
    for (int p = 0; p < kProdPer; ++p) {
      const int e = threadIdx.x + kProdThreads * p;
      const int i = e % kProdTile, kk = e / kProdTile;  // B(row0 + i, k0 + kk), along rows
      ra[p] = row0 + i < n && k0 + kk < m ? in[std::size_t(k0 + kk) * n + row0 + i] : 0.f;
      const int q = e % kProdSlab, c = e / kProdSlab;  // T(k0 + q, col0 + c), along k
      rt[p] = k0 + q < m && col0 + c < m ? t[std::size_t(col0 + c) * m + k0 + q] : 0;
    }
  };
  // This block's part of the k range (the blocks of a cluster split it: split_k.cuh), only
  // the slabs where T's tile is not zero (slab_mask_kernel): they neither load nor multiply.
  int k_begin = 0, k_end = 0;
  split_range(m, kProdSlab, k_begin, k_end);
  const int* tile_mask = mask + std::size_t(blockIdx.y) * ((m + kProdSlab - 1) / kProdSlab);
  auto next = [&](int k0) {  // the first slab from k0 on that has work
    while (k0 < k_end && !tile_mask[k0 / kProdSlab]) k0 += kProdSlab;
    return k0;
  };
  int k0 = next(k_begin);
  if (k0 < k_end) fetch(k0);
  while (k0 < k_end) {
#pragma unroll
    for (int p = 0; p < kProdPer; ++p) {
      const int e = threadIdx.x + kProdThreads * p;
      sa[(e / kProdTile) * kProdLdA + e % kProdTile] = double(ra[p]);
      st[(e / kProdSlab) * kProdLdT + e % kProdSlab] = double(rt[p]);
    }
    const int k1 = next(k0 + kProdSlab);
    if (k1 < k_end) fetch(k1);
    __syncthreads();
    warp_mma<kProdSlab, 4, 4, 1, kProdLdA, kProdLdT, 1>(sa + 32 * wr, st + 32 * wc * kProdLdT, acc,
                                                        lane);
    __syncthreads();
    k0 = k1;
  }
  // The loop ended on a barrier after the last reads of the slabs.
  store_acc(smem, kProdTile, 32 * wr, 32 * wc, acc, lane);
  double diff = 0, scale = 0;
  cluster_sum(smem, kProdTile * kProdTile, [&](int e, double sum) {
    const int r = row0 + e % kProdTile, c = col0 + e / kProdTile;
    if (r >= n || c >= m) return;
    const std::size_t x = std::size_t(c) * n + r;
    bt[x] = sum;
    diff = fmax(diff, fabs(sum - double(b[x])));
    scale = fmax(scale, fabs(sum));
  });
  publish_maxima(diff, scale, maxima);
}

__global__ void round_to_float(const double* bt, float* b, std::size_t count) {
  const std::size_t e = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < count) b[e] = float(bt[e]);
}

}  // namespace

bool rebuild_if_drifted_cuda(const float* in, float* b, const std::int64_t* t, int n, int m,
                             Buffer<double>& scratch, void* stream, int device,
                             const LllOptions& options) {
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const std::size_t nm = std::size_t(n) * m;
  const std::size_t masks =
      std::size_t((m + kProdSlab - 1) / kProdSlab) * std::size_t((m + kProdTile - 1) / kProdTile);
  ensure_device(scratch, nm + 2 + (masks + 1) / 2 + (std::size_t(m) + 1) / 2, device);
  const auto s = mimorx::detail::as_stream(stream);
  double* bt = scratch.data();
  auto* maxima = reinterpret_cast<unsigned long long*>(bt + nm);
  auto* mask = reinterpret_cast<int*>(bt + nm + 2);
  int* unit = mask + masks + (masks & 1);
  slab_mask_kernel<<<unsigned((masks * 32 + 255) / 256), 256, 0, s>>>(t, m, mask);
  MIMORX_CUDA_CHECK_LAUNCH();
  unit_columns_kernel<<<unsigned((std::size_t(m) * 32 + 255) / 256), 256, 0, s>>>(t, m, unit);
  MIMORX_CUDA_CHECK_LAUNCH();
  MIMORX_CUDA_CHECK(cudaMemsetAsync(maxima, 0, 2 * sizeof(unsigned long long), s));
  const dim3 grid(unsigned((n + kProdTile - 1) / kProdTile),
                  unsigned((m + kProdTile - 1) / kProdTile));
  const dim3 grid_unit(unsigned((m + kProdTile - 1) / kProdTile),
                       unsigned((n + kUnitRows - 1) / kUnitRows));
  // k split over clusters of 8: with one block a tile, a large m leaves long serial k ranges.
  launch_split(split_for(reinterpret_cast<const void*>(product_kernel), kSplitK, options.split_k),
               product_kernel, grid, dim3(kProdThreads), s, in, static_cast<const std::int64_t*>(t),
               static_cast<const float*>(b), n, m, bt, maxima, static_cast<const int*>(mask),
               static_cast<const int*>(unit));
  MIMORX_CUDA_CHECK_LAUNCH();
  unit_tile_kernel<<<grid_unit, kUnitThreads, 0, s>>>(in, unit, b, n, m, bt, maxima);
  MIMORX_CUDA_CHECK_LAUNCH();
  double h[2];
  MIMORX_CUDA_CHECK(cudaMemcpyAsync(h, maxima, sizeof(h), cudaMemcpyDeviceToHost, s));
  MIMORX_CUDA_CHECK(cudaStreamSynchronize(s));
  if (h[0] <= 1e-6 * h[1]) return false;
  round_to_float<<<unsigned((nm + 255) / 256), 256, 0, s>>>(bt, b, nm);
  MIMORX_CUDA_CHECK_LAUNCH();
  MIMORX_CUDA_CHECK(cudaStreamSynchronize(s));
  return true;
}

namespace {
// Gather: matrix c of the packed dst <- matrix idx[c] of the strided src; scatter: matrix idx[c]
// of the strided dst <- matrix c of the packed src.
template <class T, bool kGather>
__global__ void move_kernel(const T* src, T* dst, std::int64_t stride, const std::int64_t* idx,
                            std::size_t nm) {
  const std::int64_t strided = idx[blockIdx.x] * stride, packed = blockIdx.x * std::int64_t(nm);
  const T* from = src + (kGather ? strided : packed);
  T* to = dst + (kGather ? packed : strided);
  for (std::size_t i = threadIdx.x; i < nm; i += blockDim.x) to[i] = from[i];
}

template <class T, bool kGather>
void move_bases(const T* src, T* dst, std::int64_t stride, const std::int64_t* idx,
                std::int64_t count, std::size_t nm, void* stream, int device) {
  if (count == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  move_kernel<T, kGather><<<unsigned(count), kThreads, 0, mimorx::detail::as_stream(stream)>>>(
      src, dst, stride, idx, nm);
  MIMORX_CUDA_CHECK_LAUNCH();
}

__global__ void __launch_bounds__(kThreads)
    count_unreduced_kernel(const std::int32_t* status, std::int64_t batch, unsigned* count) {
  using Reduce = cub::BlockReduce<unsigned, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  unsigned mine = 0;
  for (std::int64_t k = std::int64_t(blockIdx.x) * kThreads + threadIdx.x; k < batch;
       k += std::int64_t(gridDim.x) * kThreads)
    mine += status[k] != std::int32_t(LllStatus::reduced);
  const unsigned sum = Reduce(tmp).Sum(mine);
  if (threadIdx.x == 0 && sum) atomicAdd(count, sum);
}
}  // namespace

void count_unreduced_cuda(const std::int32_t* status, std::int64_t batch, unsigned* count,
                          void* stream, int device) {
  if (batch == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const std::int64_t blocks = std::min<std::int64_t>((batch + kThreads - 1) / kThreads, 1024);
  count_unreduced_kernel<<<unsigned(blocks), kThreads, 0, mimorx::detail::as_stream(stream)>>>(
      status, batch, count);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void gather_bases_cuda(const float* src, std::int64_t stride, const std::int64_t* idx,
                       std::int64_t count, std::size_t nm, float* out, void* stream, int device) {
  move_bases<float, true>(src, out, stride, idx, count, nm, stream, device);
}
void gather_bases_cuda(const std::int64_t* src, std::int64_t stride, const std::int64_t* idx,
                       std::int64_t count, std::size_t nm, std::int64_t* out, void* stream,
                       int device) {
  move_bases<std::int64_t, true>(src, out, stride, idx, count, nm, stream, device);
}
void scatter_bases_cuda(const float* in, float* dst, std::int64_t stride, const std::int64_t* idx,
                        std::int64_t count, std::size_t nm, void* stream, int device) {
  move_bases<float, false>(in, dst, stride, idx, count, nm, stream, device);
}
void scatter_bases_cuda(const std::int64_t* in, std::int64_t* dst, std::int64_t stride,
                        const std::int64_t* idx, std::int64_t count, std::size_t nm, void* stream,
                        int device) {
  move_bases<std::int64_t, false>(in, dst, stride, idx, count, nm, stream, device);
}

namespace {
// The float64 re-check of the bases with status kStatusRecheck (n x m each, stride_b apart).
template <int kBlock>
void launch_recheck(const float* b, std::int32_t* status, std::int64_t batch, int n, int m,
                    std::int64_t stride_b, double delta, cudaStream_t s) {
  const std::size_t smem = std::size_t(n) * m * sizeof(double);
  if (smem > 48 * 1024)
    MIMORX_CUDA_CHECK(cudaFuncSetAttribute(recheck_kernel<kBlock>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  recheck_kernel<kBlock><<<unsigned(batch), kBlock, smem, s>>>(b, status, n, m, stride_b, delta);
  MIMORX_CUDA_CHECK_LAUNCH();
}

// The basis in float32 and in float64 fits in shared memory: the plan admits shapes whose
// float64 all-swap kernel fits, which holds two n x m float64 copies.
template <int kBlock>
void rebuild_and_recheck(const float* in, float* b, const std::int64_t* t, std::int32_t* status,
                         std::int64_t batch, int n, int m, std::int64_t stride_b,
                         std::int64_t stride_t, double delta, cudaStream_t s) {
  const std::size_t fsmem = std::size_t(n) * m * sizeof(float);
  if (fsmem > 48 * 1024)
    MIMORX_CUDA_CHECK(cudaFuncSetAttribute(
        rebuild_kernel<kBlock>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(fsmem)));
  rebuild_kernel<kBlock>
      <<<unsigned(batch), kBlock, fsmem, s>>>(in, b, t, status, n, m, stride_b, stride_t);
  MIMORX_CUDA_CHECK_LAUNCH();
  launch_recheck<kBlock>(b, status, batch, n, m, stride_b, delta, s);
}

// One block per basis, as many threads as the basis has use for: one warp for up to 128
// entries (8x8: a 256-thread block left 3/4 of its threads idle and paid block-wide
// reductions), 128 threads up to 1024, 256 above. fn(std::integral_constant<int, threads>).
template <class Fn>
void with_block_size(int entries, Fn&& fn) {
  if (entries <= 128) {
    fn(std::integral_constant<int, 32>{});
  } else if (entries <= 1024) {
    fn(std::integral_constant<int, 128>{});
  } else {
    fn(std::integral_constant<int, kThreads>{});
  }
}
}  // namespace

void rebuild_from_transform_cuda(const float* in, float* b, const std::int64_t* t,
                                 std::int32_t* status, std::int64_t batch, int n, int m,
                                 std::int64_t stride_b, std::int64_t stride_t, double delta,
                                 void* stream, int device, const LllOptions& options) {
  if (batch == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const auto s = mimorx::detail::as_stream(stream);
  if (n == m && options.square_check_kernel && with_square_shape(n, [&](auto nc, auto txc) {
        constexpr int NC = decltype(nc)::value, TXC = decltype(txc)::value;
        check_square_kernel<NC, TXC>
            <<<unsigned(batch), TXC * NC / 2, 0, s>>>(in, b, t, status, stride_b, stride_t, delta);
        MIMORX_CUDA_CHECK_LAUNCH();
      }))
    return;
  with_block_size(n * m, [&](auto threads) {
    rebuild_and_recheck<decltype(threads)::value>(in, b, t, status, batch, n, m, stride_b, stride_t,
                                                  delta, s);
  });
}

void recheck_float64_cuda(const float* b, std::int32_t* status, std::int64_t batch, int n, int m,
                          double delta, void* stream, int device, const LllOptions& options) {
  if (batch == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const auto s = mimorx::detail::as_stream(stream);
  if (n == m && options.square_check_kernel && with_square_shape(n, [&](auto nc, auto txc) {
        constexpr int NC = decltype(nc)::value, TXC = decltype(txc)::value;
        recheck_square_kernel<NC, TXC><<<unsigned(batch), TXC * NC / 2, 0, s>>>(b, status, delta);
        MIMORX_CUDA_CHECK_LAUNCH();
      }))
    return;
  with_block_size(n * m, [&](auto threads) {
    launch_recheck<decltype(threads)::value>(b, status, batch, n, m, std::int64_t(n) * m, delta, s);
  });
}

}  // namespace mimorx::lattice::detail
