// float32 all-swap on the GPU with T tracked: B' rebuilt as B T in float64 where the float32
// basis drifted off the input lattice (the same repair as rebuild_from_transform in
// lll_plan.cpp, which the CPU paths use; docs/lll.md, seventh session). One thread block per
// basis: the largest |B T - B'| and |B T| over the basis by a block reduction; where the
// difference exceeds 1e-6 max |B T| the block writes the rounded B T and marks the basis for the
// host's LLL re-check (kStatusRecheck).
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

}  // namespace

void keep_inputs_cuda(const float* b, float* in, std::int64_t batch, int n, int m,
                      std::int64_t stride_b, void* stream, int device) {
  if (batch == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const std::size_t row = std::size_t(n) * m * sizeof(float);
  MIMORX_CUDA_CHECK(cudaMemcpy2DAsync(in, row, b, std::size_t(stride_b) * sizeof(float), row,
                                      std::size_t(batch), cudaMemcpyDeviceToDevice,
                                      mimorx::detail::as_stream(stream)));
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
