// ZF / MMSE on the GPU in two kernels:
//  1. prepare: one thread per channel (or per vector slot, see LinearArgs) builds W and the
//     per-stream noise terms with linear_prepare(), work arrays interleaved in shared memory;
//  2. detect: one thread per received vector reads its slot's W (the vectors of a coherence
//     block are consecutive threads, so the reads are broadcasts served by L1), equalises and
//     demaps with linear_vector().
// The channel-level work is thus done once per channel and reused across the block.
// Where every vector has its own channel (vectors_per_channel = 1) and the shape is one of the
// compiled ones, a single fused kernel does both per thread with the work arrays in registers
// (nr, nt and the kind compile-time, so every work index is a constant): the shared-memory work
// arrays of prepare_kernel (hundreds of bytes a thread) would limit it to a few warps per SM.
#include <algorithm>
#include <atomic>
#include <string>

#include "core/cuda_check.hpp"
#include "detect/linear_internal.hpp"
#include "detect/linear_math.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::detect::detail {
namespace {

__global__ void __launch_bounds__(128) prepare_kernel(LinearArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int es = int(blockDim.x);
  const int t = int(threadIdx.x);
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + t;
  const std::int64_t items = a.slot_per_vector ? a.vectors : a.channels;
  if (i >= items) return;
  std::int64_t c = i;
  float n0;
  if (a.slot_per_vector) {
    c = i / a.vpc;
    const std::int64_t first = c * a.vpc;
    n0 = a.n0[i];
    if (i != first && n0 == a.n0[first]) return;  // shares the block's first slot
  } else {
    n0 = a.n0[a.n0_per_vector ? i * a.vpc : 0];
  }
  const int work = linear_work_cf32(a.mmse, a.nr, a.nt);
  cf32* wk = reinterpret_cast<cf32*>(smem) + t;
  float* nrm = reinterpret_cast<float*>(reinterpret_cast<cf32*>(smem) + std::size_t(work) * es) + t;
  int* perm = reinterpret_cast<int*>(nrm - t + std::size_t(a.nt) * es) + t;
  linear_prepare(a.mmse, a.h + c * a.h_stride, a.nr, a.nt, n0, wk, nrm, perm, es,
                 a.w + i * a.nt * a.nr, a.d + i * a.nt);
}

// Copies a block's staged outputs (rows of `row` values per thread, see detect_kernel) to
// their contiguous range.
__device__ void write_staged(const LinearArgs& a, const float* lsh, const std::uint8_t* bsh,
                             int row, int pv, std::int64_t v0) {
  __syncthreads();
  const std::int64_t left = a.vectors - v0;
  const int nv = left < std::int64_t(blockDim.x) ? int(left) : int(blockDim.x);
  for (int e = int(threadIdx.x); e < nv * pv; e += int(blockDim.x)) {
    const int u = e / pv, k = e - u * pv;
    if (a.llrs) a.llrs[v0 * pv + e] = lsh[u * row + k];
    if (a.bits) a.bits[v0 * pv + e] = bsh[u * row + k];
  }
}

// One thread per vector. With `stage`, a block's LLRs and bits are first written to shared
// memory (per-thread rows padded to an odd length so the 32 threads of a warp hit 32 banks)
// and then copied out as one contiguous, coalesced range: a thread's own output is nt*m
// consecutive values, so direct stores would have each warp instruction touch 32 lines.
// kMod is the modulation as a compile-time constant: the demapper's loops over levels and
// bits then unroll and its small arrays stay in registers (as a runtime value the kernel takes
// about twice as long; docs/linear.md).
template <int kMod>
__global__ void __launch_bounds__(256) detect_kernel(LinearArgs a, int stage) {
  const Modulation mod = Modulation(kMod);
  extern __shared__ __align__(16) unsigned char smem[];
  const int t = int(threadIdx.x);
  const std::int64_t v0 = std::int64_t(blockIdx.x) * blockDim.x;
  const std::int64_t v = v0 + t;
  const int pv = a.nt * bits_per_symbol(mod);
  const int row = pv + 1;
  float* lsh = reinterpret_cast<float*>(smem);
  std::uint8_t* bsh = reinterpret_cast<std::uint8_t*>(lsh + std::size_t(blockDim.x) * row);
  if (v < a.vectors) {
    const std::int64_t c = v / a.vpc;
    const float n0 = a.n0[a.n0_per_vector ? v : 0];
    std::int64_t slot = c;
    if (a.slot_per_vector) slot = n0 == a.n0[c * a.vpc] ? c * a.vpc : v;
    float* l = a.llrs ? (stage ? lsh + t * row : a.llrs + v * pv) : nullptr;
    std::uint8_t* b = a.bits ? (stage ? bsh + t * row : a.bits + v * pv) : nullptr;
    linear_vector(a.mmse, mod, a.w + slot * a.nt * a.nr, a.d + slot * a.nt, a.y + v * a.y_stride,
                  a.nr, a.nt, n0, b, l);
  }
  if (stage) write_staged(a, lsh, bsh, row, pv, v0);
}

// vectors_per_channel = 1: prepare and detect in one thread, work arrays in registers.
template <bool kMmse, int kNr, int kNt, int kMod>
__global__ void __launch_bounds__(128) fused_kernel(LinearArgs a, int stage) {
  constexpr Modulation mod = Modulation(kMod);
  constexpr int pv = kNt * kMod, row = pv + 1;
  extern __shared__ __align__(16) unsigned char smem[];
  const int t = int(threadIdx.x);
  const std::int64_t v0 = std::int64_t(blockIdx.x) * blockDim.x;
  const std::int64_t v = v0 + t;
  float* lsh = reinterpret_cast<float*>(smem);
  std::uint8_t* bsh = reinterpret_cast<std::uint8_t*>(lsh + std::size_t(blockDim.x) * row);
  if (v < a.vectors) {
    const float n0 = a.n0[a.n0_per_vector ? v : 0];
    cf32 wk[((kMmse ? kNr + kNt : kNr) + 2 * kNt) * kNt];
    float nrm[kNt], d[kNt];
    int perm[kNt];
    cf32 w[kNt * kNr];
    linear_prepare(kMmse, a.h + v * a.h_stride, kNr, kNt, n0, wk, nrm, perm, 1, w, d);
    float* l = a.llrs ? (stage ? lsh + t * row : a.llrs + v * pv) : nullptr;
    std::uint8_t* b = a.bits ? (stage ? bsh + t * row : a.bits + v * pv) : nullptr;
    linear_vector(kMmse, mod, w, d, a.y + v * a.y_stride, kNr, kNt, n0, b, l);
  }
  if (stage) write_staged(a, lsh, bsh, row, pv, v0);
}

template <bool kMmse, int kNr, int kNt>
void launch_fused(const LinearArgs& a, unsigned grid, int threads, std::size_t sb, int stage,
                  cudaStream_t stream) {
  switch (a.mod) {
    case Modulation::bpsk:
      fused_kernel<kMmse, kNr, kNt, 1><<<grid, threads, sb, stream>>>(a, stage);
      break;
    case Modulation::qpsk:
      fused_kernel<kMmse, kNr, kNt, 2><<<grid, threads, sb, stream>>>(a, stage);
      break;
    case Modulation::qam16:
      fused_kernel<kMmse, kNr, kNt, 4><<<grid, threads, sb, stream>>>(a, stage);
      break;
    case Modulation::qam64:
      fused_kernel<kMmse, kNr, kNt, 6><<<grid, threads, sb, stream>>>(a, stage);
      break;
    case Modulation::qam256:
      fused_kernel<kMmse, kNr, kNt, 8><<<grid, threads, sb, stream>>>(a, stage);
      break;
  }
}

// The fused kernel where the shape is compiled (2x2 and 4x4); false otherwise.
bool try_fused(const LinearArgs& a, cudaStream_t stream) {
  if (a.vpc != 1 || a.slot_per_vector || a.nr != a.nt || (a.nt != 2 && a.nt != 4)) return false;
  const int threads = 128;
  const int pv = a.nt * bits_per_symbol(a.mod);
  const std::size_t stage_bytes = std::size_t(threads) * (pv + 1) * (sizeof(float) + 1);
  const int stage = stage_bytes <= 48 * 1024 ? 1 : 0;
  const std::size_t sb = stage ? stage_bytes : 0;
  const unsigned grid = unsigned((a.vectors + threads - 1) / threads);
  if (a.nt == 2) {
    if (a.mmse)
      launch_fused<true, 2, 2>(a, grid, threads, sb, stage, stream);
    else
      launch_fused<false, 2, 2>(a, grid, threads, sb, stage, stream);
  } else {
    if (a.mmse)
      launch_fused<true, 4, 4>(a, grid, threads, sb, stage, stream);
    else
      launch_fused<false, 4, 4>(a, grid, threads, sb, stage, stream);
  }
  MIMORX_CUDA_CHECK_LAUNCH();
  return true;
}

}  // namespace

