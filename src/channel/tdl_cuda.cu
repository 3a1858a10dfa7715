// CUDA backend of TdlChannel: the three stages of the CPU reference (processes, correlation,
// frequency response), one thread per output element, the arithmetic of tdl_math.hpp.
#include "channel/tdl_math.hpp"
#include "core/cuda_check.hpp"
#include "core/cuda_grid.cuh"

namespace mimorx::channel::detail {
namespace {
constexpr int kThreads = 256;

using mimorx::detail::grid_for;

__global__ void w_kernel(TdlArgs a, std::uint64_t seed, std::int64_t items, cf32* w) {
  const int p = a.n_rx * a.n_tx;
  MIMORX_GRID_STRIDE(x, items) {
    const int e = int(x % p), n = int((x / p) % a.taps);
    const std::int64_t bl = x / (std::int64_t(p) * a.taps);
    w[x] = tdl_w_entry(a, seed, bl / a.symbols, int(bl % a.symbols), n, e);
  }
}

__global__ void a_kernel(TdlArgs a, std::int64_t items, const cf32* w, cf32* at) {
  const int p = a.n_rx * a.n_tx;
  MIMORX_GRID_STRIDE(x, items) {
    const int e = int(x % p), n = int((x / p) % a.taps);
    at[x] = tdl_a_entry(a, w + (x - e), n, e);
  }
}

__global__ void h_kernel(TdlArgs a, std::int64_t items, const cf32* at, cf32* h,
                         std::int64_t stride) {
  const int p = a.n_rx * a.n_tx;
  MIMORX_GRID_STRIDE(x, items) {
    const int e = int(x % p);
    const std::int64_t m = x / p;  // matrix (b * symbols + l) * n_sc + k
    const std::int64_t bl = m / a.n_sc;
    h[m * stride + e] = tdl_h_entry(a, at + bl * a.taps * p, int(m % a.n_sc), e);
  }
}
}  // namespace

void tdl_cuda(const TdlArgs& a, std::uint64_t seed, std::int64_t slots, cf32* w, cf32* at, cf32* h,
              std::int64_t h_stride, int device, void* stream) {
  if (slots == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const cudaStream_t s = mimorx::detail::as_stream(stream);
  const std::int64_t p = std::int64_t(a.n_rx) * a.n_tx;
  const std::int64_t blocks = slots * a.symbols;
  const std::int64_t tap_items = blocks * a.taps * p, h_items = blocks * a.n_sc * p;
  w_kernel<<<grid_for(tap_items), kThreads, 0, s>>>(a, seed, tap_items, w);
  MIMORX_CUDA_CHECK_LAUNCH();
  a_kernel<<<grid_for(tap_items), kThreads, 0, s>>>(a, tap_items, w, at);
  MIMORX_CUDA_CHECK_LAUNCH();
  h_kernel<<<grid_for(h_items), kThreads, 0, s>>>(a, h_items, at, h, h_stride);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace mimorx::channel::detail
