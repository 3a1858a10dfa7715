// float32 reductions on the GPU with T tracked: is B' still (float32 rounding of) B T?
// - all-swap batches (small bases): B' rebuilt as B T in float64 where the float32 basis drifted
//   off the input lattice (the same repair as rebuild_from_transform in lll_plan.cpp, which the
//   CPU paths use; docs/lll.md, seventh session). One thread block per basis: the largest
//   |B T - B'| and |B T| over the basis by a block reduction; where the difference exceeds
//   1e-6 max |B T| the block writes the rounded B T and marks the basis for the host's LLL
//   re-check (kStatusRecheck).
// - the block method (one large basis): the same test with B T as a tiled product over the
//   whole grid (one thread block per 32 x 32 tile) instead of one thread block per basis.
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>

#include "core/cuda_check.hpp"
#include "lattice/lll_internal.hpp"

namespace mimorx::lattice::detail {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    rebuild_kernel(const float* in, float* b, const std::int64_t* t, std::int32_t* status, int n,
                   int m, std::int64_t stride_b, std::int64_t stride_t) {
  const std::int64_t k = blockIdx.x;
  if (status[k] != std::int32_t(LllStatus::reduced)) return;  // uniform over the block
  const float* bin = in + k * std::int64_t(n) * m;
  float* bk = b + k * stride_b;
  const std::int64_t* tk = t + k * stride_t;
  const int entries = n * m;
  // Entry e = (row e % n, column e / n) of B T, summed in float64 in a fixed order.
  auto product = [&](int e) {
    const int i = e % n, j = e / n;
    const std::int64_t* tj = tk + std::int64_t(j) * m;
    double s = 0;
    for (int q = 0; q < m; ++q) s = fma(double(bin[std::int64_t(q) * n + i]), double(tj[q]), s);
    return s;
  };
  double diff = 0, scale = 0;
  for (int e = threadIdx.x; e < entries; e += kThreads) {
    const double s = product(e);
    diff = fmax(diff, fabs(s - double(bk[e])));
    scale = fmax(scale, fabs(s));
  }
  using Reduce = cub::BlockReduce<double, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  __shared__ bool drifted;
  const double dmax = Reduce(tmp).Reduce(diff, [](double a, double c) { return fmax(a, c); });
  __syncthreads();  // tmp is reused
  const double smax = Reduce(tmp).Reduce(scale, [](double a, double c) { return fmax(a, c); });
  if (threadIdx.x == 0) drifted = dmax > 1e-6 * smax;
  __syncthreads();
  if (!drifted) return;
  for (int e = threadIdx.x; e < entries; e += kThreads) bk[e] = float(product(e));
  if (threadIdx.x == 0) status[k] = kStatusRecheck;
}

// The block method's product: one 32 x 32 tile of B T per thread block (256 threads, four
// columns each), B and T staged through shared memory 32 deep, summed in float64. Writes B T
// (n x m doubles) and the largest |B T - B'| and |B T| (non-negative doubles as ordered bits,
// atomicMax).
constexpr int kTile = 32;

__global__ void __launch_bounds__(256)
    product_kernel(const float* in, const std::int64_t* t, const float* b, int n, int m, double* bt,
                   unsigned long long* maxima) {
  __shared__ double sa[kTile][kTile + 1], st[kTile][kTile + 1];
  const int tx = threadIdx.x % kTile, ty = threadIdx.x / kTile;  // ty 0..7
  const int row0 = blockIdx.x * kTile, col0 = blockIdx.y * kTile;
  double acc[4] = {0, 0, 0, 0};
  for (int k0 = 0; k0 < m; k0 += kTile) {
    for (int s = 0; s < 4; ++s) {
      const int kk = ty + 8 * s, i = row0 + tx, q = k0 + kk, j = col0 + kk;
      sa[kk][tx] = i < n && q < m ? double(in[std::size_t(q) * n + i]) : 0.0;
      // st[q - k0][c] = T(q, col0 + c): read along q (coalesced), c = kk here
      st[tx][kk] = k0 + tx < m && j < m ? double(t[std::size_t(j) * m + k0 + tx]) : 0.0;
    }
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < kTile; ++kk) {
      const double a = sa[kk][tx];
      for (int s = 0; s < 4; ++s) acc[s] = fma(a, st[kk][ty + 8 * s], acc[s]);
    }
    __syncthreads();
  }
  double diff = 0, scale = 0;
  for (int s = 0; s < 4; ++s) {
    const int i = row0 + tx, j = col0 + ty + 8 * s;
    if (i >= n || j >= m) continue;
    const std::size_t e = std::size_t(j) * n + i;
    bt[e] = acc[s];
    diff = fmax(diff, fabs(acc[s] - double(b[e])));
    scale = fmax(scale, fabs(acc[s]));
  }
  for (int o = 16; o > 0; o >>= 1) {
    diff = fmax(diff, __shfl_xor_sync(0xffffffffu, diff, o));
    scale = fmax(scale, __shfl_xor_sync(0xffffffffu, scale, o));
  }
  if (tx == 0) {
    atomicMax(&maxima[0], static_cast<unsigned long long>(__double_as_longlong(diff)));
    atomicMax(&maxima[1], static_cast<unsigned long long>(__double_as_longlong(scale)));
  }
}

