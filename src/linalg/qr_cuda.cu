// Batched QR on the GPU: one problem per thread, a block's problems interleaved in shared
// memory (element e of thread t at [e * threads + t], so a warp touching the same element of
// its 32 matrices hits 32 different banks). The arithmetic is qr_problem(), the same source
// the CPU runs, hence bit-identical results.
#include <algorithm>
#include <atomic>
#include <string>

#include "core/cuda_check.hpp"
#include "linalg/qr_internal.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::linalg::detail {
namespace {

template <class T>
__global__ void __launch_bounds__(128) qr_kernel(QrArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int es = int(blockDim.x);
  const int t = int(threadIdx.x);
  const std::int64_t c = std::int64_t(blockIdx.x) * blockDim.x + t;
  if (c >= a.channels) return;
  T* base = reinterpret_cast<T*>(smem);
  T* wa = base + t;
  T* wr = base + std::size_t(a.m) * a.n * es + t;
  float* fbase = reinterpret_cast<float*>(base + std::size_t(a.m * a.n + a.n * a.n) * es);
  float* wn = fbase + t;
  int* wp = reinterpret_cast<int*>(fbase + std::size_t(a.n) * es) + t;
  qr_problem<T>(a, c, wa, wr, wp, wn, es);
}

// Device attributes, cached: a run of a small batch is a few microseconds of GPU time and
// host work between the caller's timing events and the launch would count in it.
int cached_attribute(cudaDeviceAttr attr, int slot, int device) {
  static std::atomic<int> cache[2][64];
  if (device < 0 || device >= 64) {
    int v = 0;
    MIMORX_CUDA_CHECK(cudaDeviceGetAttribute(&v, attr, device));
    return v;
  }
  int v = cache[slot][device].load(std::memory_order_relaxed);
  if (v == 0) {
    MIMORX_CUDA_CHECK(cudaDeviceGetAttribute(&v, attr, device));
    cache[slot][device].store(v, std::memory_order_relaxed);
  }
  return v;
}
int optin_smem(int device) {
  return cached_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, 0, device);
}
int sm_count(int device) { return cached_attribute(cudaDevAttrMultiProcessorCount, 1, device); }

template <class T>
void launch(const QrArgs& a, int device, cudaStream_t stream) {
  const std::size_t per_thread =
      std::size_t(a.m * a.n + a.n * a.n) * sizeof(T) + std::size_t(a.n) * (sizeof(float) + sizeof(int));
  const std::size_t limit = std::size_t(optin_smem(device));
  int threads = int(std::min<std::size_t>(128, limit / per_thread));
  if (threads < 1) {
    throw Unsupported("QrPlan: a " + std::to_string(a.m) + "x" + std::to_string(a.n) +
                      " problem needs " + std::to_string(per_thread) +
                      " bytes of shared memory, more than this GPU's " + std::to_string(limit));
  }
  // Small batches: fewer threads per block so that every SM gets blocks (measured: 8400
  // problems in 128-thread blocks left half of an H100's 132 SMs idle).
  const int sms = sm_count(device);
  while (threads > 32 && (a.channels + threads - 1) / threads < 2 * sms) threads /= 2;
  if (threads >= 32) threads -= threads % 32;
  const std::size_t bytes = per_thread * std::size_t(threads);
  if (bytes > 48 * 1024) {
    MIMORX_CUDA_CHECK(
        cudaFuncSetAttribute(qr_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  }
  const std::int64_t blocks = (a.channels + threads - 1) / threads;
  qr_kernel<T><<<unsigned(blocks), unsigned(threads), bytes, stream>>>(a);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace

void qr_run_cuda(const QrArgs& args, int device, void* stream) {
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  if (args.model == QrModel::complex) {
    launch<cf32>(args, device, mimorx::detail::as_stream(stream));
  } else {
    launch<float>(args, device, mimorx::detail::as_stream(stream));
  }
}

}  // namespace mimorx::linalg::detail
