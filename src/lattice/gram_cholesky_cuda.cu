// The float64 Gram-Schmidt data of the block method (CR-MB-LLL) on the GPU: R upper triangular
// with B^T B = R^T R, i.e. the Cholesky factor of the Gram matrix. On the CPU (Eigen GEMM + LLT,
// single-threaded inside the scheduler's worker thread) this is most of the block method's time
// at large m. The device machine has no cuBLAS or cuSOLVER, so these are plain tiled kernels:
//   gram: C(I, J) = sum_k X(k, I) X(k, J) over 32 x 32 tiles of the upper triangle, four warps
//     each (splitting k), on the float64 tensor cores (mma_f64.cuh: m16n8k4 on sm_90, 512
//     multiply-adds per instruction, four times the FMA pipe's rate); X staged through shared
//     memory in float64;
//   trailing update: C(I, J) -= sum_k X(k, I) X(k, J) over 64 x 64 tiles of the upper triangle,
//     256 threads with 4 x 4 outputs each (rank-32 updates: bound by latency, not arithmetic);
//   panel: one warp factors the 32 x 32 diagonal block (chol_tile.cuh), then every thread solves
//     one column of the block row (R_pp^T X = G_p,c).
// Right-looking: per panel of 32 columns one panel launch and one trailing-update launch. Where
// cooperative launches work, the panels run instead as one persistent kernel with a lookahead
// (chol_lookahead_cuda.cu, the same steps, the same R); this chain is the fallback and the
// oracle of that kernel's test.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include "core/cuda_check.hpp"
#include "core/cuda_smem_limit.hpp"
#include "lattice/chol_tile.cuh"
#include "lattice/lll_internal.hpp"
#include "lattice/mma_f64.cuh"
#include "lattice/split_k.cuh"

namespace mimorx::lattice::detail {
namespace {

constexpr int kTile = 64;        // output tile of the Gram and trailing-update kernels
constexpr int kSlab = 32;        // k entries staged per step (a trailing update's whole k range)
constexpr int kPanelCols = 128;  // block-row columns solved per thread block

// Programmatic dependent launch (sm_90): the factorisation is a chain of 64 small kernels per
// 1024 columns, each too short to hide its own launch. A kernel of the chain lets the next one
// launch at once (launch_dependents) and waits for the previous one's results before touching
// memory (wait: returns when the previous grid has completed and its writes are visible; a no-op
// for a kernel launched without the attribute).
__device__ __forceinline__ void chain_wait_and_release() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

// `chained`: launch with programmatic stream serialization (only where the kernels wait, see
// chain_supported), else an ordinary launch.
template <class... Params, class... Args>
void launch_chained(bool chained, void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t s,
                    Args... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.stream = s;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = chained ? 1 : 0;
  MIMORX_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, Params(args)...));
}

// Trailing update of the upper triangle: C(I0 + i, J0 + j) -= sum over k in [k_begin, k_end) of
// X(k, I0 + i) X(k, J0 + j), X(k, c) = x[(c + col_off) * ld + k]; C(r, c) = c_out[(c + col_off) *
// ldc + r + col_off].
__global__ void __launch_bounds__(256)
    syrk_update_kernel(const double* x, long long ld, int k_begin, int k_end, int cols, int col_off,
                       double* c_out, long long ldc) {
  chain_wait_and_release();
  const int I0 = blockIdx.y * kTile, J0 = blockIdx.x * kTile;
  if (J0 + kTile <= I0) return;  // tile strictly below the diagonal
  __shared__ double xa[kSlab][kTile + 1];
  __shared__ double xb[kSlab][kTile + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  double acc[4][4] = {};
  // The old values loaded first, so that their latency overlaps the products.
  double old[4][4] = {};
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int r = I0 + tx + 16 * i, c = J0 + ty + 16 * j;
      if (r < cols && c < cols && r <= c)
        old[i][j] = c_out[(long long)(c + col_off) * ldc + r + col_off];
    }
  // The next slab is loaded into registers while this one is multiplied (for k ranges longer
  // than one slab).
  constexpr int kPer = kSlab * kTile / 256;
  double ra[kPer], rb[kPer];
  auto fetch = [&](int k0) {
#pragma unroll
    for (int p = 0; p < kPer; ++p) {
      const int e = threadIdx.x + 256 * p;
      const int kk = e % kSlab, c = e / kSlab, k = k0 + kk;
      const bool kin = k < k_end;
      ra[p] = kin && I0 + c < cols ? x[(long long)(I0 + c + col_off) * ld + k] : 0.0;
      rb[p] = kin && J0 + c < cols ? x[(long long)(J0 + c + col_off) * ld + k] : 0.0;
    }
  };
  fetch(k_begin);
  for (int k0 = k_begin; k0 < k_end; k0 += kSlab) {
#pragma unroll
    for (int p = 0; p < kPer; ++p) {
      const int e = threadIdx.x + 256 * p;
      xa[e % kSlab][e / kSlab] = ra[p];
      xb[e % kSlab][e / kSlab] = rb[p];
    }
    if (k0 + kSlab < k_end) fetch(k0 + kSlab);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kSlab; ++kk) {
      double a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        a[i] = xa[kk][tx + 16 * i];
        b[i] = xb[kk][ty + 16 * i];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
  // Thread (tx, ty) owns rows I0 + tx + 16 i and columns J0 + ty + 16 j: consecutive threads
  // write consecutive rows of a column (coalesced).
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int r = I0 + tx + 16 * i, c = J0 + ty + 16 * j;
      if (r < cols && c < cols && r <= c) {
        c_out[(long long)(c + col_off) * ldc + r + col_off] = old[i][j] - acc[i][j];
      }
    }
}

