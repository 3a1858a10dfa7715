// Batched QR on the GPU: a group of G lanes per problem (G = model rows rounded up to a power
// of two, at most 32), so that 8x8 real problems put four problems in a warp and every step
// of the Gram-Schmidt recursion is spread over the rows. Lane l owns rows l, l + G, ... of A
// and of R (shared memory, one slice per problem); sums over rows are butterfly reductions
// with __shfl_xor_sync. The arithmetic is qr_problem(), the same source the CPU runs with
// SerialRows{G}, hence bit-identical results. (A first version with one thread per problem
// took 64 us for 8400 8x8 MRVD problems on an H100: 263 warps, each a long dependent chain.)
#include <algorithm>
#include <atomic>
#include <string>

#include "core/cuda_check.hpp"
#include "linalg/qr_internal.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::linalg::detail {
namespace {

MIMORX_HD float shfl_xor(unsigned mask, float v, int o) {
#if defined(__CUDA_ARCH__)
  return __shfl_xor_sync(mask, v, o);
#else
  (void)mask, (void)o;
  return v;  // never used on the host
#endif
}
MIMORX_HD cf32 shfl_xor(unsigned mask, cf32 v, int o) {
  return {shfl_xor(mask, v.re, o), shfl_xor(mask, v.im, o)};
}

// Rows owned by one lane of a G-lane group; rowsum in SerialRows' order.
struct LaneRows {
  int lane = 0, g = 1;
  unsigned mask = 0xffffffffu;
  MIMORX_HD int first() const { return lane; }
  MIMORX_HD int step() const { return g; }
  MIMORX_HD bool owns(int i) const { return (i & (g - 1)) == lane; }
  template <class T, class F>
  MIMORX_HD T rowsum(int m, F f) const {
    T p = hd::zero<T>();
    for (int r = lane; r < m; r += g) p = hd::add(p, f(r));
    for (int o = g >> 1; o >= 1; o >>= 1) p = hd::add(p, shfl_xor(mask, p, o));
    return p;
  }
};

// Shared-memory slice of one problem, in elements of T: padded so that the groups of a warp
// start in different banks.
MIMORX_HD int slice(int elems, int g) { return ((elems + 31) / 32) * 32 + (g < 32 ? g : 0); }

template <class T>
__global__ void __launch_bounds__(128) qr_kernel(QrArgs a, int g) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int t = int(threadIdx.x);
  const int group = t / g;
  const int per_block = int(blockDim.x) / g;
  const std::int64_t c = std::int64_t(blockIdx.x) * per_block + group;
  if (c >= a.channels) return;  // whole groups leave together
  LaneRows ex;
  ex.lane = t & (g - 1);
  ex.g = g;
  ex.mask = g == 32 ? 0xffffffffu : ((1u << g) - 1u) << ((t & 31) & ~(g - 1));
  const int sa = slice(a.m * a.n, g), sr = slice(a.n * a.n, g);
  T* wa = reinterpret_cast<T*>(smem) + std::size_t(group) * sa;
  T* wr = reinterpret_cast<T*>(smem) + std::size_t(per_block) * sa + std::size_t(group) * sr;
  float* fbase =
      reinterpret_cast<float*>(reinterpret_cast<T*>(smem) + std::size_t(per_block) * (sa + sr));
  const int es = int(blockDim.x);
  float* wn = fbase + t;
  int* wp = reinterpret_cast<int*>(fbase + std::size_t(a.n) * es) + t;
  qr_problem<T>(ex, a, c, wa, wr, wp, wn, es);
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
  const int g = qr_group_size(a.m);
  const std::size_t per_problem =
      std::size_t(slice(a.m * a.n, g) + slice(a.n * a.n, g)) * sizeof(T) +
      std::size_t(g) * a.n * (sizeof(float) + sizeof(int));
  const std::size_t limit = std::size_t(optin_smem(device));
  int problems = int(std::min<std::size_t>(128 / g, limit / per_problem));
  if (problems < 1) {
    throw Unsupported("QrPlan: a " + std::to_string(a.m) + "x" + std::to_string(a.n) +
                      " problem needs " + std::to_string(per_problem) +
                      " bytes of shared memory, more than this GPU's " + std::to_string(limit));
  }
  // Small batches: fewer problems per block so that every SM gets blocks.
  const int sms = sm_count(device);
  while (problems * g > 32 && problems > 1 && (a.channels + problems - 1) / problems < 2 * sms)
    problems /= 2;
  const std::size_t bytes = per_problem * std::size_t(problems);
  if (bytes > 48 * 1024) {
    MIMORX_CUDA_CHECK(cudaFuncSetAttribute(
        qr_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  }
  const std::int64_t blocks = (a.channels + problems - 1) / problems;
  qr_kernel<T><<<unsigned(blocks), unsigned(problems * g), bytes, stream>>>(a, g);
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
