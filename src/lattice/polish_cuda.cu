// The float64 polish of float32 bases whose rebuilt B' failed the device's re-check
// (rebuild_cuda.cu): the device's form of polish_in_float64 in lll_plan.cpp. B T in float64, the
// float64 all-swap kernel with its own T2 (lll_cuda.cu), T T2 summed in 128 bits, and the
// float64 re-check of the rounded result. A handful of bases per batch of thousands: polishing
// them here instead of on the host saves a copy each way and the host's reduction
// (docs/lll.md, "Checked float32 batches").
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda_check.hpp"
#include "lattice/lll_internal.hpp"

namespace mimorx::lattice::detail {
namespace {

constexpr int kThreads = 256;

// B T in float64 for packed bases (the polish's start): one block per basis.
__global__ void times_transform_kernel(const float* in, const std::int64_t* t, double* bt, int n,
                                       int m) {
  const std::int64_t k = blockIdx.x, nm = std::int64_t(n) * m, mm = std::int64_t(m) * m;
  const float* ink = in + k * nm;
  const std::int64_t* tk = t + k * mm;
  for (int e = threadIdx.x; e < n * m; e += blockDim.x) {
    const int i = e % n, j = e / n;
    double s = 0;
    for (int q = 0; q < m; ++q) s = fma(double(ink[q * n + i]), double(tk[j * m + q]), s);
    bt[k * nm + e] = s;
  }
}

// After the float64 reduction (B2 = B T T2 in bt, its T2 and status): where it reduced and
// T T2 fits int64 (summed in 128 bits), T <- T T2 and B' <- float32(B2), status kept
// (kStatusRecheck, for the re-check); otherwise nothing changes and the basis goes to the host.
__global__ void compose_kernel(const double* bt, const std::int64_t* t2, const std::int32_t* st2,
                               std::int64_t* tn, std::int64_t* t, float* b, std::int32_t* status,
                               int n, int m) {
  const std::int64_t k = blockIdx.x, nm = std::int64_t(n) * m, mm = std::int64_t(m) * m;
  if (st2[k] != std::int32_t(LllStatus::reduced)) {  // uniform over the block
    if (threadIdx.x == 0) status[k] = kStatusHost;
    return;
  }
  std::int64_t* tk = t + k * mm;
  const std::int64_t* t2k = t2 + k * mm;
  std::int64_t* tnk = tn + k * mm;
  bool over = false;
  for (int e = threadIdx.x; e < m * m; e += blockDim.x) {
    const int i = e % m, j = e / m;
    __int128 v = 0;
    for (int q = 0; q < m; ++q) v += (__int128)tk[q * m + i] * (__int128)t2k[j * m + q];
    over |= v > (__int128)INT64_MAX || v < -(__int128)INT64_MAX;
    tnk[e] = std::int64_t(v);
  }
  if (__syncthreads_or(over)) {  // every product read T before anyone writes it
    if (threadIdx.x == 0) status[k] = kStatusHost;
    return;
  }
  for (int e = threadIdx.x; e < m * m; e += blockDim.x) tk[e] = tnk[e];
  for (int e = threadIdx.x; e < n * m; e += blockDim.x) b[k * nm + e] = float(bt[k * nm + e]);
}

}  // namespace

bool polish_fits_cuda(int n, int m, int device) {
  return all_swap_cuda_fits(n, m, true, true, device);
}

void polish_float64_cuda(const float* in, float* b, std::int64_t* t, std::int32_t* status,
                         std::int64_t count, int n, int m, double delta, PolishWorkspace& ws,
                         void* stream, int device) {
  if (count == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const auto s = mimorx::detail::as_stream(stream);
  const std::size_t nm = std::size_t(n) * m, mm = std::size_t(m) * m;
  ensure_device(ws.bt, nm * count, device);
  ensure_device(ws.t2, mm * count, device);
  ensure_device(ws.tn, mm * count, device);
  ensure_device(ws.st2, std::size_t(count), device);
  times_transform_kernel<<<unsigned(count), kThreads, 0, s>>>(in, t, ws.bt.data(), n, m);
  MIMORX_CUDA_CHECK_LAUNCH();
  all_swap_cuda<double>(ws.bt.data(), ws.t2.data(), ws.st2.data(), count, n, m, std::int64_t(nm),
                        std::int64_t(mm), delta, default_max_iter(m), stream, device, false);
  compose_kernel<<<unsigned(count), kThreads, 0, s>>>(ws.bt.data(), ws.t2.data(), ws.st2.data(),
                                                      ws.tn.data(), t, b, status, n, m);
  MIMORX_CUDA_CHECK_LAUNCH();
  recheck_float64_cuda(b, status, count, n, m, delta, stream, device);
}

}  // namespace mimorx::lattice::detail
