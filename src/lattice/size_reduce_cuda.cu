// The global size reduction of the GPU-resident block method (block_lll_cuda.cu): every column k
// of R reduced against a snapshot R0 of all columns,
//   for j = k - 1 down to 0:  q_j = round(x_j / r0_jj);  x_i -= q_j R0(i, j) for i <= j,
// with the multipliers recorded in M (column k) for the products B -= B0 M and T -= T0 M.
//
// Columns go in tiles of kCols consecutive columns, so that every entry of R0 read serves all of
// the tile's columns; rows go top down in chunks of 32.
// A tile's rows are split into stripes of kStripe rows, each a work item of its own thread
// block: the stripe holding chunk c solves it and writes its multipliers to M; the stripes below
// read them from there and apply them to their rows (the chunk's 32 multipliers of every column
// at once, from registers). Within its own stripe a block runs one warp a column down all of the
// stripe's rows (the chain, see the kernel), with no block barrier between a chunk's solve and
// its update. Stripes exist because the tiles of a window's last columns have multipliers on
// nearly every row, and with one block per tile their updates would read R0's whole upper
// triangle (4 MB at m = 1024) through one SM.
//
// Items are handed out by an atomic counter, heaviest tile first and a tile's stripes top down,
// so a block only ever waits for stripes handed out before its own, to blocks already running:
// no co-residency is needed. Each entry x_i receives its updates in descending j, one fused
// multiply-add each, and q_j is round(x_j * (1 / r0_jj)), so a host model reproduces every
// number (tests/lattice/test_lll_gpu_factor.cpp, SizeReductionMatchesHostModel).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "core/cuda_check.hpp"
#include "core/cuda_occupancy.hpp"
#include "core/cuda_smem_limit.hpp"
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
constexpr std::size_t kPanelBytes = 2 * kChunk * kStripe * sizeof(double);
constexpr int kMaxRows = 4096;      // LllConfig's limit
constexpr int kUnset = 0x7f7f7f7f;  // the item counter's value after size_reduce_prepare
// M's entries before they are written: all bits set (size_reduce_prepare). Every entry of the
// reduced columns is written exactly once, so a stripe below waits for a multiplier by reading it
// until it differs from this: no fences, no flags. No arithmetic produces this pattern (a NaN from
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

// The chunk's coefficients for the column chain: pan[jl * kStripe + i] = R0(lo + i, base + jl)
// on and above the diagonal (the pivot r0_jj on it), 0 below it and outside R0. A thread loads its
// share into registers when the chunk before starts and stores it to shared memory when that chunk
// is solved, so the loads' latency passes during the solve.
constexpr int kPanelPer = kChunk * kStripe / kThreads;
__device__ __forceinline__ void load_panel(double* v, int m, int lo, int c, const double* r0) {
  // Thread t loads row lo + t % kStripe of the columns base + t / kStripe + 2 u: one pointer
  // stepped by two columns, so that the loads are not held up by their address arithmetic.
  static_assert(kThreads == 2 * kStripe, "two columns a pass");
  const int row = lo + int(threadIdx.x) % kStripe, j0 = c * kChunk + int(threadIdx.x) / kStripe;
  const double* src = r0 + (long long)j0 * m + row;
  const long long step = 2LL * m;
#pragma unroll
  for (int u = 0; u < kPanelPer; ++u) {
    const int j = j0 + 2 * u;
    v[u] = j < m && row <= j ? __ldg(src + u * step) : 0.0;  // one predicated load an entry
  }
}
__device__ __forceinline__ void store_panel(double* pan, const double* v) {
#pragma unroll
  for (int u = 0; u < kPanelPer; ++u) pan[int(threadIdx.x) + u * kThreads] = v[u];
}

