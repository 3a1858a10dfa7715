// The global size reduction of the GPU-resident block method (block_lll_cuda.cu): every column k
// of R reduced against a snapshot R0 of all columns,
//   for j = k - 1 down to 0:  q_j = round(x_j / r0_jj);  x_i -= q_j R0(i, j) for i <= j,
// with the multipliers recorded in M (column k) for the products B -= B0 M and T -= T0 M.
//
// A thread block takes a tile of kCols consecutive columns and keeps them in shared memory, so
// that every entry of R0 it reads serves all of the tile's columns (one warp per column read
// the whole upper triangle of R0 once per column: 1.4 GB from L2 per 1024 x 1024 reduction, a
// quarter of the block method's kernel time). Rows go top down in chunks of 32:
//   solve:  one warp per column finds the chunk's multipliers one row after the other (lane s
//           holds row 32c + 31 - s; the chunk's triangle of R0 is staged in shared memory);
//   update: the rows below the chunk get the chunk's 32 multipliers of every column, each
//           R0 entry loaded once and used for all columns of the tile.
// Each entry x_i receives its updates in descending j, one fused multiply-add each, and q_j is
// round(x_j * (1 / r0_jj)): the arithmetic of the one-warp-per-column kernel this replaces, so
// the numbers are the same (tests/lattice/test_lll_gpu.cpp checks them against a host model).
#include <cuda_runtime.h>

#include <string>

