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

// One warp per column, presort_key's order (lll_math.hpp): per 1024 rows the lanes load 32
// rows of 32 (coalesced, all in flight), lane c then sums chunk c's squares in order from
// shared memory and lane 0 the chunks' sums in order, so the keys equal the host's bit for bit.
// (Chunks, so that the chain of dependent additions is ~n/32 + 32 long, not n.) copy (may be
// null) receives the column as read.
constexpr int kKeyWarps = 4;
template <class F>
__global__ void __launch_bounds__(32 * kKeyWarps)
    presort_keys_kernel(const F* b, int n, int m, double* keys, F* copy) {
  constexpr int kC = kPresortChunk;
  static_assert(kC == 32, "a chunk a lane");
  __shared__ F tile[kKeyWarps][kC][kC + 1];  // tile[w][u][l]: row base + 32 u + l
  __shared__ double part[kKeyWarps][kC];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int j = blockIdx.x * kKeyWarps + warp;
  if (j >= m) return;  // the whole warp
  const F* col = b + std::size_t(j) * n;
  F* out = copy ? copy + std::size_t(j) * n : nullptr;
  double s = 0;
  for (int base = 0; base < n; base += kC * kC) {
    F v[kC];
#pragma unroll
    for (int u = 0; u < kC; ++u) {
      const int i = base + kC * u + lane;
      v[u] = i < n ? col[i] : F(0);
    }
#pragma unroll
    for (int u = 0; u < kC; ++u) {
      const int i = base + kC * u + lane;
      if (out && i < n) out[i] = v[u];
      tile[warp][u][lane] = v[u];
    }
    __syncwarp();
    // Rows past n add zeros: exact, as the host's shorter last chunk.
    double c = 0;
#pragma unroll
    for (int k = 0; k < kC; ++k) {
      const double x = double(tile[warp][lane][k]);
      c = __dadd_rn(c, __dmul_rn(x, x));
    }
    part[warp][lane] = c;
    __syncwarp();
    if (lane == 0) {
#pragma unroll
      for (int k = 0; k < kC; ++k) s = __dadd_rn(s, part[warp][k]);
    }
    __syncwarp();  // tile and part free again
  }
  if (lane == 0) keys[j] = s == s ? s : HUGE_VAL;
}

// rank[j] = the number of columns that go before column j. One warp a column, the keys in
// shared memory (m doubles, dynamic), the lanes' counts added by a warp reduction (a warp a
// column spreads the work over all SMs, where a block of 32 columns used m / 32 of them).
constexpr int kRankWarps = 8;
__global__ void __launch_bounds__(32 * kRankWarps)
    presort_rank_kernel(const double* keys, int m, std::int32_t* rank) {
  extern __shared__ double sk[];
  for (int k = threadIdx.x; k < m; k += blockDim.x) sk[k] = keys[k];
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int j = blockIdx.x * kRankWarps + warp;
  if (j >= m) return;
  const double kj = sk[j];
  int r = 0;
  for (int k = lane; k < m; k += 32) r += presort_before(sk[k], k, kj, j);
  r = __reduce_add_sync(0xffffffffu, r);
  if (lane == 0) rank[j] = r;
}

// Column j of src to column rank[j] of dst0 and of dst1 (may be null): out of place, so a
// plain stream (blockIdx.x: the column; V: 16 bytes where the columns allow it).
template <class F, class V>
__global__ void gather_columns_kernel(const F* src, int n, const std::int32_t* rank, F* dst0,
                                      F* dst1) {
  constexpr int kPer = int(sizeof(V) / sizeof(F));
  const int j = blockIdx.x, nv = n / kPer;
  const std::size_t from = std::size_t(j) * n, to = std::size_t(rank[j]) * n;
  const V* sv = reinterpret_cast<const V*>(src + from);
  V* d0 = reinterpret_cast<V*>(dst0 + to);
  V* d1 = dst1 ? reinterpret_cast<V*>(dst1 + to) : nullptr;
  for (int i = threadIdx.x; i < nv; i += blockDim.x) {
    const V v = sv[i];
    d0[i] = v;
    if (d1) d1[i] = v;
  }
}

// Rows [r0, r0 + rows) of all m columns through shared memory; column j goes to rank[j]. V: the
// unit moved, F or, where a column's rows and n are multiples of it, 16 bytes (the scalar form
// pays a division per entry and one 4-byte access each).
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
void presort_columns_cuda(F* b, int n, int m, std::int32_t* rank, double* keys, void* stream,
                          F* sorted_copy, F* scratch) {
  if (m < 1) return;
  const auto s = mimorx::detail::as_stream(stream);
  const bool out_of_place = sorted_copy && scratch;
  presort_keys_kernel<F><<<unsigned((m + kKeyWarps - 1) / kKeyWarps), 32 * kKeyWarps, 0, s>>>(
      b, n, m, keys, out_of_place ? scratch : nullptr);
  MIMORX_CUDA_CHECK_LAUNCH();
  presort_rank_kernel<<<unsigned((m + kRankWarps - 1) / kRankWarps), 32 * kRankWarps,
                        std::size_t(m) * sizeof(double), s>>>(keys, m, rank);
  MIMORX_CUDA_CHECK_LAUNCH();
  constexpr int kPer = int(16 / sizeof(F));
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  if (out_of_place) {
    // The input's copy (the keys kernel's) to both: B and the caller's sorted copy.
    if (n % kPer == 0 && aligned(b) && aligned(sorted_copy) && aligned(scratch)) {
      gather_columns_kernel<F, int4>
          <<<unsigned(m), kThreads, 0, s>>>(scratch, n, rank, b, sorted_copy);
    } else {
      gather_columns_kernel<F, F>
          <<<unsigned(m), kThreads, 0, s>>>(scratch, n, rank, b, sorted_copy);
    }
    MIMORX_CUDA_CHECK_LAUNCH();
    return;
  }
  const int rows = int(std::max<std::size_t>(1, kTileBytes / (sizeof(F) * std::size_t(m))));
  const std::size_t smem = sizeof(F) * std::size_t(m) * std::min(rows, n);
  const unsigned grid = unsigned((n + rows - 1) / rows);
  // 16-byte units where every block's rows start and end on them (B from cudaMalloc is aligned).
  if (n % kPer == 0 && rows % kPer == 0 && aligned(b)) {
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

template void presort_columns_cuda<float>(float*, int, int, std::int32_t*, double*, void*, float*,
                                          float*);
template void presort_columns_cuda<double>(double*, int, int, std::int32_t*, double*, void*,
                                           double*, double*);

}  // namespace mimorx::lattice::detail