// The Gram matrix C = X^T X (upper triangle, C(r, c) = c_out[c * m + r]) of the n x m matrix x
// (column-major), one 32 x 32 tile per thread block: 4 x 4 tensor-core tiles of 8 x 8, k in steps
// of 4 (mma_f64.cuh). Both operands are columns of X: A(i, kk) = X(k0 + kk, I0 + i),
// B(kk, j) = X(k0 + kk, J0 + j). The block's kGramWarps warps take the k slabs in turn, each
// with its own shared-memory slab (stored column by column, k contiguous, rows of kGramLd
// doubles: the fragment loads of a half-warp hit distinct banks), and their sums are added in a
// fixed order at the end (deterministic). Several warps a tile: a single warp per scheduler
// leaves the load and shared-memory latencies exposed.
constexpr int kGramTile = 32;
constexpr int kGramSlab = 16;
constexpr int kGramLd = kGramSlab + 4;
constexpr int kGramWarps = 4;
constexpr int kGramPer = kGramSlab * kGramTile / 32;  // slab entries per lane and operand

// One 32 x 32 tile of sum over k in [k_begin, k_end) of X(k, I0 + i) X(k, J0 + j), X(k, c) =
// x[c * ld + k] (0 for c >= cols), by the block's kGramWarps warps; smem: kGramWarps *
// kGramWarpWords doubles. Each entry's sum goes to out(e, sum), e = i + 32 j, from the thread
// that owns e (it may write smem[e]).
constexpr int kGramSlabWords = kGramTile * kGramLd;
constexpr int kGramWarpWords =
    2 * kGramSlabWords > kGramTile* kGramTile ? 2 * kGramSlabWords : kGramTile* kGramTile;
template <class T, class Out>
__device__ void gram_tile(const T* x, long long ld, int k_begin, int k_end, int cols, int I0,
                          int J0, double* smem, Out&& out) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // Per warp: its A and B slabs; after the products, its 32 x 32 partial sums.
  double* xa = smem + warp * kGramWarpWords;
  double* xb = xa + kGramSlabWords;
  double acc[4][4][2] = {};
  // Entry p of a lane: k = k0 + e % kGramSlab of column e / kGramSlab, e = lane + 32 p (runs of
  // kGramSlab consecutive k per column). The next slab waits in registers.
  T ra[kGramPer], rb[kGramPer];
  auto fetch = [&](int k0) {
#pragma unroll
    for (int p = 0; p < kGramPer; ++p) {
      const int e = lane + 32 * p, k = k0 + e % kGramSlab, c = e / kGramSlab;
      ra[p] = k < k_end && I0 + c < cols ? x[(long long)(I0 + c) * ld + k] : T(0);
      rb[p] = k < k_end && J0 + c < cols ? x[(long long)(J0 + c) * ld + k] : T(0);
    }
  };
  const int step = kGramWarps * kGramSlab;
  if (k_begin + warp * kGramSlab < k_end) fetch(k_begin + warp * kGramSlab);
  for (int k0 = k_begin + warp * kGramSlab; k0 < k_end; k0 += step) {
#pragma unroll
    for (int p = 0; p < kGramPer; ++p) {
      const int e = lane + 32 * p;
      xa[(e / kGramSlab) * kGramLd + e % kGramSlab] = double(ra[p]);
      xb[(e / kGramSlab) * kGramLd + e % kGramSlab] = double(rb[p]);
    }
    if (k0 + step < k_end) fetch(k0 + step);
    __syncwarp();
    warp_mma<kGramSlab, 4, 4, kGramLd, 1, kGramLd, 1>(xa, xb, acc, lane);
    __syncwarp();
  }
  // The partial sums through shared memory (each warp its own area), added in warp order.
  store_acc(smem + warp * kGramWarpWords, kGramTile, 0, 0, acc, lane);
  __syncthreads();
  for (int e = threadIdx.x; e < kGramTile * kGramTile; e += 32 * kGramWarps) {
    double sum = smem[e];
    for (int w = 1; w < kGramWarps; ++w) sum += smem[w * kGramWarpWords + e];
    out(e, sum);
  }
}