__global__ void round_to_float(const double* bt, float* b, std::size_t count) {
  const std::size_t e = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < count) b[e] = float(bt[e]);
}

}  // namespace

bool rebuild_if_drifted_cuda(const float* in, float* b, const std::int64_t* t, int n, int m,
                             Buffer<double>& scratch, void* stream, int device) {
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const std::size_t nm = std::size_t(n) * m;
  ensure_device(scratch, nm + 2, device);
  const auto s = mimorx::detail::as_stream(stream);
  double* bt = scratch.data();
  auto* maxima = reinterpret_cast<unsigned long long*>(bt + nm);
  MIMORX_CUDA_CHECK(cudaMemsetAsync(maxima, 0, 2 * sizeof(unsigned long long), s));
  const dim3 grid(unsigned((n + kTile - 1) / kTile), unsigned((m + kTile - 1) / kTile));
  product_kernel<<<grid, 256, 0, s>>>(in, t, b, n, m, bt, maxima);
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

void keep_inputs_cuda(const float* b, float* in, std::int64_t batch, int n, int m,
                      std::int64_t stride_b, void* stream, int device) {
  if (batch == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const std::size_t row = std::size_t(n) * m * sizeof(float);
  MIMORX_CUDA_CHECK(cudaMemcpy2DAsync(in, row, b, std::size_t(stride_b) * sizeof(float), row,
                                      std::size_t(batch), cudaMemcpyDeviceToDevice,
                                      mimorx::detail::as_stream(stream)));
}

namespace {
__global__ void gather_kernel(const float* src, std::int64_t stride, const std::int64_t* idx,
                              std::size_t nm, float* out) {
  const float* from = src + idx[blockIdx.x] * stride;
  float* to = out + blockIdx.x * nm;
  for (std::size_t i = threadIdx.x; i < nm; i += blockDim.x) to[i] = from[i];
}
}  // namespace

void gather_bases_cuda(const float* src, std::int64_t stride, const std::int64_t* idx,
                       std::int64_t count, std::size_t nm, float* out, void* stream, int device) {
  if (count == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  gather_kernel<<<unsigned(count), kThreads, 0, mimorx::detail::as_stream(stream)>>>(src, stride,
                                                                                     idx, nm, out);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void rebuild_from_transform_cuda(const float* in, float* b, const std::int64_t* t,
                                 std::int32_t* status, std::int64_t batch, int n, int m,
                                 std::int64_t stride_b, std::int64_t stride_t, void* stream,
                                 int device) {
  if (batch == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  rebuild_kernel<<<unsigned(batch), kThreads, 0, mimorx::detail::as_stream(stream)>>>(
      in, b, t, status, n, m, stride_b, stride_t);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace mimorx::lattice::detail
