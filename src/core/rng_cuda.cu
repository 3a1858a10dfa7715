#include "core/cuda_check.hpp"
#include "core/cuda_grid.cuh"
#include "core/rng_cuda.hpp"
#include "mimorx/core/rng.hpp"

namespace mimorx::rng::detail {

namespace {
__global__ void uniform_kernel(std::uint64_t seed, std::uint64_t stream, float* out, std::int64_t n,
                               std::uint64_t offset) {
  for (std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; k < n;
       k += std::int64_t(gridDim.x) * blockDim.x) {
    out[k] = uniform_at(seed, stream, offset + std::uint64_t(k));
  }
}
__global__ void gaussian_kernel(std::uint64_t seed, std::uint64_t stream, float* out,
                                std::int64_t n, std::uint64_t offset) {
  for (std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; k < n;
       k += std::int64_t(gridDim.x) * blockDim.x) {
    out[k] = gaussian_at(seed, stream, offset + std::uint64_t(k));
  }
}
using mimorx::detail::grid_for;
}  // namespace

void fill_uniform_cuda(std::uint64_t seed, std::uint64_t stream, float* out, std::int64_t n,
                       std::uint64_t offset, int device) {
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  uniform_kernel<<<grid_for(n), 256>>>(seed, stream, out, n, offset);
  MIMORX_CUDA_CHECK_LAUNCH();
  MIMORX_CUDA_CHECK(cudaDeviceSynchronize());
}

void fill_gaussian_cuda(std::uint64_t seed, std::uint64_t stream, float* out, std::int64_t n,
                        std::uint64_t offset, int device) {
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  gaussian_kernel<<<grid_for(n), 256>>>(seed, stream, out, n, offset);
  MIMORX_CUDA_CHECK_LAUNCH();
  MIMORX_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace mimorx::rng::detail
