#include "core/cuda_check.hpp"
#include "core/cuda_grid.cuh"
#include "mimorx/modem/demap.hpp"
#include "modem/modem_cuda.hpp"

namespace mimorx::modem::detail {
namespace {
constexpr int kThreads = 256;

using mimorx::detail::grid_for;

__global__ void map_kernel(Modulation mod, const std::uint8_t* bits, cf32* symbols,
                           std::int64_t n) {
  const int m = bits_per_symbol(mod);
  for (std::int64_t s = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; s < n;
       s += std::int64_t(gridDim.x) * blockDim.x) {
    symbols[s] = map_symbol(mod, bits + s * m);
  }
}

__global__ void demap_kernel(Modulation mod, const cf32* y, const float* n0, std::int64_t n0_size,
                             std::uint8_t* bits, float* llrs, std::int64_t n) {
  const int m = bits_per_symbol(mod);
  for (std::int64_t s = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; s < n;
       s += std::int64_t(gridDim.x) * blockDim.x) {
    if (llrs) {
      float l[8];
      maxlog_llrs(mod, y[s], n0[n0_size == 1 ? 0 : s], l);
      for (int k = 0; k < m; ++k) {
        llrs[s * m + k] = l[k];
        if (bits) bits[s * m + k] = l[k] < 0.f ? 1 : 0;
      }
    } else {
      hard_bits(mod, y[s], bits + s * m);
    }
  }
}
}  // namespace

void map_cuda(Modulation mod, const std::uint8_t* bits, cf32* symbols, std::int64_t n, int device,
              void* stream) {
  if (n == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  map_kernel<<<grid_for(n), kThreads, 0, mimorx::detail::as_stream(stream)>>>(mod, bits, symbols,
                                                                              n);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void demap_cuda(Modulation mod, const cf32* y, const float* n0, std::int64_t n0_size,
                std::uint8_t* bits, float* llrs, std::int64_t n, int device, void* stream) {
  if (n == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  demap_kernel<<<grid_for(n), kThreads, 0, mimorx::detail::as_stream(stream)>>>(mod, y, n0, n0_size,
                                                                                bits, llrs, n);
  MIMORX_CUDA_CHECK_LAUNCH();
}
}  // namespace mimorx::modem::detail
