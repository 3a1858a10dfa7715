// CUDA backend of ChannelEstimator: one thread per output element of each stage of
// estimate_math.hpp (the CPU reference runs the same functions in the same order per element).
#include "core/cuda_check.hpp"
#include "core/cuda_grid.cuh"
#include "nr/estimate_cuda.hpp"

namespace mimorx::nr::detail {
namespace {
constexpr int kThreads = 256;

using mimorx::detail::grid_for;

// x = (b * D * Qs + q) * n_rx + r.
__global__ void ls_kernel(EstimateArgs a, const cf32* y, std::int64_t items, cf32* g) {
  const std::int64_t per_slot = std::int64_t(a.dmrs_symbols) * a.slot_pilots;
  const std::int64_t grid = std::int64_t(kSlotSymbols) * a.n_sc * a.n_rx;
  MIMORX_GRID_STRIDE(x, items) {
    const int r = int(x % a.n_rx);
    const std::int64_t bq = x / a.n_rx;
    g[x] = ls_entry(a, y + (bq / per_slot) * grid, int(bq % per_slot), r);
  }
}

// x = (b * D * Qs + q) * n_rx + r.
__global__ void cdm_kernel(EstimateArgs a, const cf32* g, std::int64_t items, cf32* c) {
  const std::int64_t per_slot = std::int64_t(a.dmrs_symbols) * a.slot_pilots;
  MIMORX_GRID_STRIDE(x, items) {
    const int r = int(x % a.n_rx);
    const std::int64_t bq = x / a.n_rx;
    c[x] = cdm_entry(a, g + (bq / per_slot) * per_slot * a.n_rx, int(bq % per_slot), r);
  }
}

// x = ((b * D + d) * n_sc + k) * layers * n_rx + p * n_rx + r.
__global__ void freq_kernel(EstimateArgs a, const cf32* g, std::int64_t items, cf32* f) {
  const std::int64_t g_slot = std::int64_t(a.dmrs_symbols) * a.slot_pilots * a.n_rx;
  const int per = a.layers * a.n_rx;
  MIMORX_GRID_STRIDE(x, items) {
    const int e = int(x % per);
    const std::int64_t bdk = x / per;
    const int k = int(bdk % a.n_sc);
    const std::int64_t bd = bdk / a.n_sc;
    f[x] = freq_entry(a, g + (bd / a.dmrs_symbols) * g_slot, int(bd % a.dmrs_symbols), k,
                      e / a.n_rx, e % a.n_rx);
  }
}

// x = ((b * 14 + l) * n_sc + k) * layers * n_rx + e.
__global__ void time_kernel(EstimateArgs a, const cf32* f, std::int64_t items, cf32* h,
                            std::int64_t stride) {
  const int per = a.layers * a.n_rx;
  const std::int64_t f_slot = std::int64_t(a.dmrs_symbols) * a.n_sc * per;
  MIMORX_GRID_STRIDE(x, items) {
    const int e = int(x % per);
    const std::int64_t m = x / per;  // matrix (b * 14 + l) * n_sc + k
    const std::int64_t bl = m / a.n_sc;
    h[m * stride + e] =
        time_entry(a, f + (bl / kSlotSymbols) * f_slot, int(bl % kSlotSymbols), int(m % a.n_sc), e);
  }
}

// x = ((b * D + d) * noise_rows + u) * n_rx + r.
__global__ void partial_kernel(EstimateArgs a, const cf32* y, const cf32* g, std::int64_t items,
                               double* partial) {
  const std::int64_t g_slot = std::int64_t(a.dmrs_symbols) * a.slot_pilots * a.n_rx;
  const std::int64_t grid = std::int64_t(kSlotSymbols) * a.n_sc * a.n_rx;
  MIMORX_GRID_STRIDE(x, items) {
    const int r = int(x % a.n_rx);
    const std::int64_t bdu = x / a.n_rx;
    const int u = int(bdu % a.noise_rows);
    const std::int64_t bd = bdu / a.noise_rows, b = bd / a.dmrs_symbols;
    partial[x] = noise_partial(a, y + b * grid, g + b * g_slot, int(bd % a.dmrs_symbols), u, r);
  }
}

__global__ void noise_kernel(EstimateArgs a, const double* partial, std::int64_t slots,
                             float* noise) {
  const std::int64_t per = std::int64_t(a.dmrs_symbols) * a.noise_rows * a.n_rx;
  MIMORX_GRID_STRIDE(b, slots) noise[b] = noise_total(a, partial + b * per);
}
}  // namespace

void estimate_cuda(const EstimateArgs& a, const cf32* y, std::int64_t slots, cf32* g, cf32* c,
                   cf32* f, double* partial, cf32* h, std::int64_t h_stride, float* noise,
                   int device, void* stream) {
  if (slots == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const cudaStream_t s = mimorx::detail::as_stream(stream);
  const std::int64_t d = a.dmrs_symbols, per = std::int64_t(a.layers) * a.n_rx;
  const std::int64_t g_items = slots * d * a.slot_pilots * a.n_rx;
  const std::int64_t f_items = slots * d * a.n_sc * per;
  const std::int64_t h_items = slots * kSlotSymbols * a.n_sc * per;
  const std::int64_t p_items = slots * d * a.noise_rows * a.n_rx;
  ls_kernel<<<grid_for(g_items), kThreads, 0, s>>>(a, y, g_items, g);
  MIMORX_CUDA_CHECK_LAUNCH();
  cdm_kernel<<<grid_for(g_items), kThreads, 0, s>>>(a, g, g_items, c);
  MIMORX_CUDA_CHECK_LAUNCH();
  freq_kernel<<<grid_for(f_items), kThreads, 0, s>>>(a, c, f_items, f);
  MIMORX_CUDA_CHECK_LAUNCH();
  time_kernel<<<grid_for(h_items), kThreads, 0, s>>>(a, f, h_items, h, h_stride);
  MIMORX_CUDA_CHECK_LAUNCH();
  partial_kernel<<<grid_for(p_items), kThreads, 0, s>>>(a, y, g, p_items, partial);
  MIMORX_CUDA_CHECK_LAUNCH();
  noise_kernel<<<grid_for(slots), kThreads, 0, s>>>(a, partial, slots, noise);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace mimorx::nr::detail