template <class T>
__global__ void __launch_bounds__(32 * kGramWarps)
    gram_mma_kernel(const T* x, int n, int m, double* c_out, int first_tile, double* norm2,
                    int first_row_tile) {
  chain_wait_and_release();
  // Column tiles from first_tile on (tail_cholesky_enqueue: the earlier columns hold R).
  // Every entry of the columns is written, zeros below the diagonal (no memset before it); norm2
  // (may be null) receives the diagonal, the squared column norms (no launch of its own).
  // Rows from first_row_tile on (the rows before it are kept: head_rows_kept).
  const int I0 = (blockIdx.y + first_row_tile) * kGramTile,
            J0 = (blockIdx.x + first_tile) * kGramTile;
  if (J0 < I0) {  // tile below the diagonal
    for (int e = threadIdx.x; e < kGramTile * kGramTile; e += blockDim.x) {
      const int r = I0 + e % kGramTile, c = J0 + e / kGramTile;
      if (r < m && c < m) c_out[(long long)c * m + r] = 0.0;
    }
    return;
  }
  __shared__ double smem[kGramWarps * kGramWarpWords];
  gram_tile<T>(x, n, 0, n, m, I0, J0, smem, [&](int e, double sum) {
    const int r = I0 + e % kGramTile, c = J0 + e / kGramTile;
    if (r < m && c < m) c_out[(long long)c * m + r] = r <= c ? sum : 0.0;
    if (norm2 && r == c && c < m) norm2[c] = sum;
  });
}

// The tail's Schur complement, R(f.., f..) = G_tt - X^T X over the head's k range [0, f)
// (X = R[0 : f, f : m], the head's block rows of the tail columns), 32 x 32 tiles of the upper
// triangle with the k range split over a cluster of blocks (split_k.cuh): one block per tile
// would run the long k range (f is most of m) serially on few tiles.
__global__ void __launch_bounds__(32 * kGramWarps) schur_mma_kernel(double* r, int m, int f) {
  const int I0 = blockIdx.y * kGramTile, J0 = blockIdx.x * kGramTile, rest = m - f;
  if (J0 < I0) return;  // the whole cluster: it shares the tile
  __shared__ double smem[kGramWarps * kGramWarpWords];
  int k_begin = 0, k_end = 0;
  split_range(f, kGramWarps * kGramSlab, k_begin, k_end);
  gram_tile<double>(r + (long long)f * m, m, k_begin, k_end, rest, I0, J0, smem,
                    [&](int e, double sum) { smem[e] = sum; });
  cluster_sum(smem, kGramTile * kGramTile, [&](int e, double sum) {
    const int i = I0 + e % kGramTile, j = J0 + e / kGramTile;
    if (i <= j && j < rest) r[(long long)(f + j) * m + f + i] -= sum;
  });
}

