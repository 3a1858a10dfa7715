// The simulator's channel model on the GPU: one thread per (vector, receive antenna), as the
// i.i.d. generator (frames_cuda.cu).
#include <algorithm>

#include "core/cuda_check.hpp"
#include "sim/channel_model_math.hpp"

namespace mimorx::sim::detail {

namespace {
constexpr int kThreads = 128;

__global__ void channel_model_kernel(ChannelModelArgs a, std::uint64_t seed, std::int64_t first,
                                     std::int64_t count, int nt, int nr, Modulation mod, float n0,
                                     const std::uint8_t* bits, cf32* h, cf32* y) {
  const int m = bits_per_symbol(mod);
  for (std::int64_t t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; t < count * nr;
       t += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t v = t / nr;
    const int i = int(t - v * nr);
    channel_model_row(a, seed, first + v, nt, nr, mod, n0, bits + v * nt * m, i, h + v * nr * nt,
                      y + v * nr);
  }
}
}  // namespace

void channel_model_cuda(const ChannelModelArgs& a, std::uint64_t seed, std::int64_t first,
                        std::int64_t count, int nt, int nr, Modulation mod, float n0,
                        const std::uint8_t* bits, cf32* h, cf32* y, void* stream) {
  const int grid = int(std::clamp<std::int64_t>((count * nr + kThreads - 1) / kThreads, 1, 65536));
  channel_model_kernel<<<grid, kThreads, 0, mimorx::detail::as_stream(stream)>>>(
      a, seed, first, count, nt, nr, mod, n0, bits, h, y);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace mimorx::sim::detail
