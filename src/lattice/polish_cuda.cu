// The float64 polish of float32 bases whose rebuilt B' failed the device's re-check
// (rebuild_cuda.cu): the device's form of polish_in_float64 in lll_plan.cpp. B T in float64, the
// float64 all-swap kernel with its own T2 (lll_cuda.cu), T T2 summed in 128 bits, and the
// float64 re-check of the rounded result. A handful of bases per batch of thousands: polishing
// them here instead of on the host saves a copy each way and the host's reduction
// (docs/lll.md, "The float32 lattice check").
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda_check.hpp"
#include "lattice/lll_internal.hpp"

namespace mimorx::lattice::detail {
namespace {

constexpr int kThreads = 256;

// The kernels below take one thread per entry over the whole packed batch: a polish has a
// handful of bases, and one thread block per basis would leave them latency-bound on a handful
// of SMs while the others idle.
__device__ __forceinline__ std::int64_t entry_index() {
  return std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}

unsigned blocks_for(std::int64_t entries) { return unsigned((entries + kThreads - 1) / kThreads); }

// B T in float64 for packed bases (the polish's start), summed over q in order.
__global__ void times_transform_kernel(const float* in, const std::int64_t* t, double* bt,
                                       std::int64_t count, int n, int m) {
  const std::int64_t nm = std::int64_t(n) * m, g = entry_index();
  if (g >= count * nm) return;
  const std::int64_t k = g / nm;
  const int e = int(g % nm), i = e % n, j = e / n;
  const float* ink = in + k * nm;
  const std::int64_t* tj = t + k * std::int64_t(m) * m + std::int64_t(j) * m;
  double s = 0;
  for (int q = 0; q < m; ++q) s = fma(double(ink[std::int64_t(q) * n + i]), double(tj[q]), s);
  bt[g] = s;
}

// T T2 summed in 128 bits into tn, for the bases the float64 reduction reduced (st2); a product
// outside int64 marks its basis (st2 <- precision_loss; every writer stores the same value).
__global__ void compose_transform_kernel(const std::int64_t* t, const std::int64_t* t2,
                                         std::int32_t* st2, std::int64_t* tn, std::int64_t count,
                                         int m) {
  const std::int64_t mm = std::int64_t(m) * m, g = entry_index();
  if (g >= count * mm) return;
  const std::int64_t k = g / mm;
  if (st2[k] != std::int32_t(LllStatus::reduced)) return;
  const int e = int(g % mm), i = e % m, j = e / m;
  const std::int64_t* tk = t + k * mm;
  const std::int64_t* t2j = t2 + k * mm + std::int64_t(j) * m;
  __int128 v = 0;
  for (int q = 0; q < m; ++q) v += (__int128)tk[std::int64_t(q) * m + i] * (__int128)t2j[q];
  if (v > (__int128)INT64_MAX || v < -(__int128)INT64_MAX)
    st2[k] = std::int32_t(LllStatus::precision_loss);
  tn[g] = std::int64_t(v);
}

// Where the float64 reduction reduced and T T2 fits int64: T <- T T2 and B' <- float32(B2),
// status kept (kStatusRecheck, for the re-check); otherwise nothing changes and the basis goes
// to the host (kStatusHost). One thread per entry of the larger of B and T.
__global__ void finish_polish_kernel(const double* bt, const std::int64_t* tn,
                                     const std::int32_t* st2, std::int64_t* t, float* b,
                                     std::int32_t* status, std::int64_t count, int n, int m) {
  const std::int64_t nm = std::int64_t(n) * m, mm = std::int64_t(m) * m;
  const std::int64_t per = nm > mm ? nm : mm, g = entry_index();
  if (g >= count * per) return;
  const std::int64_t k = g / per, e = g % per;
  if (st2[k] != std::int32_t(LllStatus::reduced)) {
    if (e == 0) status[k] = kStatusHost;
    return;
  }
  if (e < mm) t[k * mm + e] = tn[k * mm + e];
  if (e < nm) b[k * nm + e] = float(bt[k * nm + e]);
}
}  // namespace

bool polish_fits_cuda(int n, int m, int device, const LllOptions& options) {
  return all_swap_cuda_fits(n, m, true, true, device, options);
}

void polish_float64_cuda(const float* in, float* b, std::int64_t* t, std::int32_t* status,
                         std::int64_t count, int n, int m, double delta, PolishWorkspace& ws,
                         void* stream, int device, const LllOptions& options) {
  if (count == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const auto s = mimorx::detail::as_stream(stream);
  const std::size_t nm = std::size_t(n) * m, mm = std::size_t(m) * m;
  ensure_device(ws.bt, nm * count, device);
  ensure_device(ws.t2, mm * count, device);
  ensure_device(ws.tn, mm * count, device);
  ensure_device(ws.st2, std::size_t(count), device);
  const std::int64_t nme = count * std::int64_t(nm), mme = count * std::int64_t(mm);
  times_transform_kernel<<<blocks_for(nme), kThreads, 0, s>>>(in, t, ws.bt.data(), count, n, m);
  MIMORX_CUDA_CHECK_LAUNCH();
  all_swap_cuda<double>(ws.bt.data(), ws.t2.data(), ws.st2.data(), count, n, m, std::int64_t(nm),
                        std::int64_t(mm), delta, default_max_iter(m), stream, device, false,
                        nullptr, options);
  compose_transform_kernel<<<blocks_for(mme), kThreads, 0, s>>>(t, ws.t2.data(), ws.st2.data(),
                                                                ws.tn.data(), count, m);
  MIMORX_CUDA_CHECK_LAUNCH();
  finish_polish_kernel<<<blocks_for(std::max(nme, mme)), kThreads, 0, s>>>(
      ws.bt.data(), ws.tn.data(), ws.st2.data(), t, b, status, count, n, m);
  MIMORX_CUDA_CHECK_LAUNCH();
  recheck_float64_cuda(b, status, count, n, m, delta, stream, device, options);
}

}  // namespace mimorx::lattice::detail