#include "core/cuda_check.hpp"
#include "core/cuda_smem_limit.hpp"
#include "lattice/lll_internal.hpp"
#include "lattice/lll_math.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::lattice::detail {
namespace {

constexpr int kChunk = 32;
// Rows up to which a tile has 8 columns (160 KiB of shared memory); 4 columns above that, up to
// LllConfig's 4096 (128 KiB).
constexpr int kMaxRows8 = 2560;
constexpr int kMaxRows = 4096;

template <int kCols>
__global__ void __launch_bounds__(32 * kCols)
    tiled_size_reduce_kernel(int m, double* r, const double* r0, const double* d0, double* mult,
                             int* mcol) {
  // One block per tile from the launch's first tile to the last (launch: the tiles of the
  // columns to reduce).
  constexpr int kThreads = 32 * kCols;             // one warp per column (two measured the same)
  extern __shared__ double s_x[];                  // kCols columns of m rows: s_x[w * m + i]
  __shared__ double s_tri[2][kChunk][kChunk + 1];  // [chunk & 1][u][s] = R0(row_s, row_u), s > u
  __shared__ double s_q[kChunk][kCols];            // the chunk's multipliers per column
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  // Heaviest tiles (most rows) first.
  const int tile = (m + kCols - 1) / kCols - 1 - blockIdx.x;
  const int k0 = tile * kCols;
  const int cols = min(kCols, m - k0);
  for (int w = 0; w < cols; ++w)
    for (int i = threadIdx.x; i < k0 + w; i += kThreads)
      s_x[w * m + i] = r[(long long)(k0 + w) * m + i];
  const int k = k0 + warp;  // this warp's column in the solve
  const bool has_col = warp < cols;
  bool any = false;
  const int top = k0 + cols - 2;  // the highest row of the tile's columns
  const int c_top = top < 0 ? -1 : top / kChunk;
  // R0 is a snapshot: the next chunk's triangle and pivots are loaded while this chunk is
  // updated (into registers first, so that the loads do not hold up the update), and stored to
  // the other half of s_tri at the end of the step.
  constexpr int kTriPer = kChunk * kChunk / kThreads;
  auto load_tri = [&](int c, double* t) {
#pragma unroll
    for (int p = 0; p < kTriPer; ++p) {
      const int e = threadIdx.x + p * kThreads, u = e / kChunk, s = e % kChunk;
      const int ru = c * kChunk + kChunk - 1 - u, rs = c * kChunk + kChunk - 1 - s;
      t[p] = c >= 0 && s > u && ru < m ? r0[(long long)ru * m + rs] : 0.0;
    }
  };
  auto store_tri = [&](int buf, const double* t) {
#pragma unroll
    for (int p = 0; p < kTriPer; ++p) {
      const int e = threadIdx.x + p * kThreads;
      s_tri[buf][e / kChunk][e % kChunk] = t[p];
    }
  };
  auto pivot = [&](int c) {
    const int row = c * kChunk + kChunk - 1 - lane;
    return c >= 0 && has_col && row < k ? d0[row] : 1.0;
  };
  // The rows below chunk `base`: the chunk's multipliers (s_q) of every column applied.
  auto update_rows = [&](int base) {
    // Two rows per thread, in batches of 16 of the chunk's rows: the R0 loads of the next batch
    // (the other half of the chunk, or the first half for the thread's next two rows) are in
    // flight while this one's multiply-adds run, so that one load latency per batch is not
    // paid in sequence (one block per SM: nothing else hides it).
    const int iters = threadIdx.x < base ? (base - 1 - int(threadIdx.x)) / (2 * kThreads) + 1 : 0;
    if (iters == 0) return;
    auto load = [&](int b, double(&a)[2][16]) {
      const int i0 = threadIdx.x + (b / 2) * 2 * kThreads, i1 = i0 + kThreads;
      const int u0 = (b % 2) * 16;
      const bool in = b < 2 * iters, two = i1 < base;
#pragma unroll
      for (int u = 0; u < 16; ++u) {
        const int ru = base + kChunk - 1 - u0 - u;  // past m in a short last chunk
        const double* col = r0 + (long long)ru * m;
        a[0][u] = in && ru < m ? col[i0] : 0.0;
        a[1][u] = in && ru < m && two ? col[i1] : 0.0;
      }
    };
    double a[2][16];
    load(0, a);
    double acc[2][kCols] = {};
    // Not unrolled: the compiler would keep all 32 x kCols multipliers in registers across the
    // batches, and spill. Each entry still gets the chunk's 32 updates in descending j.
#pragma unroll 1
    for (int b = 0; b < 2 * iters; ++b) {
      const int i0 = threadIdx.x + (b / 2) * 2 * kThreads, i1 = i0 + kThreads;
      const int u0 = (b % 2) * 16;
      const bool two = i1 < base;
      if (u0 == 0) {
#pragma unroll
        for (int w = 0; w < kCols; ++w) {
          acc[0][w] = w < cols ? s_x[w * m + i0] : 0.0;
          acc[1][w] = w < cols && two ? s_x[w * m + i1] : 0.0;
        }
      }
      double next[2][16];
      load(b + 1, next);
#pragma unroll
      for (int u = 0; u < 16; ++u)
#pragma unroll
        for (int w = 0; w < kCols; ++w) {
          const double q = s_q[u0 + u][w];
          acc[0][w] = fma(-q, a[0][u], acc[0][w]);
          acc[1][w] = fma(-q, a[1][u], acc[1][w]);
        }
      if (u0 == 16) {
#pragma unroll
        for (int w = 0; w < kCols; ++w) {
          if (w < cols) s_x[w * m + i0] = acc[0][w];
          if (w < cols && two) s_x[w * m + i1] = acc[1][w];
        }
      }
#pragma unroll
      for (int u = 0; u < 16; ++u) {
        a[0][u] = next[0][u];
        a[1][u] = next[1][u];
      }
    }
  };
  {
    double t[kTriPer];
    load_tri(c_top, t);
    store_tri(c_top & 1, t);
  }
  double dj = pivot(c_top);
  __syncthreads();
  for (int c = c_top; c >= 0; --c) {
    const int base = c * kChunk, buf = c & 1;
    // Solve: rows of this chunk that column k has (row < k), top down.
    const int row = base + kChunk - 1 - lane;
    const bool valid = has_col && row < k;
    double x = valid ? s_x[warp * m + row] : 0.0;
    const double rdj = 1.0 / dj;
    // x / r_jj as a rounded product (__dmul_rn is never fused with round_nearest's + 0.5), so
    // that a host model gets the same multipliers.
    double myq = 0.0;
    if (__any_sync(0xffffffffu, valid && round_nearest(__dmul_rn(x, rdj)) != 0)) {
#pragma unroll
      for (int u = 0; u < kChunk; ++u) {
        // Branch-free: a zero multiplier (or a lane above row u) subtracts q * 0, which leaves
        // x as it is; without branches the compiler can load the triangle ahead of the chain of
        // dependent steps. Lane u's row is invalid for this column only when its ratio is 0.
        const double coef = lane > u ? s_tri[buf][u][lane] : lane == u ? dj : 0.0;
        const double qu = __shfl_sync(0xffffffffu, round_nearest(__dmul_rn(x, rdj)), u);
        x = fma(-qu, coef, x);
        if (lane == u) myq = qu;
      }
      if (valid) s_x[warp * m + row] = x;
      if (myq != 0) {
        mult[(long long)k * m + row] = myq;
        any = true;
      }
    }
    if (warp < kCols) s_q[lane][warp] = valid ? myq : 0.0;
    double next_tri[kTriPer];
    load_tri(c - 1, next_tri);
    const double next_dj = pivot(c - 1);
    // Update: rows below the chunk (all of them below every column's first row).
    if (__syncthreads_or(myq != 0)) update_rows(base);
    store_tri(buf ^ 1, next_tri);
    dj = next_dj;
    __syncthreads();  // s_tri's other half written, s_x updated, s_q free again
  }
  __syncthreads();
  for (int w = 0; w < cols; ++w)
    for (int i = threadIdx.x; i < k0 + w; i += kThreads)
      r[(long long)(k0 + w) * m + i] = s_x[w * m + i];
  if (has_col && __any_sync(0xffffffffu, any) && lane == 0) mcol[k] = 1;
}

template <int kCols>
void launch(int m, int first_col, double* r, const double* r0, const double* d0, double* mult,
            int* mcol, cudaStream_t s) {
  const std::size_t smem = std::size_t(kCols) * m * sizeof(double);
  mimorx::detail::raise_smem_limit(reinterpret_cast<const void*>(tiled_size_reduce_kernel<kCols>));
  // Tiles are numbered from the last column down (heaviest first), so the first `tiles` of them
  // cover the columns from first_col on.
  const int tiles = (m + kCols - 1) / kCols - first_col / kCols;
  tiled_size_reduce_kernel<kCols><<<tiles, 32 * kCols, smem, s>>>(m, r, r0, d0, mult, mcol);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace

void size_reduce_enqueue(int m, double* r, const double* r0, const double* d0, double* mult,
                         int* mcol, void* stream, int first_col) {
  const auto s = mimorx::detail::as_stream(stream);
  // Columns below the tile of first_col keep their multipliers (zero: the caller reduces only
  // columns that can have changed).
  const int from = first_col / 8 * 8;  // at or below the first column of first_col's tile
  MIMORX_CUDA_CHECK(cudaMemsetAsync(mult + std::size_t(from) * m, 0,
                                    std::size_t(m - from) * m * sizeof(double), s));
  MIMORX_CUDA_CHECK(cudaMemsetAsync(mcol, 0, std::size_t(m) * sizeof(int), s));
  if (m < 2) return;
  if (m > kMaxRows)
    throw Unsupported("m: " + std::to_string(m) +
                      " columns; the GPU size reduction takes up to 4096");
  if (m <= kMaxRows8) {
    launch<8>(m, first_col, r, r0, d0, mult, mcol, s);
  } else {
    launch<4>(m, first_col, r, r0, d0, mult, mcol, s);
  }
}

}  // namespace mimorx::lattice::detail