// sync[0]: the item counter. gate (may be null): the kernel does nothing where one of its
// gate_count ints is non-zero. Dynamic shared memory: two panels (kPanelBytes).
__global__ void __launch_bounds__(kThreads)
    striped_size_reduce_kernel(int m, int tiles, double* r, const double* r0, double* mult,
                               int* mcol, int* sync, const int* gate, int gate_count) {
  if (gate) {
    int closed = 0;
    for (int i = 0; i < gate_count; ++i) closed |= gate[i];
    if (closed) return;  // mcol stays zero: the products after it do nothing either
  }
  extern __shared__ double s_pan[];       // [2][kChunk][kStripe], see load_panel
  __shared__ double s_x[kCols][kStripe];  // s_x[w][i - lo]: the stripe's rows
  __shared__ double s_rinv[kStripe];      // 1 / r0_jj of the stripe's rows
  __shared__ double s_q[kChunk][kCols];   // an upper chunk's multipliers per column
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
    {  // the first own chunk's panel (the __syncthreads before the own chunks publishes it)
      double v[kPanelPer];
      load_panel(v, m, lo, c_hi, r0);
      store_panel(s_pan, v);
    }
    // Thread t takes row lo + t % kStripe and half of the columns, here and in the updates
    // from the chunks above.
    constexpr int kHalf = kCols / 2;
    const int my_row = lo + int(threadIdx.x) % kStripe, w0 = int(threadIdx.x) / kStripe * kHalf;
    static_assert(kThreads == 2 * kStripe, "two threads a row");
    {
      double v[kHalf];  // all loads in flight before the first store
#pragma unroll
      for (int w = 0; w < kHalf; ++w)
        v[w] =
            w0 + w < cols && my_row < k0 + w0 + w ? r[(long long)(k0 + w0 + w) * m + my_row] : 0.0;
#pragma unroll
      for (int w = 0; w < kHalf; ++w) s_x[w0 + w][my_row - lo] = v[w];
    }
    if (threadIdx.x < kStripe)
      s_rinv[threadIdx.x] = my_row < m ? 1.0 / r0[(long long)my_row * m + my_row] : 1.0;
    const int k = k0 + warp;  // this warp's column in the solve
    const bool has_col = warp < cols;
    bool any = false;
    // Chunks of the stripes above: their rows below `end` get the chunk's multipliers (s_q).
    // The chunk's R0 entries of the row (independent of the multipliers) are loaded before the
    // wait for the multipliers.
    for (int c = t.c_top; c > c_hi; --c) {
      const int base = c * kChunk, end = lo + kStripe;
      double a[kChunk];
      const double* src = r0 + (long long)(base + kChunk - 1) * m + my_row;  // column base + 31
#pragma unroll
      for (int u = 0; u < kChunk; ++u) {
        const int ru = base + kChunk - 1 - u;  // past m in a short last chunk
        a[u] = my_row < end && ru < m ? __ldg(src - (long long)u * m) : 0.0;
      }
      const int row = base + kChunk - 1 - lane;
      const double q = has_col && row < k ? await_multiplier(&mult[(long long)k * m + row]) : 0.0;
      if (warp < kCols) s_q[lane][warp] = q;
      if (__syncthreads_or(q != 0) && my_row < end) {
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
      }
      __syncthreads();  // s_x updated, s_q free again
    }
    // The stripe's own chunks: one warp a column runs the chain of rows top down. Lane l holds
    // rows lo + 32 r + l (p[r]). Each multiplier q_j is computed by every lane from the same
    // operands, so no lane waits for another's result: step j takes x_j = p_j - q_{j+1} R0(j,
    // j+1), whose partial p_j (all updates from rows above j + 1) its owner lane passed on by a
    // shuffle during step j + 1; then every lane applies q_j to its rows below (and to row j,
    // with r0_jj). The chain a step is thus one multiply-add, the product with 1 / r0_jj and the
    // rounding; the shuffle and the updates run beside it. Each row receives the same fused
    // multiply-adds in the same order as the host model's.
    __syncthreads();  // s_x and s_rinv written (where no chunk above had any)
    double p[kStripeChunks];
#pragma unroll
    for (int rr = 0; rr < kStripeChunks; ++rr) {
      const int row = lo + kChunk * rr + lane;
      p[rr] = has_col && row < k ? s_x[warp][row - lo] : 0.0;
    }
#pragma unroll
    for (int rr = kStripeChunks - 1; rr >= 0; --rr) {
      const int c = c_lo + rr;
      if (c > c_hi) continue;  // above the tile's top row
      const int base = c * kChunk, buf = (c_hi - c) & 1;
      double next[kPanelPer];
      if (c > c_lo) load_panel(next, m, lo, c - 1, r0);
      const double* pan = s_pan + buf * kChunk * kStripe;
      double myq = 0.0;
      // Rows at or past the column's own hold 0 (p above), so their multipliers are 0 and
      // every chunk runs all 32 steps: the loop unrolls whole, with every operand's address
      // known, and the loads are scheduled ahead of the chain.
      if (__any_sync(0xffffffffu,
                     round_nearest(__dmul_rn(p[rr], s_rinv[kChunk * rr + lane])) != 0)) {
        double part = __shfl_sync(0xffffffffu, p[rr], kChunk - 1), qprev = 0.0, cprev = 0.0;
#pragma unroll
        for (int l = kChunk - 1; l >= 0; --l) {
          const double x = fma(-qprev, cprev, part);
          if (l > 0) part = __shfl_sync(0xffffffffu, p[rr], l - 1);  // before q is applied
          // x / r_jj as a rounded product (__dmul_rn is never fused with round_nearest's
          // + 0.5), so that a host model gets the same multipliers.
          const double q = round_nearest(__dmul_rn(x, s_rinv[kChunk * rr + l]));
          // Branch-free: a zero q leaves the rows as they are (q * 0 added), as the model's
          // skipped step does.
#pragma unroll
          for (int r2 = 0; r2 <= rr; ++r2)
            p[r2] = fma(-q, pan[l * kStripe + kChunk * r2 + lane], p[r2]);
          if (lane == l) myq = q;
          qprev = q;
          if (l > 0) cprev = pan[l * kStripe + kChunk * rr + l - 1];  // R0(j - 1, j)
        }
        any = any || myq != 0;
      }
      // Every row of the chunk gets its entry of M, zero included: the stripes below wait for
      // them (and rows at or past the column's own are zero).
      if (has_col && base + lane < m)
        publish_multiplier(&mult[(long long)k * m + base + lane], myq);
      if (c > c_lo) store_panel(s_pan + (buf ^ 1) * kChunk * kStripe, next);
      __syncthreads();  // the next panel stored; this one is no longer read
    }
#pragma unroll
    for (int rr = 0; rr < kStripeChunks; ++rr) {
      const int row = lo + kChunk * rr + lane;
      if (has_col && row < k) s_x[warp][row - lo] = p[rr];
    }
    __syncthreads();
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

namespace {
// The reduction's initial state in one launch (three memsets were three operations on the
// critical path, or on the host's): M's columns from `from` all bits set (unwritten), mcol zero,
// the item counter kUnset.
__global__ void prepare_kernel(double* mult, std::size_t words, int* mcol, int m, int* sync,
                               int fill) {
  const std::size_t tid = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x,
                    threads = std::size_t(gridDim.x) * blockDim.x;
  const long long v = fill ? kUnwritten : 0;
  auto* m2 = reinterpret_cast<longlong2*>(mult);  // cudaMalloc'd, m even: 16-byte aligned pairs
  const bool wide = (reinterpret_cast<std::uintptr_t>(mult) % 16) == 0;
  if (wide) {
    for (std::size_t i = tid; i < words / 2; i += threads) m2[i] = make_longlong2(v, v);
    if (tid == 0 && words % 2) reinterpret_cast<long long*>(mult)[words - 1] = v;
  } else {
    for (std::size_t i = tid; i < words; i += threads) reinterpret_cast<long long*>(mult)[i] = v;
  }
  for (std::size_t i = tid; i < std::size_t(m); i += threads) mcol[i] = 0;
  if (tid == 0 && fill) sync[0] = kUnset;
}

// The first column of first_col's tile, the number of tiles from there and their work items;
// both entry points (size_reduce_prepare, size_reduce_enqueue) check the size limit here.
struct Extent {
  int from, tiles;
  long long items;
};
Extent extent(int m, int first_col) {
  if (m > kMaxRows)
    throw Unsupported("m: " + std::to_string(m) +
                      " columns; the GPU size reduction takes up to 4096");
  Extent e;
  e.from = first_col / kCols * kCols;
  // Tiles are ranked from the last column down (heaviest first), so the first `tiles` of them
  // cover the columns from first_col on.
  e.tiles = (m + kCols - 1) / kCols - e.from / kCols;
  e.items = 0;
  for (int rank = 0; rank < e.tiles; ++rank) e.items += tile_shape(m, rank).stripes;
  return e;
}
}  // namespace

void size_reduce_prepare(int m, double* mult, int* mcol, int* sync, void* stream, int first_col) {
  const auto s = mimorx::detail::as_stream(stream);
  const Extent e = extent(m, first_col);
  // The kernel writes every entry of M's columns from `from` on; unwritten: all bits set.
  prepare_kernel<<<264, 512, 0, s>>>(mult + std::size_t(e.from) * m, std::size_t(m - e.from) * m,
                                     mcol, m, sync, e.items > 0);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void size_reduce_enqueue(int m, double* r, const double* r0, double* mult, int* mcol, int* sync,
                         void* stream, int first_col, const int* gate, int gate_count,
                         bool prepared) {
  const auto s = mimorx::detail::as_stream(stream);
  // Columns below the tile of first_col keep their multipliers (zero: the caller reduces only
  // columns that can have changed).
  if (!prepared) size_reduce_prepare(m, mult, mcol, sync, stream, first_col);
  const Extent e = extent(m, first_col);
  if (e.items == 0) return;
  // Both per device (the limit belongs to the device's context; the count to its SMs).
  mimorx::detail::raise_smem_limit(reinterpret_cast<const void*>(striped_size_reduce_kernel));
  const int resident = mimorx::detail::resident_blocks(
      reinterpret_cast<const void*>(striped_size_reduce_kernel), kThreads, kPanelBytes);
  const int grid = int(std::min<long long>(e.items, std::max(1, resident)));
  striped_size_reduce_kernel<<<grid, kThreads, kPanelBytes, s>>>(m, e.tiles, r, r0, mult, mcol,
                                                                 sync, gate, gate_count);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace mimorx::lattice::detail