// Panel p (columns p .. p + nb - 1): factor the diagonal block (every thread block does: warp 0,
// lane k holding column k in registers, each row of the factor passed on through shared memory; a
// short last block is padded with the identity) and solve the block row's columns [p + nb +
// blockIdx.x * kPanelCols, ...) (staged through shared memory with one warp per column, so that the
// loads and stores are coalesced; one thread per column solves R_pp^T X = G_p,c with the diagonal's
// reciprocals). Block 0 stores the factored diagonal block in `diag` (32 x 32 per panel), not in
// g: other blocks may still be reading g's diagonal block; diag_store_kernel copies them at the
// end. A pivot that is not positive and finite sets *fail.
__global__ void __launch_bounds__(kPanelCols)
    chol_panel_kernel(double* g, int m, int p, double* diag, int* fail) {
  chain_wait_and_release();
  __shared__ double d[kPanel][kPanel + 1];  // d[i][k] = R(p + i, p + k), upper
  __shared__ double inv[kPanel];
  __shared__ double row[2][2 * kPanel];         // row j of the factor, for the update
  __shared__ double x[kPanel][kPanelCols + 1];  // the block row, x[i][c]
  const int nb = min(kPanel, m - p);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = kPanelCols / 32;
  if (warp == 0) {
    const bool bad = factor_diag_warp(
        [&](int i, int k) { return g[diag_block_index(m, p, nb, i, k)]; }, nb, d, inv, row);
    if (bad && blockIdx.x == 0 && lane == 0) *fail = 1;
  }
  const int c0 = p + nb + blockIdx.x * kPanelCols;
  const int cols = min(kPanelCols, m - c0);
  for (int cc = warp; cc < cols; cc += warps)
    if (lane < nb) x[lane][cc] = g[(long long)(c0 + cc) * m + p + lane];
  __syncthreads();
  if (blockIdx.x == 0)
    for (int e = threadIdx.x; e < kPanel * kPanel; e += blockDim.x)
      diag[(long long)p * kPanel + e] = d[e % kPanel][e / kPanel];
  if (threadIdx.x < cols) {
    const int cc = threadIdx.x;
    double v[kPanel];
#pragma unroll
    for (int i = 0; i < kPanel; ++i) v[i] = i < nb ? x[i][cc] : 0.0;
    solve_column(v, d, inv);
#pragma unroll
    for (int i = 0; i < kPanel; ++i) x[i][cc] = v[i];
  }
  __syncthreads();
  for (int cc = warp; cc < cols; cc += warps)
    if (lane < nb) g[(long long)(c0 + cc) * m + p + lane] = x[lane][cc];
}

// Whether the chain's kernels were compiled with griddepcontrol (PTX for sm_90 or newer; a build
// for an older architecture may run on a newer GPU through its PTX): only then may a kernel of
// the chain be launched before its predecessor has completed.
// Per device: the image a device runs (its architecture's, or PTX) decides.
bool chain_supported() {
  static std::atomic<int> known[64];  // 0 unknown, 1 no, 2 yes
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return false;
  const bool cached = device >= 0 && device < 64;
  if (cached && known[device].load(std::memory_order_relaxed) != 0)
    return known[device].load(std::memory_order_relaxed) == 2;
  cudaFuncAttributes a{};
  const bool ok = cudaFuncGetAttributes(&a, chol_panel_kernel) == cudaSuccess && a.ptxVersion >= 90;
  if (cached) known[device].store(ok ? 2 : 1, std::memory_order_relaxed);
  return ok;
}

// The factored diagonal blocks from `diag` into R, from column `first` (a multiple of kPanel) on.
__global__ void diag_store_kernel(double* g, int m, const double* diag, int first) {
  const long long e = (long long)first * kPanel + (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= (long long)m * kPanel) return;
  const int p = int(e / (kPanel * kPanel)) * kPanel, k = int(e / kPanel) % kPanel,
            i = int(e % kPanel);
  if (p + i < m && p + k < m) g[(long long)(p + k) * m + p + i] = diag[e];
}

}  // namespace

std::size_t diag_scratch_size(int m) {
  return std::max(std::size_t((m + kPanel - 1) / kPanel) * kPanel * kPanel,
                  lookahead_scratch_size(m));
}

