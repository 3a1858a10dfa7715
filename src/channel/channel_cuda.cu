#include "channel/channel_cuda.hpp"
#include "channel/fading_math.hpp"
#include "core/cuda_check.hpp"
#include "core/cuda_grid.cuh"

namespace mimorx::channel::detail {
namespace {
constexpr int kThreads = 256;

using mimorx::detail::grid_for;

__global__ void g_kernel(std::uint64_t seed, std::int64_t first, std::int64_t count, int nr, int nt,
                         cf32* dst, std::int64_t stride) {
  const std::int64_t per = std::int64_t(nr) * nt;
  MIMORX_GRID_STRIDE(k, count * per) {
    const std::int64_t c = k / per;
    const int e = int(k - c * per);
    dst[c * stride + e] = fading_entry(seed, first + c, nr, nt, e % nr, e / nr);
  }
}

__global__ void kron_kernel(const cf32* g, const float* a, const float* b, std::int64_t count,
                            int nr, int nt, cf32* h, std::int64_t stride) {
  const std::int64_t per = std::int64_t(nr) * nt;
  MIMORX_GRID_STRIDE(k, count * per) {
    const std::int64_t c = k / per;
    const int e = int(k - c * per);
    h[c * stride + e] = kron_entry(g + c * per, a, b, nr, nt, e % nr, e / nr);
  }
}

__global__ void apply_kernel(const cf32* h, std::int64_t h_stride, const cf32* x,
                             std::int64_t x_stride, cf32* y, std::int64_t y_stride,
                             std::int64_t vectors, int vpc, int nr, int nt, const float* n0,
                             std::int64_t n0_size, std::uint64_t seed, std::int64_t first) {
  MIMORX_GRID_STRIDE(k, vectors * nr) {
    const std::int64_t v = k / nr;
    const int i = int(k - v * nr);
    const cf32 noise = noise_sample(seed, first + v, nr, i, n0[n0_size == 1 ? 0 : v]);
    y[v * y_stride + i] =
        received_entry(h + (v / vpc) * h_stride, x + v * x_stride, nr, nt, i, noise);
  }
}

__global__ void awgn_kernel(const cf32* x, cf32* y, std::int64_t n, const float* n0,
                            std::int64_t n0_size, std::uint64_t seed, std::int64_t first) {
  MIMORX_GRID_STRIDE(s, n) {
    y[s] = rounding::cadd(x[s], noise_sample(seed, first + s, 1, 0, n0[n0_size == 1 ? 0 : s]));
  }
}
}  // namespace

void fading_g_cuda(std::uint64_t seed, std::int64_t first, std::int64_t count, int nr, int nt,
                   cf32* dst, std::int64_t stride, int device, void* stream) {
  if (count == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  g_kernel<<<grid_for(count * nr * nt), kThreads, 0, mimorx::detail::as_stream(stream)>>>(
      seed, first, count, nr, nt, dst, stride);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void kron_cuda(const cf32* g, const float* a, const float* b, std::int64_t count, int nr, int nt,
               cf32* h, std::int64_t stride, int device, void* stream) {
  if (count == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  kron_kernel<<<grid_for(count * nr * nt), kThreads, 0, mimorx::detail::as_stream(stream)>>>(
      g, a, b, count, nr, nt, h, stride);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void apply_channel_cuda(const cf32* h, std::int64_t h_stride, const cf32* x, std::int64_t x_stride,
                        cf32* y, std::int64_t y_stride, std::int64_t vectors, int vpc, int nr,
                        int nt, const float* n0, std::int64_t n0_size, std::uint64_t seed,
                        std::int64_t first_vector, int device, void* stream) {
  if (vectors == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  apply_kernel<<<grid_for(vectors * nr), kThreads, 0, mimorx::detail::as_stream(stream)>>>(
      h, h_stride, x, x_stride, y, y_stride, vectors, vpc, nr, nt, n0, n0_size, seed, first_vector);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void add_awgn_cuda(const cf32* x, cf32* y, std::int64_t n, const float* n0, std::int64_t n0_size,
                   std::uint64_t seed, std::int64_t first, int device, void* stream) {
  if (n == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  awgn_kernel<<<grid_for(n), kThreads, 0, mimorx::detail::as_stream(stream)>>>(x, y, n, n0, n0_size,
                                                                               seed, first);
  MIMORX_CUDA_CHECK_LAUNCH();
}
}  // namespace mimorx::channel::detail
