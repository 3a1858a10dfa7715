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
// 4 SMs busy at m = 1024: 135 us on the H200, for what takes a few.) The lanes load kKeyGroup
// rows of 32 ahead, all in flight together: one row ahead, every step waited for a load's
// latency (16 us at 1024 x 1024 on the H100; lane 0's chain of additions is ~4).
constexpr int kKeyWarps = 8;
constexpr int kKeyGroup = 8;
template <class F>
__global__ void __launch_bounds__(32 * kKeyWarps)
    presort_keys_kernel(const F* b, int n, int m, double* keys) {
  __shared__ double sq[kKeyWarps][kKeyGroup * 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int j = blockIdx.x * kKeyWarps + warp;
  if (j >= m) return;  // the whole warp
  const F* col = b + std::size_t(j) * n;
  constexpr int kSpan = kKeyGroup * 32;
  double s = 0;
  F next[kKeyGroup];
  auto fetch = [&](int g0) {
#pragma unroll
    for (int u = 0; u < kKeyGroup; ++u) {
      const int i = g0 + u * 32 + lane;
      next[u] = i < n ? col[i] : F(0);
    }
  };
  fetch(0);
  for (int g0 = 0; g0 < n; g0 += kSpan) {
#pragma unroll
    for (int u = 0; u < kKeyGroup; ++u) {
      const double x = double(next[u]);
      sq[warp][u * 32 + lane] = __dmul_rn(x, x);
    }
    if (g0 + kSpan < n) fetch(g0 + kSpan);  // in flight during the sum below
    __syncwarp();
    if (lane == 0) {
      const int h = min(kSpan, n - g0);
      if (h == kSpan) {
        // A fixed trip count: the loads leave the chain of additions.
#pragma unroll
        for (int k = 0; k < kSpan; ++k) s = __dadd_rn(s, sq[warp][k]);
      } else {
        for (int k = 0; k < h; ++k) s = __dadd_rn(s, sq[warp][k]);
      }
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

// Rows [r0, r0 + rows) of all m columns through shared memory; column j goes to rank[j]. V: the
// unit moved, F or, where a column's rows and n are multiples of it, 16 bytes (the scalar form
// took 17 us for a 1024 x 1024 float basis: a division per entry and one 4-byte access each).
template <class F, class V>
__global__ void permute_columns_kernel(F* b, int n, int m, int rows, const std::int32_t* rank) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int kPer = int(sizeof(V) / sizeof(F));
  constexpr int kUnroll = 4;
  V* tile = reinterpret_cast<V*>(smem);
  const int r0 = blockIdx.x * rows, h = min(rows, n - r0) / kPer, nv = n / kPer;
  const int total = h * m;
  V* bv = reinterpret_cast<V*>(b) + r0 / kPer;
  for (int i0 = threadIdx.x; i0 < total; i0 += kUnroll * blockDim.x) {
    V v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {  // the loads first, all in flight
      const int i = i0 + u * blockDim.x;
      if (i < total) v[u] = bv[std::size_t(i / h) * nv + i % h];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (i0 + u * int(blockDim.x) < total) tile[i0 + u * blockDim.x] = v[u];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < total; i += blockDim.x)
    bv[std::size_t(rank[i / h]) * nv + i % h] = tile[i];
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
  const unsigned grid = unsigned((n + rows - 1) / rows);
  constexpr int kPer = int(16 / sizeof(F));
  // 16-byte units where every block's rows start and end on them (B from cudaMalloc is aligned).
  if (n % kPer == 0 && rows % kPer == 0 && reinterpret_cast<std::uintptr_t>(b) % 16 == 0) {
    permute_columns_kernel<F, int4><<<grid, kThreads, smem, s>>>(b, n, m, rows, rank);
  } else {
    permute_columns_kernel<F, F><<<grid, kThreads, smem, s>>>(b, n, m, rows, rank);
  }
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