namespace {
// The head's block rows of the tail columns, X = R_hh^{-T} G[0 : f, f : m], where R_hh (the
// first f columns of R, kept) is known: the columns are independent, so one thread block takes
// kCols of them for the whole forward substitution (no dependent launches: a chain of panel
// launches costs about the same per panel whatever its width). The columns
// stay in shared memory; per chunk of 32 rows one warp per column solves with the chunk's
// diagonal block, then every thread updates rows below with the chunk's 32 values.
constexpr int kThreads = 256;
template <int kCols>
__global__ void __launch_bounds__(kThreads) head_solve_kernel(double* r, int m, int f) {
  // kCols columns of f rows (s_x[w * f + i]), then two 32 x 33 tiles per warp.
  extern __shared__ double s_x[];
  double(*s_tile)[kPanel + 1] = reinterpret_cast<double(*)[kPanel + 1]>(s_x + kCols * f);
  __shared__ double s_d[kPanel][kPanel + 1];  // s_d[i][k] = R(p + i, p + k), upper
  __shared__ double s_inv[kPanel];
  __shared__ double s_v[kPanel][kCols];  // the chunk's solved values, per column
  const int c0 = f + blockIdx.x * kCols, cols = min(kCols, m - c0);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int w = 0; w < cols; ++w)
    for (int i = threadIdx.x; i < f; i += blockDim.x)
      s_x[w * f + i] = r[(long long)(c0 + w) * m + i];
  // The chunk's diagonal block: loaded into registers during the previous chunk's update.
  constexpr int kDPer = kPanel * kPanel / kThreads;
  double dnext[kDPer];
  auto load_d = [&](int p) {
#pragma unroll
    for (int q = 0; q < kDPer; ++q) {
      const int e = threadIdx.x + q * kThreads, i = e % kPanel, k = e / kPanel;
      dnext[q] = p < f && i <= k ? r[(long long)(p + k) * m + p + i] : 0.0;
    }
  };
  auto store_d = [&] {
#pragma unroll
    for (int q = 0; q < kDPer; ++q) {
      const int e = threadIdx.x + q * kThreads, i = e % kPanel, k = e / kPanel;
      s_d[i][k] = dnext[q];
      if (i == k) s_inv[i] = 1.0 / dnext[q];
    }
  };
  load_d(0);
  store_d();
  __syncthreads();
  double(*tile)[kPanel + 1] = s_tile + 2 * warp * kPanel;  // this warp's two tiles
  constexpr int kStride = (kThreads / 32) * 32;
  for (int p = 0; p < f; p += kPanel) {
    if (warp < cols) {
      double v = s_x[warp * f + p + lane];
#pragma unroll
      for (int j = 0; j < kPanel; ++j) {
        if (lane == j) v *= s_inv[j];
        const double xj = __shfl_sync(0xffffffffu, v, j);
        if (lane > j) v -= s_d[j][lane] * xj;
      }
      s_x[warp * f + p + lane] = v;
      s_v[lane][warp] = v;
    } else if (warp < kCols) {
      s_v[lane][warp] = 0.0;
    }
    __syncthreads();
    load_d(p + kPanel);
    // Rows below the chunk, two batches of 32 per warp at a time: the chunk's block row
    // R(p + i, row) loaded along i (lane i: coalesced; one thread per row reading its own 32
    // entries would touch 32 cache lines per load instruction), turned through the
    // warp's tiles, then lane l updates rows row0 + l and row0 + kStride + l, each multiplier
    // loaded once for both.
    for (int row0 = p + kPanel + warp * 32; row0 < f; row0 += 2 * kStride) {
      double a[2][kPanel];
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int k = 0; k < kPanel; ++k) {
          const int row = row0 + h * kStride + k;
          a[h][k] = row < f ? r[(long long)row * m + p + lane] : 0.0;
        }
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int k = 0; k < kPanel; ++k) tile[h * kPanel + k][lane] = a[h][k];
      __syncwarp();
      double acc[2][kCols] = {};
#pragma unroll
      for (int i = 0; i < kPanel; ++i) {
        const double v0 = tile[lane][i], v1 = tile[kPanel + lane][i];
#pragma unroll
        for (int w = 0; w < kCols; ++w) {
          const double q = s_v[i][w];
          acc[0][w] = fma(v0, q, acc[0][w]);
          acc[1][w] = fma(v1, q, acc[1][w]);
        }
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row0 + h * kStride + lane;
#pragma unroll
        for (int w = 0; w < kCols; ++w)
          if (w < cols && row < f) s_x[w * f + row] -= acc[h][w];
      }
      __syncwarp();
    }
    __syncthreads();
    store_d();
    __syncthreads();
  }
  for (int w = 0; w < cols; ++w)
    for (int i = threadIdx.x; i < f; i += blockDim.x)
      r[(long long)(c0 + w) * m + i] = s_x[w * f + i];
}

