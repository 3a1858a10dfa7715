// The global size reduction of the GPU-resident block method (block_lll_cuda.cu): every column k
// of R reduced against a snapshot R0 of all columns,
//   for j = k - 1 down to 0:  q_j = round(x_j / r0_jj);  x_i -= q_j R0(i, j) for i <= j,
// with the multipliers recorded in M (column k) for the products B -= B0 M and T -= T0 M.
//
// Columns go in tiles of kCols consecutive columns, so that every entry of R0 read serves all of
// the tile's columns; rows go top down in chunks of 32:
//   solve:  one warp per column finds the chunk's multipliers one row after the other (lane s
//           holds row 32c + 31 - s; the chunk's triangle of R0 is staged in shared memory);
//   update: the rows below the chunk get the chunk's 32 multipliers of every column.
// A tile's rows are split into stripes of kStripe rows, each a work item of its own thread block
// (since the seventeenth session): the stripe holding chunk c solves it and writes its
// multipliers to M; the stripes below read them from there and apply them to their rows. The tiles
// of a window's last columns have multipliers on nearly every row (at m = 1024, 991 of 992 rows),
// and with one block per tile their updates read R0's whole upper triangle (4 MB) through one SM:
// 183-198 us for the heaviest tile, 6 us a chunk at the top (Nsight Compute: 0.26 instructions
// issued a cycle per scheduler, stalls on long scoreboard first).
//
// Items are handed out by an atomic counter, heaviest tile first and a tile's stripes top down,
// so a block only ever waits for stripes handed out before its own, to blocks already running:
// no co-residency is needed. Each entry x_i still receives its updates in descending j, one fused
// multiply-add each, and q_j is round(x_j * (1 / r0_jj)): the arithmetic of the one-block-per-tile
// kernel this replaces, so the numbers are the same (tests/lattice/test_lll_gpu.cpp checks them
// against a host model).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "core/cuda_check.hpp"
#include "core/cuda_occupancy.hpp"
#include "lattice/lll_internal.hpp"
#include "lattice/lll_math.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::lattice::detail {
namespace {

constexpr int kChunk = 32;
constexpr int kCols = 8;              // columns a tile, one warp each in the solve
constexpr int kThreads = 32 * kCols;  // one warp a column in the solve
constexpr int kStripeChunks = 4;      // chunks a stripe
constexpr int kStripe = kStripeChunks * kChunk;
constexpr int kMaxRows = 4096;      // LllConfig's limit
constexpr int kUnset = 0x7f7f7f7f;  // the item counter's value after the memset below
// M's entries before they are written: all bits set (memset 0xff). Every entry of the reduced
// columns is written exactly once, so a stripe below waits for a multiplier by reading it until
// it differs from this: no fences, no flags. No arithmetic produces this pattern (a NaN from
// arithmetic is 0x7fff...); a written multiplier with these bits is stored as that NaN.
constexpr long long kUnwritten = -1;

// Tile of rank `rank` (rank 0: the last columns, the most rows).
struct TileShape {
  int k0, cols, c_top, stripes;
};
__host__ __device__ inline TileShape tile_shape(int m, int rank) {
  const int ntiles = (m + kCols - 1) / kCols;
  TileShape t;
  t.k0 = (ntiles - 1 - rank) * kCols;
  t.cols = m - t.k0 < kCols ? m - t.k0 : kCols;
  const int top = t.k0 + t.cols - 2;  // the highest row of the tile's columns
  t.c_top = top < 0 ? -1 : top / kChunk;
  t.stripes = top < 0 ? 0 : top / kStripe + 1;
  return t;
}

// A multiplier another block writes: read from L2 until written.
__device__ __forceinline__ double await_multiplier(const double* p) {
  long long v;
  do {
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  } while (v == kUnwritten);
  return __longlong_as_double(v);
}
__device__ __forceinline__ void publish_multiplier(double* p, double q) {
  const long long v =
      __double_as_longlong(q) == kUnwritten ? 0x7fffffffffffffffLL : __double_as_longlong(q);
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// sync[0]: the item counter. gate (may be null): the kernel does nothing where one of its
// gate_count ints is non-zero.
__global__ void __launch_bounds__(kThreads)
    striped_size_reduce_kernel(int m, int tiles, double* r, const double* r0, const double* d0,
                               double* mult, int* mcol, int* sync, const int* gate,
                               int gate_count) {
  if (gate) {
    int closed = 0;
    for (int i = 0; i < gate_count; ++i) closed |= gate[i];
    if (closed) return;  // mcol stays zero: the products after it do nothing either
  }
  __shared__ double s_x[kCols][kStripe];           // s_x[w][i - lo]: the stripe's rows
  __shared__ double s_tri[2][kChunk][kChunk + 1];  // [chunk & 1][u][s] = R0(row_s, row_u), s > u
  __shared__ double s_q[kChunk][kCols];            // the chunk's multipliers per column
  __shared__ int s_item;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  int rank = 0, first_item = 0;  // the tile of the last item taken, and its first item
  for (;;) {
    __syncthreads();  // the last item's shared data is no longer read
    if (threadIdx.x == 0) s_item = atomicAdd(&sync[0], 1) - kUnset;
    __syncthreads();
    const int item = s_item;
    TileShape t = tile_shape(m, rank);
    while (item >= first_item + t.stripes) {
      first_item += t.stripes;
      if (++rank >= tiles) return;
      t = tile_shape(m, rank);
    }
    const int stripe = t.stripes - 1 - (item - first_item);  // top down
    const int lo = stripe * kStripe;
    const int c_lo = stripe * kStripeChunks, c_hi = min(c_lo + kStripeChunks - 1, t.c_top);
    const int k0 = t.k0, cols = t.cols;
    for (int w = 0; w < cols; ++w)
      for (int i = lo + int(threadIdx.x); i < min(lo + kStripe, k0 + w); i += kThreads)
        s_x[w][i - lo] = r[(long long)(k0 + w) * m + i];
    const int k = k0 + warp;  // this warp's column in the solve
    const bool has_col = warp < cols;
    bool any = false;
    // An own chunk's triangle and pivots, loaded into registers while the chunk before is
    // applied and stored to s_tri at the end of that step.
    constexpr int kTriPer = kChunk * kChunk / kThreads;
    auto load_tri = [&](int c, double* tv) {
#pragma unroll
      for (int p = 0; p < kTriPer; ++p) {
        const int e = threadIdx.x + p * kThreads, u = e / kChunk, sr = e % kChunk;
        const int ru = c * kChunk + kChunk - 1 - u, rs = c * kChunk + kChunk - 1 - sr;
        tv[p] = c >= 0 && sr > u && ru < m ? r0[(long long)ru * m + rs] : 0.0;
      }
    };
    auto store_tri = [&](int buf, const double* tv) {
#pragma unroll
      for (int p = 0; p < kTriPer; ++p) {
        const int e = threadIdx.x + p * kThreads;
        s_tri[buf][e / kChunk][e % kChunk] = tv[p];
      }
    };
    auto pivot = [&](int c) {
      const int row = c * kChunk + kChunk - 1 - lane;
      return c >= 0 && has_col && row < k ? d0[row] : 1.0;
    };
    // The stripe's rows below `end` get the chunk's multipliers (s_q): thread t takes row
    // lo + t % kStripe and half of the columns. The chunk's R0 entries of the row (independent
    // of the multipliers) are loaded at the start of the step, so that their latency passes
    // during the solve or the wait for the multipliers rather than after it.
    constexpr int kHalf = kCols / 2;
    const int my_row = lo + int(threadIdx.x) % kStripe, w0 = int(threadIdx.x) / kStripe * kHalf;
    double a[kChunk];
    auto load_rows = [&](int base, int end) {
#pragma unroll
      for (int u = 0; u < kChunk; ++u) {
        const int ru = base + kChunk - 1 - u;  // past m in a short last chunk
        a[u] = my_row < end && ru < m ? r0[(long long)ru * m + my_row] : 0.0;
      }
    };
    auto update_rows = [&](int end) {
      if (my_row >= end) return;
      double acc[kHalf];
#pragma unroll
      for (int w = 0; w < kHalf; ++w) acc[w] = w0 + w < cols ? s_x[w0 + w][my_row - lo] : 0.0;
#pragma unroll
      for (int u = 0; u < kChunk; ++u)
#pragma unroll
        for (int w = 0; w < kHalf; ++w) acc[w] = fma(-s_q[u][w0 + w], a[u], acc[w]);
#pragma unroll
      for (int w = 0; w < kHalf; ++w)
        if (w0 + w < cols) s_x[w0 + w][my_row - lo] = acc[w];
    };
    static_assert(kThreads == 2 * kStripe, "update_rows: two threads a row");
    double dj = 1.0;
    if (t.c_top <= c_hi) {  // the top chunk is this stripe's
      double tv[kTriPer];
      load_tri(t.c_top, tv);
      store_tri(t.c_top & 1, tv);
      dj = pivot(t.c_top);
    }
    __syncthreads();
    for (int c = t.c_top; c >= c_lo; --c) {
      const int base = c * kChunk, buf = c & 1;
      const int end = min(lo + kStripe, base);  // the stripe's rows below the chunk
      load_rows(base, end);
      if (c > c_hi) {
        // Another stripe's chunk: its multipliers once written.
        const int row = base + kChunk - 1 - lane;
        const double q = has_col && row < k ? await_multiplier(&mult[(long long)k * m + row]) : 0.0;
        if (warp < kCols) s_q[lane][warp] = q;
        double tv[kTriPer];
        const bool next_own = c - 1 == c_hi;
        if (next_own) load_tri(c - 1, tv);
        const double next_dj = next_own ? pivot(c - 1) : 1.0;
        if (__syncthreads_or(q != 0)) update_rows(end);
        if (next_own) {
          store_tri(buf ^ 1, tv);
          dj = next_dj;
        }
        __syncthreads();
        continue;
      }
      // This stripe's chunk: the solve, rows top down.
      double tv[kTriPer];
      if (c > c_lo) load_tri(c - 1, tv);
      const double next_dj = pivot(c - 1);
      const int row = base + kChunk - 1 - lane;
      const bool valid = has_col && row < k;
      double x = valid ? s_x[warp][row - lo] : 0.0;
      const double rdj = 1.0 / dj;
      // x / r_jj as a rounded product (__dmul_rn is never fused with round_nearest's + 0.5), so
      // that a host model gets the same multipliers.
      double myq = 0.0;
      if (__any_sync(0xffffffffu, valid && round_nearest(__dmul_rn(x, rdj)) != 0)) {
#pragma unroll
        for (int u = 0; u < kChunk; ++u) {
          // Branch-free: a zero multiplier (or a lane above row u) subtracts q * 0, which leaves
          // x as it is; without branches the compiler can load the triangle ahead of the chain
          // of dependent steps. Lane u's row is invalid for this column only when its ratio is 0.
          const double coef = lane > u ? s_tri[buf][u][lane] : lane == u ? dj : 0.0;
          const double qu = __shfl_sync(0xffffffffu, round_nearest(__dmul_rn(x, rdj)), u);
          x = fma(-qu, coef, x);
          if (lane == u) myq = qu;
        }
        if (valid) s_x[warp][row - lo] = x;
        any = any || myq != 0;
      }
      // Every row of the chunk gets its entry of M, zero included: the stripes below wait for
      // them (and rows at or past the column's own are zero).
      if (has_col && row < m) publish_multiplier(&mult[(long long)k * m + row], myq);
      if (warp < kCols) s_q[lane][warp] = valid ? myq : 0.0;
      const bool nonzero = __syncthreads_or(myq != 0);
      if (nonzero) update_rows(end);
      if (c > c_lo) store_tri(buf ^ 1, tv);
      dj = next_dj;
      __syncthreads();  // s_tri's other half written, s_x updated, s_q free again
    }
    for (int w = 0; w < cols; ++w)
      for (int i = lo + int(threadIdx.x); i < min(lo + kStripe, k0 + w); i += kThreads)
        r[(long long)(k0 + w) * m + i] = s_x[w][i - lo];
    if (stripe == t.stripes - 1)  // M's rows past the top chunk: zero
      for (int w = 0; w < cols; ++w)
        for (int i = (t.c_top + 1) * kChunk + int(threadIdx.x); i < m; i += kThreads)
          mult[(long long)(k0 + w) * m + i] = 0.0;
    if (has_col && __any_sync(0xffffffffu, any) && lane == 0) mcol[k] = 1;
  }
}

}  // namespace

std::size_t size_reduce_sync_size(int) { return 1; }

void size_reduce_enqueue(int m, double* r, const double* r0, const double* d0, double* mult,
                         int* mcol, int* sync, void* stream, int first_col, const int* gate,
                         int gate_count) {
  const auto s = mimorx::detail::as_stream(stream);
  // Columns below the tile of first_col keep their multipliers (zero: the caller reduces only
  // columns that can have changed).
  const int from = first_col / kCols * kCols;  // the first column of first_col's tile
  if (m > kMaxRows)
    throw Unsupported("m: " + std::to_string(m) +
                      " columns; the GPU size reduction takes up to 4096");
  MIMORX_CUDA_CHECK(cudaMemsetAsync(mcol, 0, std::size_t(m) * sizeof(int), s));
  // Tiles are ranked from the last column down (heaviest first), so the first `tiles` of them
  // cover the columns from first_col on.
  const int ntiles = (m + kCols - 1) / kCols, tiles = ntiles - from / kCols;
  long long items = 0;
  for (int rank = 0; rank < tiles; ++rank) items += tile_shape(m, rank).stripes;
  // The kernel writes every entry of M's columns from `from` on; unwritten: all bits set.
  MIMORX_CUDA_CHECK(cudaMemsetAsync(mult + std::size_t(from) * m, items == 0 ? 0 : 0xff,
                                    std::size_t(m - from) * m * sizeof(double), s));
  if (items == 0) return;
  MIMORX_CUDA_CHECK(cudaMemsetAsync(sync, 0x7f, sizeof(int), s));
  const int resident = mimorx::detail::resident_blocks(
      reinterpret_cast<const void*>(striped_size_reduce_kernel), kThreads, 0);
  const int grid = int(std::min<long long>(items, std::max(1, resident)));
  striped_size_reduce_kernel<<<grid, kThreads, 0, s>>>(m, tiles, r, r0, d0, mult, mcol, sync, gate,
                                                       gate_count);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace mimorx::lattice::detail
