// LllConfig::presort on one basis in device memory (the GPU-resident block method): the same
// keys, order and ranks as presort_columns on the host (lll_math.hpp), and T taken back to the
// input order afterwards. The batched all-swap kernel sorts inside itself (lll_cuda.cu).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda_check.hpp"
#include "lattice/lll_internal.hpp"
#include "lattice/lll_math.hpp"

namespace mimorx::lattice::detail {
namespace {

constexpr int kThreads = 256;
constexpr std::size_t kTileBytes = 32 * 1024;  // shared memory of one permutation tile

// One warp per column: the lanes load 32 entries at a time (coalesced) and square them, lane 0
// adds the squares in order: the operations of presort_key (lll_math.hpp) in its order, so the
// keys equal the host's bit for bit. (One thread per column read the matrix uncoalesced and kept
// 4 SMs busy at m = 1024: 135 us on the H200, for what takes a few.)
constexpr int kKeyWarps = 8;
template <class F>
__global__ void __launch_bounds__(32 * kKeyWarps)
    presort_keys_kernel(const F* b, int n, int m, double* keys) {
  __shared__ double sq[kKeyWarps][32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int j = blockIdx.x * kKeyWarps + warp;
  if (j >= m) return;  // the whole warp
  const F* col = b + std::size_t(j) * n;
  double s = 0;
  F next = lane < n ? col[lane] : F(0);
  for (int i0 = 0; i0 < n; i0 += 32) {
    const double x = double(next);
    if (i0 + 32 + lane < n) next = col[i0 + 32 + lane];  // in flight during the sum below
    sq[warp][lane] = __dmul_rn(x, x);
    __syncwarp();
    if (lane == 0) {
      const int h = min(32, n - i0);
      for (int k = 0; k < h; ++k) s = __dadd_rn(s, sq[warp][k]);
    }
    __syncwarp();
  }
  if (lane == 0) keys[j] = s == s ? s : HUGE_VAL;
}

// rank[j] = the number of columns that go before column j. A block ranks 32 columns (one per
// lane); its warps split the keys compared against and add their counts.
constexpr int kRankWarps = 8;
__global__ void __launch_bounds__(32 * kRankWarps)
    presort_rank_kernel(const double* keys, int m, std::int32_t* rank) {
  __shared__ int part[kRankWarps][32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int j = blockIdx.x * 32 + lane;
  const double kj = j < m ? keys[j] : 0.0;
  int r = 0;
  for (int k = warp; k < m; k += kRankWarps) r += presort_before(keys[k], k, kj, j);
  part[warp][lane] = r;
  __syncthreads();
  if (warp == 0 && j < m) {
    int total = 0;
    for (int w = 0; w < kRankWarps; ++w) total += part[w][lane];
    rank[j] = total;
  }
}

// Rows [r0, r0 + rows) of all m columns through shared memory; column j goes to rank[j].
template <class F>
__global__ void permute_columns_kernel(F* b, int n, int m, int rows, const std::int32_t* rank) {
  extern __shared__ __align__(16) unsigned char smem[];
  F* tile = reinterpret_cast<F*>(smem);
  const int r0 = blockIdx.x * rows, h = min(rows, n - r0);
  for (int i = threadIdx.x; i < h * m; i += blockDim.x)
    tile[i] = b[std::size_t(i / h) * n + r0 + i % h];
  __syncthreads();
  for (int i = threadIdx.x; i < h * m; i += blockDim.x)
    b[std::size_t(rank[i / h]) * n + r0 + i % h] = tile[i];
}

// Columns [c0, c0 + cols) of T: T(j, c) <- T(rank[j], c).
__global__ void unsort_rows_kernel(std::int64_t* t, int m, int cols, const std::int32_t* rank) {
  extern __shared__ __align__(16) unsigned char smem[];
  auto* tile = reinterpret_cast<std::int64_t*>(smem);
  const int c0 = blockIdx.x * cols, w = min(cols, m - c0);
  std::int64_t* tc = t + std::size_t(c0) * m;
  for (int i = threadIdx.x; i < w * m; i += blockDim.x) tile[i] = tc[i];
  __syncthreads();
  for (int i = threadIdx.x; i < w * m; i += blockDim.x) {
    const int c = i / m, j = i % m;
    tc[i] = tile[c * m + rank[j]];
  }
}

}  // namespace

template <class F>
void presort_columns_cuda(F* b, int n, int m, std::int32_t* rank, double* keys, void* stream) {
  if (m < 1) return;
  const auto s = mimorx::detail::as_stream(stream);
  presort_keys_kernel<F>
      <<<unsigned((m + kKeyWarps - 1) / kKeyWarps), 32 * kKeyWarps, 0, s>>>(b, n, m, keys);
  MIMORX_CUDA_CHECK_LAUNCH();
  presort_rank_kernel<<<unsigned((m + 31) / 32), 32 * kRankWarps, 0, s>>>(keys, m, rank);
  MIMORX_CUDA_CHECK_LAUNCH();
  const int rows = int(std::max<std::size_t>(1, kTileBytes / (sizeof(F) * std::size_t(m))));
  const std::size_t smem = sizeof(F) * std::size_t(m) * std::min(rows, n);
  permute_columns_kernel<F>
      <<<unsigned((n + rows - 1) / rows), kThreads, smem, s>>>(b, n, m, rows, rank);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void unsort_transform_cuda(std::int64_t* t, int m, const std::int32_t* rank, void* stream) {
  if (m < 1) return;
  const auto s = mimorx::detail::as_stream(stream);
  const int cols = int(std::max<std::size_t>(1, kTileBytes / (sizeof(std::int64_t) * m)));
  const std::size_t smem = sizeof(std::int64_t) * std::size_t(m) * std::min(cols, m);
  unsort_rows_kernel<<<unsigned((m + cols - 1) / cols), kThreads, smem, s>>>(t, m, cols, rank);
  MIMORX_CUDA_CHECK_LAUNCH();
}

template void presort_columns_cuda<float>(float*, int, int, std::int32_t*, double*, void*);
template void presort_columns_cuda<double>(double*, int, int, std::int32_t*, double*, void*);

}  // namespace mimorx::lattice::detail