template <int kCols>
void launch_head_solve(double* r, int m, int f, cudaStream_t s) {
  const std::size_t tiles = std::size_t(2 * kThreads / 32) * kPanel * (kPanel + 1);
  const std::size_t smem = (std::size_t(kCols) * f + tiles) * sizeof(double);
  mimorx::detail::raise_smem_limit(reinterpret_cast<const void*>(head_solve_kernel<kCols>));
  head_solve_kernel<kCols><<<(m - f + kCols - 1) / kCols, kThreads, smem, s>>>(r, m, f);
  MIMORX_CUDA_CHECK_LAUNCH();
}

// The factorisation from column `first` (a multiple of kPanel) on; the columns before it hold R
// already (their Gram data unchanged): the Gram matrix's columns from `first`, their head rows
// by head_solve_kernel, the Schur complement by one trailing update, then the chain as usual
// for the panels from `first`.
template <class F>
void factor_from(const F* b, int n, int m, int first, double* r, double* diag, int* fail,
                 double* norm2, cudaStream_t s, const double* rinv, int rinv_size, double* scratch,
                 const OrderEvent* ready, const FactorSplit* split, bool rows_kept,
                 const LllOptions& options) {
  const std::size_t f = std::size_t(first);
  const bool chained = chain_supported();
  const int gtiles = (m + kGramTile - 1) / kGramTile, g0 = first / kGramTile;
  // With the squared column norms (norm2, may be null), before the factorisation.
  // With the head's block rows kept, only the tail's block (rows from `first`).
  const int r0 = rows_kept ? g0 : 0;
  gram_mma_kernel<F>
      <<<dim3(gtiles - g0, gtiles - r0), 32 * kGramWarps, 0, s>>>(b, n, m, r, g0, norm2, r0);
  MIMORX_CUDA_CHECK_LAUNCH();
  if (first > 0) {
    // The head's block rows in one launch, then the tail's Schur complement
    // G_tt - X^T X as one trailing update over the head's k range.
    // Two columns a block (measured fastest of 2, 4, 8, 16: the update's multiply-adds per
    // block grow with the columns; the chunk's loads do not shrink).
    if (rows_kept) {
      // X is in R's rows already.
    } else if (rinv && scratch && tail_cholesky_uses_inverse(first, rinv_size)) {
      // X = R_hh^{-T} G_ht as one product with W = R_hh^{-1} (tri_inverse_cuda.cu), G_ht moved
      // out of R's block rows first.
      if (ready) ready->wait(s);
      const std::size_t rest = std::size_t(m - first);
      MIMORX_CUDA_CHECK(cudaMemcpy2DAsync(
          scratch, std::size_t(first) * sizeof(double), r + f * m, std::size_t(m) * sizeof(double),
          std::size_t(first) * sizeof(double), rest, cudaMemcpyDeviceToDevice, s));
      tri_apply_enqueue(rinv, m, first, int(rest), scratch, first, r + f * m, s, options);
    } else {
      launch_head_solve<2>(r, m, first, s);
    }
    const int t = (m - first + kGramTile - 1) / kGramTile;
    const int split =
        std::min(kSplitK, (first + kGramWarps * kGramSlab - 1) / (kGramWarps * kGramSlab));
    launch_split(split_for(reinterpret_cast<const void*>(schur_mma_kernel), split, options.split_k),
                 schur_mma_kernel, dim3(t, t), dim3(32 * kGramWarps), s, r, m, first);
    MIMORX_CUDA_CHECK_LAUNCH();
  }
  const bool lookahead = options.lookahead_factorisation;
  if (split && lookahead &&
      cholesky_lookahead_split_supported(m, first, split->col, split->reserve)) {
    cholesky_lookahead_enqueue(r, m, first, diag, fail, s, split->col);
    split->at();
    cholesky_lookahead_enqueue(r, m, split->col, diag, fail, s, 0, true, split->reserve);
    return;
  }
  if (lookahead && cholesky_lookahead_enqueue(r, m, first, diag, fail, s)) {
    if (split) split->at();
    return;
  }
  for (int p = first; p < m; p += kPanel) {
    const int nb = std::min(kPanel, m - p), rest = m - p - nb;
    const int blocks = std::max(1, (rest + kPanelCols - 1) / kPanelCols);
    launch_chained(chained, chol_panel_kernel, dim3(blocks), dim3(kPanelCols), s, r, m, p, diag,
                   fail);
    MIMORX_CUDA_CHECK_LAUNCH();
    if (rest > 0) {
      const int t = (rest + kTile - 1) / kTile;
      launch_chained(chained, syrk_update_kernel, dim3(t, t), dim3(256), s, r, (long long)m, p,
                     p + nb, rest, p + nb, r, (long long)m);
      MIMORX_CUDA_CHECK_LAUNCH();
    }
  }
  const long long de = ((long long)m - first) * kPanel;
  diag_store_kernel<<<unsigned((de + 255) / 256), 256, 0, s>>>(r, m, diag, first);
  MIMORX_CUDA_CHECK_LAUNCH();
  if (split) split->at();
}
}  // namespace

