#include "core/cuda_check.hpp"
#include "detect/common_cuda.hpp"
#include "mimorx/core/buffer.hpp"

namespace mimorx::detect::detail {
namespace {
__global__ void check_kernel(const float* h, std::int64_t hn, const float* y, std::int64_t yn,
                             const float* n0, std::int64_t nn, int* flags) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  int f = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < hn + yn + nn;
       i += stride) {
    if (i < hn) {
      if (!isfinite(h[i])) f |= 1;
    } else if (i < hn + yn) {
      if (!isfinite(y[i - hn])) f |= 2;
    } else {
      const float v = n0[i - hn - yn];
      if (!isfinite(v) || !(v > 0.f)) f |= 4;
    }
  }
  if (f) atomicOr(flags, f);
}
}  // namespace

int count_bad_values_cuda(const float* h, std::int64_t hn, const float* y, std::int64_t yn,
                          const float* n0, std::int64_t nn, int device) {
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  Buffer<int> flag = Buffer<int>::device(1, device);
  flag.fill_bytes(0);
  const std::int64_t total = hn + yn + nn;
  const int blocks = int(std::min<std::int64_t>((total + 255) / 256, 1024));
  check_kernel<<<(blocks > 0 ? blocks : 1), 256>>>(h, hn, y, yn, n0, nn, flag.data());
  MIMORX_CUDA_CHECK_LAUNCH();
  int result = 0;
  flag.copy_to_host(&result, 1);
  return result;
}
}  // namespace mimorx::detect::detail