void linear_run_cuda(const LinearArgs& a, int device, void* stream_handle) {
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  cudaStream_t stream = mimorx::detail::as_stream(stream_handle);
  if (try_fused(a, stream)) return;
  // Cached: host work between a caller's timing events and the launch counts as GPU time.
  static std::atomic<int> cache_optin[64], cache_sms[64];
  int optin = 0, sms = 0;
  if (device >= 0 && device < 64) {
    optin = cache_optin[device].load(std::memory_order_relaxed);
    sms = cache_sms[device].load(std::memory_order_relaxed);
  }
  if (optin == 0 || sms == 0) {
    MIMORX_CUDA_CHECK(
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    MIMORX_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    if (device >= 0 && device < 64) {
      cache_optin[device].store(optin, std::memory_order_relaxed);
      cache_sms[device].store(sms, std::memory_order_relaxed);
    }
  }
  const std::size_t per_thread = std::size_t(linear_work_cf32(a.mmse, a.nr, a.nt)) * sizeof(cf32) +
                                 std::size_t(a.nt) * (sizeof(float) + sizeof(int));
  int threads = int(std::min<std::size_t>(128, std::size_t(optin) / per_thread));
  if (threads < 1) {
    throw Unsupported("LinearPlan: " + std::to_string(a.nr) + "x" + std::to_string(a.nt) +
                      " needs " + std::to_string(per_thread) +
                      " bytes of shared memory per channel, more than this GPU's " +
                      std::to_string(optin));
  }
  const std::int64_t items = a.slot_per_vector ? a.vectors : a.channels;
  // Spread small batches over all SMs rather than filling a few blocks.
  while (threads > 32 && (items + threads - 1) / threads < 2 * sms) threads /= 2;
  if (threads >= 32) threads -= threads % 32;
  const std::size_t bytes = per_thread * std::size_t(threads);
  if (bytes > 48 * 1024) {
    MIMORX_CUDA_CHECK(cudaFuncSetAttribute(
        prepare_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  }
  prepare_kernel<<<unsigned((items + threads - 1) / threads), unsigned(threads), bytes, stream>>>(
      a);
  MIMORX_CUDA_CHECK_LAUNCH();
  const int dt = 256;
  const int pv = a.nt * bits_per_symbol(a.mod);
  const std::size_t stage_bytes = std::size_t(dt) * (pv + 1) * (sizeof(float) + 1);
  const int stage = stage_bytes <= 48 * 1024 ? 1 : 0;
  const unsigned grid = unsigned((a.vectors + dt - 1) / dt);
  const std::size_t sb = stage ? stage_bytes : 0;
  switch (a.mod) {
    case Modulation::bpsk:
      detect_kernel<1><<<grid, dt, sb, stream>>>(a, stage);
      break;
    case Modulation::qpsk:
      detect_kernel<2><<<grid, dt, sb, stream>>>(a, stage);
      break;
    case Modulation::qam16:
      detect_kernel<4><<<grid, dt, sb, stream>>>(a, stage);
      break;
    case Modulation::qam64:
      detect_kernel<6><<<grid, dt, sb, stream>>>(a, stage);
      break;
    case Modulation::qam256:
      detect_kernel<8><<<grid, dt, sb, stream>>>(a, stage);
      break;
  }
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace mimorx::detect::detail