template <class F>
void gram_cholesky_enqueue(const F* b, int n, int m, double* r, double* diag, int* fail,
                           double* norm2, void* stream, const LllOptions& options) {
  factor_from<F>(b, n, m, 0, r, diag, fail, norm2, mimorx::detail::as_stream(stream), nullptr, 0,
                 nullptr, nullptr, nullptr, false, options);
}

int tail_cholesky_start(int first) { return first / kPanel * kPanel; }
bool tail_cholesky_uses_inverse(int start, int rinv_size) {
  return start > 0 && start <= rinv_size;
}

template <class F>
void tail_cholesky_enqueue(const F* b, int n, int m, int first, double* r, double* diag, int* fail,
                           double* norm2, void* stream, const double* rinv, int rinv_size,
                           double* scratch, const OrderEvent* ready, const FactorSplit* split,
                           bool head_rows_kept, const LllOptions& options) {
  factor_from<F>(b, n, m, tail_cholesky_start(first), r, diag, fail, norm2,
                 mimorx::detail::as_stream(stream), rinv, rinv_size, scratch, ready, split,
                 head_rows_kept && tail_cholesky_start(first) > 0, options);
}

template <class F>
bool gram_cholesky_cuda(const F* b, int n, int m, double* r, GramWorkspace<F>& ws, void* stream,
                        int device, const LllOptions& options) {
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const auto s = mimorx::detail::as_stream(stream);
  const std::size_t nm = std::size_t(n) * m, mm = std::size_t(m) * m;
  ensure_device(ws.b, nm, device);
  ensure_device(ws.g, mm, device);
  ensure_device(ws.diag, diag_scratch_size(m), device);
  ensure_device(ws.flag, 1, device);
  MIMORX_CUDA_CHECK(cudaMemcpyAsync(ws.b.data(), b, nm * sizeof(F), cudaMemcpyHostToDevice, s));
  MIMORX_CUDA_CHECK(cudaMemsetAsync(ws.flag.data(), 0, sizeof(int), s));
  gram_cholesky_enqueue<F>(ws.b.data(), n, m, ws.g.data(), ws.diag.data(), ws.flag.data(), nullptr,
                           stream, options);
  int fail = 0;
  MIMORX_CUDA_CHECK(
      cudaMemcpyAsync(r, ws.g.data(), mm * sizeof(double), cudaMemcpyDeviceToHost, s));
  MIMORX_CUDA_CHECK(cudaMemcpyAsync(&fail, ws.flag.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
  MIMORX_CUDA_CHECK(cudaStreamSynchronize(s));
  return fail == 0;
}

template void gram_cholesky_enqueue<float>(const float*, int, int, double*, double*, int*, double*,
                                           void*, const LllOptions&);
template void gram_cholesky_enqueue<double>(const double*, int, int, double*, double*, int*,
                                            double*, void*, const LllOptions&);
template void tail_cholesky_enqueue<float>(const float*, int, int, int, double*, double*, int*,
                                           double*, void*, const double*, int, double*,
                                           const OrderEvent*, const FactorSplit*, bool,
                                           const LllOptions&);
template void tail_cholesky_enqueue<double>(const double*, int, int, int, double*, double*, int*,
                                            double*, void*, const double*, int, double*,
                                            const OrderEvent*, const FactorSplit*, bool,
                                            const LllOptions&);
template bool gram_cholesky_cuda<float>(const float*, int, int, double*, GramWorkspace<float>&,
                                        void*, int, const LllOptions&);
template bool gram_cholesky_cuda<double>(const double*, int, int, double*, GramWorkspace<double>&,
                                         void*, int, const LllOptions&);

}  // namespace mimorx::lattice::detail
