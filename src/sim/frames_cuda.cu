#include "core/cuda_check.hpp"
#include "sim/frames.hpp"
#include "sim/frames_math.hpp"

namespace mimorx::sim::detail {

namespace {
__global__ void frames_kernel(std::uint64_t seed, std::int64_t first, std::int64_t count, int nt,
                              int nr, Modulation mod, float n0, FrameBatch out) {
  const int m = bits_per_symbol(mod);
  for (std::int64_t f = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; f < count;
       f += std::int64_t(gridDim.x) * blockDim.x) {
    make_frame(seed, first + f, nt, nr, mod, n0, out.bits + f * nt * m, out.h + f * nr * nt,
               out.y + f * nr);
  }
}
}  // namespace

void make_frames_cuda(std::uint64_t seed, std::int64_t first, std::int64_t count, int nt, int nr,
                      Modulation mod, float n0, FrameBatch out, int device) {
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const std::int64_t blocks = (count + 127) / 128;
  frames_kernel<<<int(blocks < 8192 ? (blocks > 0 ? blocks : 1) : 8192), 128>>>(
      seed, first, count, nt, nr, mod, n0, out);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace mimorx::sim::detail
